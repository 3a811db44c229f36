// SPDX-License-Identifier: BSD-2-Clause
// Where the kernel, the initrd and the device tree go in guest RAM, per
// Documentation/arm64/booting.rst:
//   - the Image at text_offset above a 2 MiB aligned base; kvmmio uses the
//     start of RAM (what flags bit 3 == 0 asks for, and fine when it is 1);
//   - the DTB 8-byte aligned, at most 2 MiB, not sharing a 2 MiB block with
//     anything needing other memory attributes: kvmmio gives it the last
//     whole 2 MiB block of the usable top of RAM;
//   - the initrd right below that block (page aligned), inside the 1 GiB
//     aligned, at most 32 GiB window that also holds the kernel, and never
//     overlapping the kernel's image_size.
// Pure arithmetic: usable by --dump-dtb and tests without a VM.
#pragma once

#include <cstdint>
#include <optional>

#include "vmm/boot/image_loader.h"

namespace kvmmio::vmm {

struct GuestRange {
  uint64_t start = 0;
  uint64_t end = 0;  // one past the last byte
  uint64_t size() const { return end - start; }
};

struct BootLayout {
  static constexpr uint64_t kDtbMaxSize = uint64_t{2} << 20;

  uint64_t kernel_base = 0;   // the 2 MiB aligned base
  uint64_t kernel_entry = 0;  // base + text_offset: the file is loaded and entered here
  uint64_t kernel_end = 0;    // entry + image_size: the kernel owns everything below
  std::optional<GuestRange> initrd;
  uint64_t dtb = 0;  // start of the DTB's 2 MiB block
};

// Throws UserError naming the --mem that would fit when the kernel, initrd
// and the DTB block do not fit in [ram_base, ram_base + ram_size).
BootLayout plan_boot(uint64_t ram_base, uint64_t ram_size, const ImageHeader& kernel,
                     std::optional<uint64_t> initrd_size);

}  // namespace kvmmio::vmm
