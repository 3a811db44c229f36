// SPDX-License-Identifier: BSD-2-Clause
// QueueSet alone (hw/virtio/mmio_queues.h): the queue registers through
// their typed setters, queues going live before and after activation, the
// hand-over of what DRIVER_OK decides, the bypass it reports, and reset.
// No other part of the transport exists here: the queue set calls none.
#include <gtest/gtest.h>

#include "hw/virtio/mmio_queues.h"
#include "kvmmio/virtio/queue_layout.h"
#include "../virtio/transport_parts.h"

namespace kvmmio::virtio::test {
namespace {

constexpr int kInterruptFd = 42;  // handed to backends, never used here

QueueLayout layout_at(uint64_t gpa, uint32_t size) {
  return QueueLayout{size, gpa, gpa + desc_table_bytes(size), gpa + 0x1000};
}

// The selected queue's modern registers written as a driver would.
void set_up(QueueSet& queues, const QueueLayout& l) {
  ASSERT_TRUE(queues.set_size(l.size));
  ASSERT_TRUE(queues.set_address(QueueAddress::kDesc, false, static_cast<uint32_t>(l.desc)));
  ASSERT_TRUE(queues.set_address(QueueAddress::kDesc, true, static_cast<uint32_t>(l.desc >> 32)));
  ASSERT_TRUE(queues.set_address(QueueAddress::kDriver, false, static_cast<uint32_t>(l.avail)));
  ASSERT_TRUE(queues.set_address(QueueAddress::kDriver, true, static_cast<uint32_t>(l.avail >> 32)));
  ASSERT_TRUE(queues.set_address(QueueAddress::kDevice, false, static_cast<uint32_t>(l.used)));
  ASSERT_TRUE(queues.set_address(QueueAddress::kDevice, true, static_cast<uint32_t>(l.used >> 32)));
}

// Queue `index` set up at `gpa` with `size` entries and made live.
void make_live(QueueSet& queues, uint32_t index, uint64_t gpa, uint32_t size) {
  queues.select(index);
  set_up(queues, layout_at(gpa, size));
  queues.go_live(queues.modern_layout());
}

// A queue set over a PartsBench's device, its rings' faults recorded.
struct Queues {
  explicit Queues(TransportOptions options = PartsBench::kTrapOptions, EchoDevice::Options device = {})
      : bench(options, device) {}
  PartsBench bench;
  RecordedFaults faults;
  QueueSet set{*bench.ctx, faults};
};

TEST(QueueSetOwner, SettersWriteTheSelectedQueueAndAreRefusedWhileItIsLive) {
  Queues q;
  QueueSet& queues = q.set;
  ASSERT_EQ(queues.size(), 2u);

  queues.select(1);
  const QueueLayout l = layout_at(PartsBench::kRing0, 64);
  set_up(queues, l);
  const QueueLayout back = queues.modern_layout();
  EXPECT_EQ(back.size, 64u);
  EXPECT_EQ(back.desc, l.desc);
  EXPECT_EQ(back.avail, l.avail);
  EXPECT_EQ(back.used, l.used);
  EXPECT_EQ(queues.selected()->max_size, 256);

  queues.go_live(l);
  ASSERT_TRUE(queues.selected()->ready);
  EXPECT_FALSE(queues.set_size(128));
  EXPECT_FALSE(queues.set_address(QueueAddress::kDesc, false, 0));
  EXPECT_FALSE(queues.set_align(8192));
  EXPECT_EQ(queues.modern_layout().size, 64u) << "a refused write changed the register";

  // A queue that does not exist takes nothing.
  queues.select(7);
  EXPECT_EQ(queues.selected(), nullptr);
  EXPECT_FALSE(queues.set_size(16));
  EXPECT_EQ(queues.modern_layout().size, 0u);

  // QueueReset's stop puts the registers back to their reset values.
  queues.select(1);
  queues.stop_selected(/*reset_registers=*/true);
  EXPECT_FALSE(queues.selected()->ready);
  EXPECT_EQ(queues.modern_layout().size, 256u) << "QueueNum resets to the maximum";
  EXPECT_EQ(queues.modern_layout().desc, 0u);
  EXPECT_TRUE(q.faults.faults.empty());
}

TEST(QueueSetOwner, ActivationHandsOverTheLiveQueuesAndLaterOnesReachTheDeviceAtOnce) {
  Queues q;
  QueueSet& queues = q.set;

  make_live(queues, 0, PartsBench::kRing0, 32);
  // Not active: the device hears nothing, a trapped notify goes nowhere.
  queues.notify_trapped(0);
  EXPECT_EQ(q.bench.device->notifies(0), 0u);
  EXPECT_EQ(q.bench.device->enables(), 0u);

  const std::vector<ActiveQueue> live = queues.start_live({{.event_idx = true}, kInterruptFd});
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].index, 0u);
  ASSERT_NE(live[0].ring, nullptr) << "a VMM-owned queue comes with its ring";
  queues.activated();
  EXPECT_EQ(q.bench.device->notifies(0), 1u) << "buffers made available before DRIVER_OK are looked at";
  queues.notify_trapped(0);
  EXPECT_EQ(q.bench.device->notifies(0), 2u);

