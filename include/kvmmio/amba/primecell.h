// SPDX-License-Identifier: BSD-2-Clause
// What every ARM PrimeCell model shares (the PL011, PL031 and PL061): the
// peripheral and PrimeCell ID registers at the top of its 4 KiB window,
// which Linux's AMBA bus reads before it binds a driver (the driver's
// amba_id matches PeriphID under a mask), and the guest error a write
// that no register takes is reported as.
#pragma once

#include <cstdint>
#include <optional>

#include "kvmmio/base/log.h"

namespace kvmmio::amba {

inline constexpr uint64_t kPeriphID0 = 0xfe0;  // ..0xfec: PeriphID0-3
inline constexpr uint64_t kCellID0 = 0xff0;    // ..0xffc: PCellID0-3
// PrimeCell ID 0xb105f00d, every PrimeCell's.
inline constexpr uint8_t kCellId[4] = {0x0d, 0xf0, 0x05, 0xb1};

// The ID register at `offset` (a word start) of a PrimeCell whose PeriphID
// bytes are `periph_id`: one byte in the low bits; nullopt at any other
// offset.
constexpr std::optional<uint32_t> id_register(uint64_t offset, const uint8_t (&periph_id)[4]) {
  if (offset >= kPeriphID0 && offset < kPeriphID0 + 16) return periph_id[(offset - kPeriphID0) / 4];
  if (offset >= kCellID0 && offset < kCellID0 + 16) return kCellId[(offset - kCellID0) / 4];
  return std::nullopt;
}

// A write to `offset` that no register takes: a read-only register
// (`read_only_register`), an ID register or a reserved offset.
inline void report_unwritable(GuestErrorLog& errors, uint64_t offset, bool read_only_register) {
  const auto at = static_cast<unsigned long long>(offset);
  if (read_only_register)
    errors.report("write of read-only register 0x%llx", at);
  else
    errors.report("write of %s offset 0x%llx", offset >= kPeriphID0 ? "read-only ID" : "reserved", at);
}

}  // namespace kvmmio::amba
