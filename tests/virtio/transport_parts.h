// SPDX-License-Identifier: BSD-2-Clause
// PartsBench: one owner of the virtio-mmio transport (hw/virtio/mmio_parts.h)
// built alone, over real guest memory (memfd RAM, no KVM), an EchoDevice
// and the interrupt as a plain eventfd: the wiring (TransportContext) every
// part is given, and the recorders the tests stand in for the parts' other
// callers. The owners' tests use it (tests/unit/mmio_queue_set_test.cc,
// mmio_device_state_test.cc, mmio_mirror_publisher_test.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "echo_device.h"
#include "hw/virtio/mmio_context.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::virtio::test {

struct PartsBench {
  static constexpr uint64_t kRam = 0x40000000;
  static constexpr uint64_t kRamSize = 1 << 20;
  static constexpr uint64_t kRing0 = kRam + 0x10000;

  // Notifies and register reads trap: no KVM, no event loop.
  static constexpr TransportOptions kTrapOptions{
      .version = kVersionModern, .notify = NotifyMode::kTrap, .regs = RegsMode::kTrap};

  explicit PartsBench(TransportOptions options = kTrapOptions, EchoDevice::Options device_options = {}) {
    memory.add_ram(kRam, kRamSize);
    device = std::make_unique<EchoDevice>(memory, device_options);
    // irq=relay watches its eventfd on a loop.
    if (options.irq == IrqMode::kRelay) loop = std::make_unique<EventLoop>();
    ctx = std::make_unique<TransportContext>(
        *device, TransportEnv{.memory = memory, .irq = irq, .loop = loop.get(), .name = "parts-test"}, options);
  }

  // Interrupts raised since the last call (the irqfd's counter).
  uint64_t interrupts() { return irq.take().value_or(0); }

  GuestMemory memory;
  EventFd irq;
  std::unique_ptr<EventLoop> loop;
  std::unique_ptr<EchoDevice> device;
  std::unique_ptr<TransportContext> ctx;
};

// A QueueFaultSink that records what the rings report (the transport's own
// sink turns a fault into DEVICE_NEEDS_RESET).
struct RecordedFaults final : QueueFaultSink {
  void queue_fault(uint32_t queue_index, QueueError error) override { faults.push_back({queue_index, error}); }
  struct Fault {
    uint32_t queue;
    QueueError error;
  };
  std::vector<Fault> faults;
};

// A VirtioInterrupt that records the device's calls (the transport's own
// forwards them to DeviceState).
struct RecordedInterrupt final : VirtioInterrupt {
  void signal_used() override { ++used; }
  void signal_config_change() override { ++config_changes; }
  void needs_reset(const char* why) override { resets.emplace_back(why); }
  int used = 0, config_changes = 0;
  std::vector<std::string> resets;
};

}  // namespace kvmmio::virtio::test
