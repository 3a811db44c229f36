// SPDX-License-Identifier: BSD-2-Clause
// The virtio-mmio transport on real /dev/kvm: a guest's QueueNotify stores
// reach the queue handler through the ioeventfd with no MMIO exit (or, in
// notify=trap mode, through exits), and the device's interrupts reach the
// guest through the irqfd, directly or relayed. Architecture-neutral: runs
// here on x86-64 and on KVM/ARM in the nested arm64 platform.
//
// The transport sits at TestMachine::kTestDeviceBase, so the store-loop
// guest's target (base + 0x50) is its QueueNotify; the test plays the
// driver's register accesses itself, as Linux's virtio_mmio would.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "../guests/test_machine.h"
#include "../virtio/driver_ring.h"
#include "../virtio/echo_device.h"
#include "../virtio/mmio_driver.h"
#include "kvm_fixture.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/irqfd.h"
#include "kvmmio/virtio/notify_fd_source.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "../virtio/wait_limit.h"

namespace kvmmio::test {
namespace {

using namespace std::chrono_literals;
using virtio::IrqMode;
using virtio::NotifyMode;
using virtio::TransportOptions;
using virtio::test::Buffer;
using virtio::test::DriverRing;
using virtio::test::EchoDevice;
using virtio::test::MmioDriver;

constexpr uint32_t kQueueSize = 64;
constexpr uint32_t kChains = 8;
constexpr uint32_t kStores = 100;
constexpr uint32_t kGsi = 5;

// A virtio-mmio device in a TestMachine, wired the way the VMM wires one:
// ioeventfds from KVM polled on an EventLoop, the interrupt an irqfd (or a
// plain eventfd where the test does not need the guest to take it).
struct VirtioMachine {
  struct Config {
    TransportOptions options;
    uint32_t backend_queues = 0;
    bool irqfd = false;
  };

  VirtioMachine(Kvm& kvm, Config config)
      : machine(kvm),
        irqfd(config.irqfd ? std::make_unique<IrqFd>(machine.vm(), kGsi) : nullptr),
        notify_fds(machine.vm()),
        device(machine.vm().memory(),
               {.queues = 1, .max_size = kQueueSize, .backend_queues = config.backend_queues}),
        transport(device,
                  {.memory = machine.vm().memory(),
                   .irq = irqfd ? irqfd->event() : plain_irq,
                   .base = TestMachine::kTestDeviceBase,
                   .notify_fds = &notify_fds,
                   .loop = &loop,
                   .name = "kvm-virtio-test"},
                  config.options),
        driver(transport) {
    machine.device().forward_registers_to(&transport);
  }
  ~VirtioMachine() { machine.device().forward_registers_to(nullptr); }

  static uint64_t ring_gpa() { return TestMachine::kRamBase + 0x40000; }
  static uint64_t buffers_gpa() { return TestMachine::kRamBase + 0x60000; }

  // Linux's probe and set-up of queue 0 (rings zeroed first), DRIVER_OK.
  DriverRing bring_up() {
    DriverRing ring(machine.vm().memory(), DriverRing::linux_layout(ring_gpa(), kQueueSize));
    EXPECT_TRUE(driver.probe());
    EXPECT_TRUE(driver.initialize(~uint64_t{0}));
    EXPECT_TRUE(driver.setup_queue(0, ring_gpa(), kQueueSize));
    driver.driver_ok();
    return ring;
  }
  void add_chains(DriverRing& ring, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
      const Buffer chain[] = {{buffers_gpa() + 64 * i, 4, false}, {buffers_gpa() + 64 * i + 32, 4, true}};
      ring.add(chain);
    }
    ring.publish();
  }
  // What a backend (vhost) does to interrupt: write the call fd it was given.
  void backend_interrupts() {
    const uint64_t one = 1;
    ASSERT_EQ(::write(device.activated_queues().at(0).interrupt_fd, &one, sizeof(one)), 8);
  }

