// SPDX-License-Identifier: BSD-2-Clause
// Each device's counters for --stats, in the order the JSON keeps, read
// from the components' counter tables (kvmmio/base/counters.h) and from
// the settings table below: what a virtio slot reports beside its
// counters (a virtio-net device's are in kvmmio/net/virtio_net.h). The key lists are written nowhere else;
// docs/usage.md's tables come from the same tables (vmm/cli/counter_docs.h).
#pragma once

#include <cstdint>

#include "kvmmio/base/counters.h"
#include "kvmmio/block/virtio_blk.h"
#include "kvmmio/console/pl011.h"
#include "kvmmio/console/virtio_console.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "vmm/stats/stats.h"

namespace kvmmio::vmm {

#define KVMMIO_SLOT_SETTINGS(C)                                                                  \
  C(transport_version, "the register layout: 1 (legacy) or 2 (modern)")                        \
  C(notify_ioeventfd, "1: queue notifies arrive through ioeventfds; 0: they trap (notify=trap, " \
                      "or no ioeventfd support)")                                                \
  C(irq_relay, "1: irq=relay, the VMM forwards the backend's interrupts")                        \
  C(regs_mirror, "1: regs=mirror, register reads are served by the read-only mirror page "     \
                 "without an exit; 0: they trap (regs=trap, or no KVM_CAP_READONLY_MEM)")
struct SlotSettings {
  KVMMIO_SLOT_SETTINGS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_SLOT_SETTINGS)
};

// What KVM did for a slot without the VMM, as its eventfds counted.
#define KVMMIO_SLOT_KERNEL_COUNTERS(C)                                                           \
  C(interrupt_acks_in_kernel, "regs=mirror: InterruptACK writes of the used-buffer bit that an " \
                              "ioeventfd took in the kernel, with no exit")
struct SlotKernelCounters {
  KVMMIO_SLOT_KERNEL_COUNTERS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_SLOT_KERNEL_COUNTERS)
};

// Appends a table's values (counters or settings) in table order.
template <typename Table>
void append_counters(Counters& out, const Table& table) {
  table.each([&out](const char* name, uint64_t value) { out.emplace_back(name, value); });
}

SlotSettings slot_settings(const virtio::TransportOptions& options, virtio::NotifyMode notify,
                           bool regs_mirror);
// A virtio-mmio slot: its transport's counters, the kernel's, its
// settings, then its device's own (VirtioDevice::visit_counters(): for
// virtio-net its NetSettings and NetCounters, for virtio-console its
// ConsoleCounters). The guest errors the device found itself count in the
// transport's guest_errors: one guest_errors per device.
Counters virtio_counters(const virtio::TransportCounters& transport, const SlotKernelCounters& kernel,
                         const SlotSettings& settings, const virtio::VirtioDevice& device);
Counters pl011_counters(const console::Pl011::Counters& counters);

}  // namespace kvmmio::vmm
