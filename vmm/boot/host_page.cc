// SPDX-License-Identifier: BSD-2-Clause
// The host page size check (host_page.h).
#include "vmm/boot/host_page.h"

#include <unistd.h>

#include <bit>
#include <string>

#include "kvmmio/base/error.h"
#include "vmm/boot/memory_map_arm64.h"

namespace kvmmio::vmm {

static_assert(layout::kRamAlign % layout::kVirtioMmioSlotStride == 0,
              "a host page that fits the slot stride must also divide the --mem step");
static_assert(layout::kRamBase % layout::kVirtioMmioSlotStride == 0);

uint64_t host_page_size() {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) throw_errno("sysconf(_SC_PAGESIZE)");
  return static_cast<uint64_t>(page);
}

void check_host_page(uint64_t page) {
  const std::string kib = std::to_string(page / 1024) + " KiB";
  if (!std::has_single_bit(page))
    throw UserError("this host's page size (" + std::to_string(page) + " bytes) is not a power of two; "
                    "kvmmio needs a Linux host with 4, 16 or 64 KiB pages");
  if (page > layout::kVirtioMmioSlotStride)
    throw UserError("this host's pages are " + kib + ", larger than the " +
                    std::to_string(layout::kVirtioMmioSlotStride / 1024) +
                    " KiB between kvmmio's virtio-mmio devices (each device's register mirror is "
                    "one host page of its own): run kvmmio on a host kernel with 4, 16 or 64 KiB pages");
}

}  // namespace kvmmio::vmm
