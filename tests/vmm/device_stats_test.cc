// SPDX-License-Identifier: BSD-2-Clause
// Each device's --stats counters: the keys, in the order the JSON has
// always had them (scripts and the report parser read them), and values
// taken from the right places.
#include "vmm/device_stats.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvmmio::vmm {
namespace {

std::vector<std::string> keys(const Counters& c) {
  std::vector<std::string> k;
  for (const auto& [name, value] : c) k.push_back(name);
  return k;
}
uint64_t value(const Counters& c, const std::string& key) {
  for (const auto& [name, v] : c)
    if (name == key) return v;
  ADD_FAILURE() << "no " << key;
  return 0;
}

const std::vector<std::string> kVirtioKeys = {
    "guest_errors",     "notifies_trapped", "notifies_polled", "interrupts_injected",
    "interrupts_relayed", "config_interrupts", "needs_reset",   "register_reads",
    "mirror_updates",   "interrupt_acks_in_kernel", "transport_version", "notify_ioeventfd",
    "irq_relay",        "regs_mirror"};

TEST(DeviceStats, AVirtioSlotReportsItsTransportThenTheKernelsThenItsSettings) {
  virtio::TransportCounters t;
  t.guest_errors = 1;
  t.notifies_polled = 5;
  t.needs_reset = 2;
  t.register_reads = 9;
  SlotKernelCounters k;
  k.interrupt_acks_in_kernel = 11;
  virtio::TransportOptions o;
  o.version = virtio::kVersionLegacy;
  o.irq = virtio::IrqMode::kRelay;
  const Counters c = virtio_counters(t, k, slot_settings(o, virtio::NotifyMode::kTrap, /*regs_mirror=*/true));
  EXPECT_EQ(keys(c), kVirtioKeys);
  EXPECT_EQ(value(c, "guest_errors"), 1u);
  EXPECT_EQ(value(c, "notifies_polled"), 5u);
  EXPECT_EQ(value(c, "needs_reset"), 2u);
  EXPECT_EQ(value(c, "transport_version"), 1u);
  EXPECT_EQ(value(c, "notify_ioeventfd"), 0u);
  EXPECT_EQ(value(c, "irq_relay"), 1u);
  EXPECT_EQ(value(c, "register_reads"), 9u);
  EXPECT_EQ(value(c, "interrupt_acks_in_kernel"), 11u);
  EXPECT_EQ(value(c, "regs_mirror"), 1u);
  const Counters d = virtio_counters(t, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, false));
  EXPECT_EQ(value(d, "transport_version"), 2u);
  EXPECT_EQ(value(d, "notify_ioeventfd"), 1u);
  EXPECT_EQ(value(d, "irq_relay"), 0u);
  EXPECT_EQ(value(d, "regs_mirror"), 0u);
}

TEST(DeviceStats, VirtioNetAddsItsBackendAndCounters) {
  virtio::TransportCounters t;
  t.guest_errors = 1;
  net::NetCounters n;
  n.tx_packets = 7;
  n.activations = 3;
  Counters c = virtio_counters(t, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, false));
  add_net_counters(c, /*vhost=*/true, /*device_guest_errors=*/4, n);
  std::vector<std::string> want = kVirtioKeys;
  want.insert(want.end(), {"vhost", "tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "rx_dropped",
                           "rx_stalls", "tap_errors", "tap_down", "tap_up", "tap_removed",
                           "tap_reattached", "vhost_errors", "ctrl_commands", "budget_yields",
                           "activations"});
  EXPECT_EQ(keys(c), want);
  EXPECT_EQ(value(c, "vhost"), 1u);
  EXPECT_EQ(value(c, "guest_errors"), 5u) << "one guest_errors per device: the transport's and the device's";
  EXPECT_EQ(value(c, "tx_packets"), 7u);
  EXPECT_EQ(value(c, "activations"), 3u);
}

TEST(DeviceStats, VirtioConsoleAddsItsCountersAndItsOwnGuestErrors) {
  virtio::TransportCounters t;
  t.guest_errors = 2;
  console::ConsoleCounters n;
  n.rx_waits = 4;
  Counters c = virtio_counters(t, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, false));
  add_console_counters(c, /*device_guest_errors=*/3, n);
  std::vector<std::string> want = kVirtioKeys;
  want.insert(want.end(), {"tx_bytes", "rx_bytes", "tx_stalls", "rx_waits", "output_dropped",
                           "budget_yields", "activations"});
  EXPECT_EQ(keys(c), want);
  EXPECT_EQ(value(c, "guest_errors"), 5u) << "one guest_errors per device: the transport's and the device's";
  EXPECT_EQ(value(c, "rx_waits"), 4u);
}

TEST(DeviceStats, ThePl011ReportsItsSnapshot) {
  console::Pl011::Counters p;
  p.tx_bytes = 163;
  p.guest_errors = 1;
  const Counters c = pl011_counters(p);
  EXPECT_EQ(keys(c), (std::vector<std::string>{"tx_bytes", "rx_bytes", "interrupts", "guest_errors"}));
  EXPECT_EQ(value(c, "tx_bytes"), 163u);
  EXPECT_EQ(value(c, "guest_errors"), 1u);
}

TEST(DeviceStats, VcpuExitsKeepTheirOrder) {
  VcpuExitCounts e;
  e.hlt = 2;
  e.unknown = 1;
  const VcpuStats s = vcpu_stats(0, e);
  EXPECT_EQ(keys(s.exits), (std::vector<std::string>{"mmio", "io", "hlt", "system_event", "interrupted",
                                                      "internal_error", "fail_entry", "unknown"}));
  EXPECT_EQ(s.total_exits, 3u);
}

}  // namespace
}  // namespace kvmmio::vmm
