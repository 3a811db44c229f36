// SPDX-License-Identifier: BSD-2-Clause
// Each device's --stats counters from the counter tables (see the header).
#include "vmm/device_stats.h"

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
                         const SlotSettings& settings) {
  Counters c;
  append_counters(c, transport);
  append_counters(c, kernel);
  append_counters(c, settings);
  return c;
}

namespace {

void add_guest_errors(Counters& out, uint64_t device_guest_errors) {
  for (auto& [key, value] : out)
    if (key == "guest_errors") value += device_guest_errors;
}

}  // namespace

void add_net_counters(Counters& out, bool vhost, uint64_t device_guest_errors,
                      const net::NetCounters& counters) {
  add_guest_errors(out, device_guest_errors);
  NetSettings settings;
  settings.vhost = vhost;
  append_counters(out, settings);
  append_counters(out, counters);
}

void add_console_counters(Counters& out, uint64_t device_guest_errors,
                          const console::ConsoleCounters& counters) {
  add_guest_errors(out, device_guest_errors);
  append_counters(out, counters);
}

Counters pl011_counters(const console::Pl011::Counters& counters) {
  Counters c;
  append_counters(c, counters);
  return c;
}

}  // namespace kvmmio::vmm
