// SPDX-License-Identifier: BSD-2-Clause
// The host's page size against the guest memory map (memory_map_arm64.h).
// KVM memory slots start and end on host pages: guest RAM (--mem in 1 MiB
// steps from 0x4000_0000) and, with regs=mirror, one read-only host page at
// each virtio-mmio slot's base. Slots are 64 KiB apart, so the mirror of one
// device never covers the next one's registers on 4, 16 and 64 KiB page
// hosts; a larger host page would. (Guest pages are the guest's business:
// the Image header's text-offset rule and legacy virtio's 4096-byte
// GuestPageSize default are guest-side and stay.)
#pragma once

#include <cstdint>

namespace kvmmio::vmm {

// sysconf(_SC_PAGESIZE): the page size of this host's kernel.
uint64_t host_page_size();

// Throws UserError naming the limit when a host with pages of PAGE bytes
// cannot run this memory map: PAGE not a power of two, or larger than the
// virtio-mmio slot stride (which also bounds it below the 1 MiB --mem step).
void check_host_page(uint64_t page);

}  // namespace kvmmio::vmm