  TestMachine machine;
  EventFd plain_irq;
  std::unique_ptr<IrqFd> irqfd;
  EventLoop loop;
  virtio::IoEventFdSource notify_fds;
  EchoDevice device;
  virtio::MmioTransport transport;
  MmioDriver driver;
};

class VirtioMmioOnKvm : public KvmTest, public ::testing::WithParamInterface<uint32_t> {
 protected:
  VirtioMachine::Config config(NotifyMode notify, IrqMode irq = IrqMode::kIrqFd) const {
    // regs=trap: the transport is built without a KvmMmioSlot, so nothing
    // maps its mirror (kvm_mmio_slot_kvm_test.cc has the mirror).
    return {.options = {.version = GetParam(), .notify = notify, .irq = irq, .regs = virtio::RegsMode::kTrap}};
  }
};

TEST_P(VirtioMmioOnKvm, GuestQueueNotifyRunsTheQueueHandlerThroughTheIoEventFdWithoutExits) {
  VirtioMachine v(*kvm, config(NotifyMode::kIoEventFd));
  DriverRing ring = v.bring_up();
  v.add_chains(ring, kChains);
  v.machine.load_store_loop(/*value=*/0, kStores);  // queue 0's index, to QueueNotify
  const Report r = v.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  ASSERT_TRUE(v.device.wait_for_chains(kChains, test::kWaitLimitMs)) << v.device.chains() << " chains";
  EXPECT_EQ(ring.used_idx(), kChains);
  EXPECT_EQ(v.machine.notify_exits(), 0u);  // no QueueNotify store left the guest
  EXPECT_EQ(v.transport.counters().notifies_trapped.load(), 0u);
  EXPECT_GE(v.transport.counters().notifies_polled.load(), 1u);
  EXPECT_LE(v.transport.counters().notifies_polled.load(), kStores);
}

TEST_P(VirtioMmioOnKvm, NotifyTrapModeHandlesEveryStoreAsAnExit) {
  VirtioMachine v(*kvm, config(NotifyMode::kTrap));
  DriverRing ring = v.bring_up();
  v.add_chains(ring, kChains);
  constexpr uint32_t kTrappedStores = 20;
  v.machine.load_store_loop(/*value=*/0, kTrappedStores);
  ASSERT_EQ(v.machine.run_until_report().kind, Report::Kind::kDone);
  EXPECT_EQ(v.device.chains(), kChains);  // handled on the vCPU thread, synchronously
  EXPECT_EQ(ring.used_idx(), kChains);
  EXPECT_EQ(v.machine.notify_exits(), kTrappedStores);
  EXPECT_EQ(v.transport.counters().notifies_trapped.load(), kTrappedStores);
  EXPECT_EQ(v.transport.counters().notifies_polled.load(), 0u);
}

TEST_P(VirtioMmioOnKvm, StoresOfAnotherQueueIndexAreNotSwallowed) {
  // The ioeventfd matches queue 0's index only: stores of 1 (a queue this
  // device does not have) exit, and each is a guest error.
  VirtioMachine v(*kvm, config(NotifyMode::kIoEventFd));
  v.bring_up();
  v.machine.load_store_loop(/*value=*/1, 10);
  ASSERT_EQ(v.machine.run_until_report().kind, Report::Kind::kDone);
  EXPECT_EQ(v.machine.notify_exits(), 10u);
  EXPECT_EQ(v.transport.counters().notifies_trapped.load(), 10u);
  EXPECT_EQ(v.transport.counters().guest_errors.load(), 10u);
}

TEST_P(VirtioMmioOnKvm, UsedBufferInterruptReachesTheGuestThroughTheIrqFd) {
  VirtioMachine::Config c = config(NotifyMode::kTrap);
  c.irqfd = true;
  VirtioMachine v(*kvm, c);
  DriverRing ring = v.bring_up();
  v.machine.load_irq_guest(kGsi);
  ASSERT_EQ(v.machine.run_until_report().kind, Report::Kind::kReady);
  v.add_chains(ring, 1);
  v.driver.notify(0);  // the device uses the buffer and interrupts
  ASSERT_EQ(ring.used_idx(), 1u);
  const Report r = v.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kIrq) << to_string(r.kind);
  EXPECT_EQ(r.value, TestMachine::expected_irq_report(kGsi));
  EXPECT_EQ(v.driver.interrupt(), virtio::interrupt::kUsedBuffer);  // the guest's handler
  EXPECT_EQ(v.driver.read(virtio::reg::kInterruptStatus), 0u);
  EXPECT_EQ(v.transport.counters().interrupts_injected.load(), 1u);
}

TEST_P(VirtioMmioOnKvm, BackendInterruptsBypassTheVmmInIrqFdMode) {
  // In irq=irqfd mode the call fd a backend gets is the irqfd itself.
  VirtioMachine::Config c = config(NotifyMode::kIoEventFd, IrqMode::kIrqFd);
  c.irqfd = true;
  c.backend_queues = 1;
  VirtioMachine v(*kvm, c);
  v.bring_up();
  ASSERT_EQ(v.device.activated_queues().size(), 1u);
  EXPECT_EQ(v.device.activated_queues()[0].interrupt_fd, v.irqfd->fd());
  v.machine.load_irq_guest(kGsi);
  ASSERT_EQ(v.machine.run_until_report().kind, Report::Kind::kReady);
  v.backend_interrupts();
  const Report r = v.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kIrq) << to_string(r.kind);
  // The guest's handler finds the used-buffer bit although the VMM never
  // saw this interrupt, and the VMM did not wake up for it.
  EXPECT_EQ(v.driver.interrupt(), virtio::interrupt::kUsedBuffer);
  EXPECT_EQ(v.transport.counters().interrupts_injected.load(), 0u);
  EXPECT_EQ(v.transport.counters().interrupts_relayed.load(), 0u);
  EXPECT_EQ(v.loop.dispatches(), 0u);
}

TEST_P(VirtioMmioOnKvm, BackendInterruptsAreRelayedInRelayMode) {
  VirtioMachine::Config c = config(NotifyMode::kIoEventFd, IrqMode::kRelay);
  c.irqfd = true;
  c.backend_queues = 1;
  VirtioMachine v(*kvm, c);
  v.bring_up();
  EXPECT_NE(v.device.activated_queues().at(0).interrupt_fd, v.irqfd->fd());
  v.machine.load_irq_guest(kGsi);
  ASSERT_EQ(v.machine.run_until_report().kind, Report::Kind::kReady);
  v.backend_interrupts();
  const Report r = v.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kIrq) << to_string(r.kind);
  EXPECT_EQ(r.value, TestMachine::expected_irq_report(kGsi));
  EXPECT_EQ(v.transport.counters().interrupts_relayed.load(), 1u);
  EXPECT_EQ(v.driver.interrupt(), virtio::interrupt::kUsedBuffer);
  EXPECT_EQ(v.driver.read(virtio::reg::kInterruptStatus), 0u);
}

INSTANTIATE_TEST_SUITE_P(Versions, VirtioMmioOnKvm,
                         ::testing::Values(virtio::kVersionLegacy, virtio::kVersionModern),
                         [](const auto& info) { return info.param == 1 ? "Legacy" : "Modern"; });

}  // namespace
}  // namespace kvmmio::test
