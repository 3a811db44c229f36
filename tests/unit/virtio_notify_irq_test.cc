// SPDX-License-Identifier: BSD-2-Clause
// Notifies and interrupts without KVM: queue notifies through (fake)
// ioeventfds polled by the EventLoop, notify fds handed to a backend, the trap
// path, and InterruptStatus in irq=irqfd (bypass) and irq=relay modes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "../virtio/driver_ring.h"
#include "../virtio/harness.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "../virtio/wait_limit.h"

namespace kvmmio::virtio {
namespace {

using namespace std::chrono_literals;
using test::Buffer;
using test::DriverRing;
using test::eventually;
using H = test::TransportHarness;

H::Config with_ioeventfds(uint32_t backend_queues = 0, IrqMode irq = IrqMode::kIrqFd) {
  H::Config c;
  c.options.notify = NotifyMode::kIoEventFd;
  c.options.irq = irq;
  c.ioeventfds = true;
  c.device.backend_queues = backend_queues;
  return c;
}

void add_request(DriverRing& ring) {
  const Buffer chain[] = {{H::kBuffers, 4, false}, {H::kBuffers + 0x100, 4, true}};
  ring.add(chain);
  ring.publish();
}

// Each queue's ioeventfd is assigned once, as the transport is built, and
// stays until it goes: QueueReady, QueueReset and reset assign and remove
// nothing (no KVM_IOEVENTFD per guest write).
TEST(QueueNotifies, EachQueueGetsItsIoEventFdOnceForTheTransportsLifetime) {
  H h(with_ioeventfds());
  EXPECT_EQ(h.transport->notify_mode(), NotifyMode::kIoEventFd);
  ASSERT_EQ(h.notify_fds.live(), 2u);  // before any queue is set up
  ASSERT_TRUE(h.notify_fds.assigned(0));
  ASSERT_TRUE(h.notify_fds.assigned(1));
  EXPECT_EQ(h.notify_fds.assigned(0)->address, H::kBase + reg::kQueueNotify);
  EXPECT_EQ(h.notify_fds.assigned(1)->address, H::kBase + reg::kQueueNotify);
  EXPECT_EQ(h.transport->notify_address(), H::kBase + 0x50);
  const int fd0 = h.notify_fds.assigned(0)->fd, fd1 = h.notify_fds.assigned(1)->fd;
  h.bring_up();
  ASSERT_TRUE(h.driver->del_queue(1));  // QueueReady = 0
  ASSERT_TRUE(h.driver->setup_queue(1, H::kRing1, 64));
  h.driver->write(reg::kQueueSel, 0);
  h.driver->write(reg::kQueueReset, 1);  // VIRTIO_F_RING_RESET
  h.driver->reset();
  h.bring_up();
  EXPECT_EQ(h.notify_fds.attaches(), 2u);
  EXPECT_EQ(h.notify_fds.assigned(0)->fd, fd0);
  EXPECT_EQ(h.notify_fds.assigned(1)->fd, fd1);
  h.transport.reset();  // deassigned with the transport
  EXPECT_EQ(h.notify_fds.live(), 0u);
}

TEST(QueueNotifies, APolledNotifyRunsTheQueueHandlerOnTheEventLoop) {
  H h(with_ioeventfds());
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  h.bring_up();
  add_request(ring);
  ASSERT_TRUE(h.notify_fds.guest_notify(0));  // the guest's store, swallowed by KVM
  ASSERT_TRUE(h.device->wait_for_chains(1, ::kvmmio::test::kWaitLimitMs));
  EXPECT_TRUE(eventually([&] { return ring.used_idx() == 1; }));
  EXPECT_GE(h.counters().notifies_polled.load(), 1u);
  EXPECT_EQ(h.counters().notifies_trapped.load(), 0u);
}

TEST(QueueNotifies, TrappedNotifiesStillWorkBesideTheIoEventFd) {
  H h(with_ioeventfds());
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  h.bring_up();
  add_request(ring);
  h.driver->notify(0);  // arrived as an MMIO exit anyway
  EXPECT_EQ(ring.used_idx(), 1u);
  EXPECT_EQ(h.counters().notifies_trapped.load(), 1u);
}

TEST(QueueNotifies, ANotifyOfAStoppedQueueIsDrainedAndGoesNowhere) {
  H h(with_ioeventfds());
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  h.bring_up();
  const int fd = h.notify_fds.assigned(0)->fd;
  ASSERT_TRUE(h.driver->del_queue(0));
  add_request(ring);
  const uint64_t notifies_before = h.device->notifies(0);
  ASSERT_TRUE(h.notify_fds.guest_notify(0));  // still assigned: KVM takes the store
  h.loop->flush();
  EXPECT_EQ(ring.used_idx(), 0u);
  EXPECT_EQ(h.device->notifies(0), notifies_before);
  EXPECT_EQ(h.counters().notifies_polled.load(), 1u);
  // Drained: nothing is left to wake the VMM again.
  uint64_t count = 0;
  EXPECT_EQ(::read(fd, &count, sizeof(count)), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST(QueueNotifies, ANotifyBeforeTheQueueIsSetUpIsIgnoredAndDriverOkCatchesUp) {
  H h(with_ioeventfds());
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  ASSERT_TRUE(h.notify_fds.guest_notify(0));  // a store before probe
  h.loop->flush();
  EXPECT_EQ(h.counters().notifies_polled.load(), 1u);
  EXPECT_EQ(h.device->notifies(0), 0u);
  ASSERT_TRUE(h.driver->probe());
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
  add_request(ring);
  ASSERT_TRUE(h.notify_fds.guest_notify(0));  // live, but before DRIVER_OK
  h.loop->flush();
  EXPECT_EQ(h.device->notifies(0), 0u);
  h.driver->driver_ok();  // the notify after activation finds the request
  EXPECT_EQ(ring.used_idx(), 1u);
}

TEST(QueueNotifies, TrapModeAssignsNoIoEventFds) {
  H::Config c = with_ioeventfds();
  c.options.notify = NotifyMode::kTrap;
  H h(c);
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  h.bring_up();
  EXPECT_EQ(h.transport->notify_mode(), NotifyMode::kTrap);
  EXPECT_EQ(h.notify_fds.attaches(), 0u);
  add_request(ring);
  h.driver->notify(0);
  EXPECT_EQ(ring.used_idx(), 1u);
}

TEST(QueueNotifies, FallsBackToTrappingWhenAnIoEventFdCannotBeHad) {
  H::Config c = with_ioeventfds();
  c.ioeventfds_fail = true;
  testing::internal::CaptureStderr();
  H h(c);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("2 of 2 queues have no ioeventfd"), std::string::npos) << log;
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  h.bring_up();
  EXPECT_EQ(h.notify_fds.live(), 0u);
  add_request(ring);
  h.driver->notify(0);
  EXPECT_EQ(ring.used_idx(), 1u);
}

TEST(QueueNotifies, WithoutNotifyFdSourceTheTransportTraps) {
  H::Config c;
  c.options.notify = NotifyMode::kIoEventFd;  // asked for, but nothing wired
  H h(c);
  EXPECT_EQ(h.transport->notify_mode(), NotifyMode::kTrap);
}

TEST(QueueNotifies, QueueNotifyForAQueueThatDoesNotExistIsAGuestError) {
  H h({});
  h.bring_up();
  h.driver->notify(7);
  EXPECT_EQ(h.counters().guest_errors.load(), 1u);
  h.driver->write(reg::kQueueNotify, 0xffffffff);
  EXPECT_EQ(h.counters().guest_errors.load(), 2u);
}

// --- backend-owned queues (vhost) -------------------------------------------

TEST(BackendQueues, TheNotifyFdIsHandedOverAndNotPolled) {
  H h(with_ioeventfds(/*backend_queues=*/0b10));
  // A kick before the queue is live waits in the fd: the backend gets it
  // as one spurious kick when it starts, and the VMM never reads it.
  ASSERT_TRUE(h.notify_fds.guest_notify(1));
  h.loop->flush();
  EXPECT_EQ(h.counters().notifies_polled.load(), 0u);
  h.bring_up();
  const auto queues = h.device->activated_queues();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_NE(queues[0].ring, nullptr);
  EXPECT_EQ(queues[0].notify_fd, -1);
  EXPECT_EQ(queues[1].ring, nullptr);
  ASSERT_TRUE(h.notify_fds.assigned(1));
  EXPECT_EQ(queues[1].notify_fd, h.notify_fds.assigned(1)->fd);  // vhost's kick fd = the ioeventfd
  EXPECT_EQ(queues[1].interrupt_fd, h.irq.fd());               // vhost's call = the irqfd
  ASSERT_TRUE(h.notify_fds.guest_notify(1));
  h.loop->flush();
  EXPECT_EQ(h.device->notifies(1), 0u);
  EXPECT_EQ(h.counters().notifies_polled.load(), 0u);
  // Both notifies are still there for the backend to read: the VMM did not steal them.
  uint64_t count = 0;
  EXPECT_EQ(::read(queues[1].notify_fd, &count, sizeof(count)), 8);
  EXPECT_EQ(count, 2u);
}

TEST(BackendQueues, TheSameNotifyFdAfterTheQueueStopsAndStartsAgain) {
  H h(with_ioeventfds(/*backend_queues=*/0b10));
  h.bring_up();
  const int kick = h.device->activated_queues().at(1).notify_fd;
  ASSERT_TRUE(h.driver->del_queue(1));
  EXPECT_EQ(h.device->queue_resets(), 1u);
  ASSERT_TRUE(h.driver->setup_queue(1, H::kRing1, 64));
  EXPECT_EQ(h.device->enables(), 1u);
  EXPECT_EQ(h.notify_fds.attaches(), 2u);
  EXPECT_EQ(h.notify_fds.assigned(1)->fd, kick);
}

TEST(BackendQueues, ATrappedNotifyIsForwardedToTheBackendsNotifyFd) {
  H::Config c;
  c.device.backend_queues = 0b10;  // trap mode: the transport makes the notify fd
  H h(c);
  h.bring_up();
  const int notify_fd = h.device->activated_queues().at(1).notify_fd;
  ASSERT_GE(notify_fd, 0);
  h.driver->reset();
  h.bring_up();
  EXPECT_EQ(h.device->activated_queues().at(1).notify_fd, notify_fd) << "made once, kept across resets";
  h.driver->notify(1);
  uint64_t count = 0;
  EXPECT_EQ(::read(notify_fd, &count, sizeof(count)), 8);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(h.device->notifies(1), 0u);
}

// --- InterruptStatus ------------------------------------------------------------

TEST(InterruptStatus, PreciseWhenOnlyTheVmmSignals) {
  H h(with_ioeventfds());
  DriverRing ring(h.memory, DriverRing::linux_layout(H::kRing0, 256));
  h.bring_up();
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
  add_request(ring);
  h.driver->notify(0);
  EXPECT_EQ(h.reg(reg::kInterruptStatus), interrupt::kUsedBuffer);
  EXPECT_EQ(h.interrupts(), 1u);
  h.driver->write(reg::kInterruptAck, interrupt::kUsedBuffer);
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
}

TEST(InterruptStatus, ReportsUsedBuffersWhileABackendBypassesTheVmm) {
  // irq=irqfd with a backend queue: vhost writes the irqfd itself, so the
  // used-buffer bit must read as set whenever the device is live.
  H h(with_ioeventfds(/*backend_queues=*/0b10));
  ASSERT_TRUE(h.driver->probe());
  ASSERT_TRUE(h.driver->initialize(~uint64_t{0}));
  ASSERT_TRUE(h.driver->setup_queue(0, H::kRing0));
  ASSERT_TRUE(h.driver->setup_queue(1, H::kRing1, 64));
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);  // not before DRIVER_OK
  h.driver->driver_ok();
  // The "backend" interrupts: the VMM never sees it...
  const uint64_t one = 1;
  ASSERT_EQ(::write(h.device->activated_queues().at(1).interrupt_fd, &one, sizeof(one)), 8);
  // ...and the guest's handler still finds the bit.
  EXPECT_EQ(h.driver->interrupt(), interrupt::kUsedBuffer);
  EXPECT_EQ(h.reg(reg::kInterruptStatus), interrupt::kUsedBuffer);  // ACK cannot clear it
  EXPECT_EQ(h.counters().interrupts_injected.load(), 0u);
  // Config changes still set bit 1, and ACK clears that one.
  h.device->change_config(1, 7);
  EXPECT_EQ(h.reg(reg::kInterruptStatus), interrupt::kUsedBuffer | interrupt::kConfigChange);
  h.driver->write(reg::kInterruptAck, interrupt::kConfigChange);
  EXPECT_EQ(h.reg(reg::kInterruptStatus), interrupt::kUsedBuffer);
  // Gone with the backend's queue...
  ASSERT_TRUE(h.driver->del_queue(1));
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
  // ...and with a reset.
  ASSERT_TRUE(h.driver->setup_queue(1, H::kRing1, 64));
  EXPECT_EQ(h.reg(reg::kInterruptStatus), interrupt::kUsedBuffer);
  h.driver->reset();
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
}

TEST(InterruptStatus, RelayModeForwardsTheBackendsCallAndSetsTheBitPrecisely) {
  H h(with_ioeventfds(/*backend_queues=*/0b10, IrqMode::kRelay));
  h.bring_up();
  const int call = h.device->activated_queues().at(1).interrupt_fd;
  EXPECT_EQ(call, h.transport->interrupt_fd());
  EXPECT_NE(call, h.irq.fd());  // the backend does not reach the irqfd
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);  // no bypass: precise
  const uint64_t one = 1;
  ASSERT_EQ(::write(call, &one, sizeof(one)), 8);
  ASSERT_TRUE(h.irq.wait_readable(5000));  // the relay raised the irqfd
  EXPECT_EQ(h.interrupts(), 1u);
  EXPECT_EQ(h.counters().interrupts_relayed.load(), 1u);
  EXPECT_EQ(h.counters().interrupts_injected.load(), 0u);
  EXPECT_EQ(h.driver->interrupt(), interrupt::kUsedBuffer);
  EXPECT_EQ(h.reg(reg::kInterruptStatus), 0u);
}

TEST(InterruptStatus, RelayModeNeedsAnEventLoop) {
  GuestMemory memory;
  memory.add_ram(H::kRam, H::kRamSize);
  test::EchoDevice device(memory);
  EventFd irq;
  TransportOptions options;
  options.irq = IrqMode::kRelay;
  EXPECT_THROW(MmioTransport(device, TransportEnv{.memory = memory, .irq = irq}, options),
               std::invalid_argument);
}

}  // namespace
}  // namespace kvmmio::virtio
