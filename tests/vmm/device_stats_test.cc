// SPDX-License-Identifier: BSD-2-Clause
// Each device's --stats counters: the keys, in the order the JSON has
// always had them (scripts and the report parser read them), and values
// taken from the right places.
#include "vmm/stats/device_stats.h"

#include <gtest/gtest.h>

#include "tests/vmm/unwired_devices.h"

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

// A device with nothing of its own to report but guest errors.
struct PlainDevice : virtio::VirtioDevice {
  uint32_t device_id() const override { return 0x1234; }
  uint64_t device_features() const override { return 0; }
  uint32_t num_queues() const override { return 1; }
  uint16_t queue_max_size(uint32_t) const override { return 8; }
  bool activate(const virtio::DeviceActivation&) override { return true; }
  void reset() override {}
  uint64_t guest_errors() const override { return errors; }
  uint64_t errors = 0;
};

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
  const PlainDevice device;
  const Counters c =
      virtio_counters(t, k, slot_settings(o, virtio::NotifyMode::kTrap, /*regs_mirror=*/true), device);
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
  const Counters d = virtio_counters(t, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, false), device);
  EXPECT_EQ(value(d, "transport_version"), 2u);
  EXPECT_EQ(value(d, "notify_ioeventfd"), 1u);
  EXPECT_EQ(value(d, "irq_relay"), 0u);
  EXPECT_EQ(value(d, "regs_mirror"), 0u);
}

TEST(DeviceStats, TheDevicesOwnGuestErrorsCountInTheOneGuestErrorsKey) {
  virtio::TransportCounters t;
  t.guest_errors = 1;
  PlainDevice device;
  device.errors = 4;
  const Counters c = virtio_counters(t, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, false), device);
  EXPECT_EQ(keys(c), kVirtioKeys) << "a device's guest errors add no key of their own";
  EXPECT_EQ(value(c, "guest_errors"), 5u) << "one guest_errors per device: the transport's and the device's";
}

TEST(DeviceStats, VirtioNetAddsItsBackendAndCounters) {
  virtio::TransportCounters t;
  const test::UnwiredDevices devices;
  const Counters c =
      virtio_counters(t, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, false), devices.net);
  std::vector<std::string> want = kVirtioKeys;
  want.insert(want.end(), {"vhost", "poll_us", "tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "rx_dropped",
                           "rx_stalls", "tap_errors", "tap_down", "tap_up", "tap_removed",
                           "tap_reattached", "vhost_errors", "ctrl_commands", "budget_yields",
                           "activations"});
  EXPECT_EQ(keys(c), want);
  EXPECT_EQ(value(c, "vhost"), 0u);
  EXPECT_EQ(value(c, "poll_us"), 0u);
  EXPECT_EQ(value(c, "activations"), 0u);
}

TEST(DeviceStats, VirtioConsoleAddsItsCounters) {
  virtio::TransportCounters t;
  const test::UnwiredDevices devices;
  const Counters c =
      virtio_counters(t, {}, slot_settings({}, virtio::NotifyMode::kIoEventFd, false), devices.console);
  std::vector<std::string> want = kVirtioKeys;
  want.insert(want.end(), {"tx_bytes", "rx_bytes", "tx_stalls", "rx_waits", "output_dropped",
                           "budget_yields", "activations"});
  EXPECT_EQ(keys(c), want);
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
