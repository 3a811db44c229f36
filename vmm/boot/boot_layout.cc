// SPDX-License-Identifier: BSD-2-Clause
// Placement of kernel, initrd and DTB in guest RAM (see boot_layout.h).
#include "vmm/boot/boot_layout.h"

#include <algorithm>
#include <stdexcept>

#include "kvmmio/base/error.h"

namespace kvmmio::vmm {
namespace {

constexpr uint64_t kKernelAlign = uint64_t{2} << 20;
// The initrd's size rounding: the guest's 4 KiB page (any arm64 kernel's
// smallest), not the host's; guest RAM itself is host-page sized (host_page.h).
constexpr uint64_t kPage = 4096;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kInitrdWindow = 32 * kGiB;

constexpr uint64_t align_down(uint64_t v, uint64_t a) { return v / a * a; }
constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string mib_ceil(uint64_t bytes) {
  return std::to_string(align_up(bytes, uint64_t{1} << 20) >> 20);
}

}  // namespace

BootLayout plan_boot(uint64_t ram_base, uint64_t ram_size, const ImageHeader& kernel,
                     std::optional<uint64_t> initrd_size) {
  if (ram_base % kKernelAlign != 0) throw std::invalid_argument("RAM base not 2 MiB aligned");
  BootLayout l;
  l.kernel_base = ram_base;
  l.kernel_entry = l.kernel_base + kernel.text_offset;
  l.kernel_end = l.kernel_entry + kernel.image_size;

  // The initrd must share a 1 GiB aligned window of at most 32 GiB with
  // the kernel; the DTB has no such limit, but keeping both below the same
  // top is simplest.
  const uint64_t window_end = align_down(l.kernel_base, kGiB) + kInitrdWindow;
  const uint64_t top = std::min(ram_base + ram_size, window_end);
  const uint64_t initrd_bytes = align_up(initrd_size.value_or(0), kPage);

  const uint64_t needed_end =
      align_up(l.kernel_end + initrd_bytes, kKernelAlign) + BootLayout::kDtbMaxSize;
  if (top < needed_end) {
    std::string what = "the kernel (image_size " + mib_ceil(kernel.image_size) + " MiB)";
    if (initrd_size) what += ", the initrd (" + mib_ceil(*initrd_size) + " MiB)";
    throw UserError(what + " and the device tree (a 2 MiB block) do not fit in --mem " +
                    mib_ceil(ram_size) + "M; give at least --mem " +
                    mib_ceil(needed_end - ram_base) +
                    "M (Linux needs more to run well; the default is 512M)");
  }
  l.dtb = align_down(top, kKernelAlign) - BootLayout::kDtbMaxSize;
  if (initrd_size) l.initrd = GuestRange{l.dtb - initrd_bytes, l.dtb - initrd_bytes + *initrd_size};
  return l;
}

}  // namespace kvmmio::vmm
