// SPDX-License-Identifier: BSD-2-Clause
// Each device's --stats counters from the counter tables (see the header).
#include "vmm/stats/device_stats.h"

namespace kvmmio::vmm {

SlotSettings slot_settings(const virtio::TransportOptions& options, virtio::NotifyMode notify,
                           bool regs_mirror) {
  SlotSettings s;
  s.transport_version = options.version;
  s.notify_ioeventfd = notify == virtio::NotifyMode::kIoEventFd;
  s.irq_relay = options.irq == virtio::IrqMode::kRelay;
  s.regs_mirror = regs_mirror;
  return s;
}

Counters virtio_counters(const virtio::TransportCounters& transport, const SlotKernelCounters& kernel,
                         const SlotSettings& settings, const virtio::VirtioDevice& device) {
  Counters c;
  transport.each_member([&](const char* name, const auto& member) {
    uint64_t value = counter_value(member);
    if (static_cast<const void*>(&member) == static_cast<const void*>(&transport.guest_errors))
      value += device.guest_errors();  // the member, not a key looked up by name
    c.emplace_back(name, value);
  });
  append_counters(c, kernel);
  append_counters(c, settings);
  device.visit_counters([&c](const char* name, uint64_t value) { c.emplace_back(name, value); });
  return c;
}

Counters pl011_counters(const console::Pl011::Counters& counters) {
  Counters c;
  append_counters(c, counters);
  return c;
}

}  // namespace kvmmio::vmm
