// SPDX-License-Identifier: BSD-2-Clause
// MmioBus: routes guest MMIO exits to the device that claimed the address.
//
// Claims are made at set-up, before any vCPU runs, and overlapping claims are
// refused; lookups afterwards are read-only and need no lock. An access that
// no device claims (or that straddles a device's end) is a guest error:
// counted, logged rate-limited, reads return zeros.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"

namespace kvmmio {

class KVMMIO_EXPORT MmioDevice {
 public:
  virtual ~MmioDevice() = default;
  // `offset` is relative to the claimed base; data.size() is 1, 2, 4 or 8.
  virtual void mmio_read(uint64_t offset, std::span<uint8_t> data) = 0;
  virtual void mmio_write(uint64_t offset, std::span<const uint8_t> data) = 0;
};

class KVMMIO_EXPORT MmioBus {
 public:
  // Claims [base, base + size) for `device`; std::invalid_argument when the
  // range is empty, wraps, or overlaps an existing claim.
  void claim(uint64_t base, uint64_t size, MmioDevice& device, std::string name);

  // Dispatch an access. Return false if no device claims the whole access.
  bool read(uint64_t addr, std::span<uint8_t> data);
  bool write(uint64_t addr, std::span<const uint8_t> data);

  uint64_t unclaimed_accesses() const { return errors_.count(); }

 private:
  struct Claim {
    uint64_t size;
    MmioDevice* device;
    std::string name;
  };
  const Claim* find(uint64_t addr, uint64_t len, uint64_t* base) const;

  std::map<uint64_t, Claim> claims_;  // keyed by base
  GuestErrorLog errors_{"mmio-bus"};
};

}  // namespace kvmmio