  // Queue 1 goes live after DRIVER_OK: the device gets it at once.
  make_live(queues, 1, PartsBench::kRing0 + 0x4000, 16);
  EXPECT_EQ(q.bench.device->enables(), 1u);
  queues.stop_selected();
  EXPECT_EQ(q.bench.device->queue_resets(), 1u);

  // Once deactivated (the device reset), notifies stop reaching it.
  queues.deactivated();
  queues.notify_trapped(0);
  EXPECT_EQ(q.bench.device->notifies(0), 2u);
  EXPECT_EQ(q.bench.ctx->counters.notifies_trapped.load(), 3u);
}

TEST(QueueSetOwner, AnAbortedStartLeavesTheQueuesInactive) {
  Queues q;
  QueueSet& queues = q.set;
  make_live(queues, 0, PartsBench::kRing0, 32);
  (void)queues.start_live({{}, kInterruptFd});
  queues.abort_start();
  queues.notify_trapped(0);
  EXPECT_EQ(q.bench.device->notifies(0), 0u);
}

TEST(QueueSetOwner, ABackendOwnedLiveQueueIsABypassOnlyWhileActiveWithIrqfd) {
  Queues q({.version = kVersionModern, .notify = NotifyMode::kTrap, .irq = IrqMode::kIrqFd,
            .regs = RegsMode::kTrap},
           {.backend_queues = 0b01});
  QueueSet& queues = q.set;
  queues.attach_notify_fds();  // trapping: the backend's queue gets a plain kick eventfd
  make_live(queues, 0, PartsBench::kRing0, 32);
  EXPECT_FALSE(queues.backend_bypass()) << "not active yet";

  const std::vector<ActiveQueue> live = queues.start_live({{}, kInterruptFd});
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].ring, nullptr) << "the backend processes this ring";
  EXPECT_GE(live[0].notify_fd, 0);
  EXPECT_EQ(live[0].interrupt_fd, kInterruptFd);
  queues.activated();
  EXPECT_TRUE(queues.backend_bypass());
  EXPECT_EQ(q.bench.device->notifies(0), 0u) << "the VMM does not look at a backend's ring";

  queues.stop_selected();
  EXPECT_FALSE(queues.backend_bypass()) << "no backend-owned queue is live";
  queues.go_live(queues.modern_layout());
  EXPECT_TRUE(queues.backend_bypass());
  queues.reset();
  EXPECT_FALSE(queues.backend_bypass());
  EXPECT_FALSE(queues.selected()->ready);
  queues.detach_notify_fds();
}

TEST(QueueSetOwner, WithIrqRelayNoQueueIsABypass) {
  Queues q({.version = kVersionModern, .notify = NotifyMode::kTrap, .irq = IrqMode::kRelay,
            .regs = RegsMode::kTrap},
           {.backend_queues = 0b01});
  QueueSet& queues = q.set;
  make_live(queues, 0, PartsBench::kRing0, 32);
  (void)queues.start_live({{}, kInterruptFd});
  queues.activated();
  EXPECT_FALSE(queues.backend_bypass()) << "the relay sees every interrupt";
}

TEST(QueueSetOwner, ResetStopsEveryQueueAndSelectsQueueZero) {
  Queues q;
  QueueSet& queues = q.set;
  make_live(queues, 1, PartsBench::kRing0, 32);
  queues.set_guest_page_size(65536);
  queues.reset();
  EXPECT_EQ(queues.selected_index(), 0u);
  queues.select(1);
  EXPECT_FALSE(queues.selected()->ready);
  EXPECT_EQ(queues.modern_layout().size, 256u);
  EXPECT_EQ(queues.guest_page_size(), 65536u) << "GuestPageSize is kept across resets";
}

}  // namespace
}  // namespace kvmmio::virtio::test
