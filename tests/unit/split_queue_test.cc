// SPDX-License-Identifier: BSD-2-Clause
// SplitQueue on well-formed rings: chains, used elements, wrap-around and
// notification suppression both ways (virtio 1.2 2.7.7, 2.7.10).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../virtio/driver_ring.h"
#include "kvmmio/virtio/split_queue.h"

namespace kvmmio::virtio {
namespace {

using test::Buffer;
using test::DriverRing;

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRing = kRam + 0x1000;
constexpr uint64_t kData = kRam + 0x80000;

class SplitQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { memory.add_ram(kRam, 1 << 20); }
  void start(uint32_t size, SplitQueue::Features f = {}) {
    layout = DriverRing::linux_layout(kRing, size);
    driver = std::make_unique<DriverRing>(memory, layout);
    queue.configure(layout, f);
  }
  SplitQueue::PopResult pop() { return queue.pop(chain); }

  GuestMemory memory;
  SplitQueue queue{memory, 0};
  QueueLayout layout;
  std::unique_ptr<DriverRing> driver;
  DescriptorChain chain;
};

TEST_F(SplitQueueTest, EmptyUntilTheDriverPublishes) {
  start(8);
  EXPECT_EQ(pop(), SplitQueue::PopResult::kEmpty);
  const Buffer b[] = {{kData, 64, false}};
  driver->add(b);
  EXPECT_EQ(pop(), SplitQueue::PopResult::kEmpty);  // added, not yet published
  driver->publish();
  EXPECT_EQ(pop(), SplitQueue::PopResult::kChain);
  EXPECT_EQ(pop(), SplitQueue::PopResult::kEmpty);
}

TEST_F(SplitQueueTest, ChainSegmentsKeepOrderAndDirection) {
  start(8);
  const Buffer b[] = {{kData, 12, false}, {kData + 100, 1500, false}, {kData + 4096, 2048, true}};
  const uint16_t head = driver->add(b);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  EXPECT_EQ(chain.head, head);
  ASSERT_EQ(chain.segments.size(), 3u);
  EXPECT_EQ(chain.segments[1].gpa, kData + 100);
  EXPECT_EQ(chain.segments[1].len, 1500u);
  EXPECT_FALSE(chain.segments[1].device_writable);
  EXPECT_TRUE(chain.segments[2].device_writable);
  EXPECT_EQ(chain.readable_bytes, 1512u);
  EXPECT_EQ(chain.writable_bytes, 2048u);
}

TEST_F(SplitQueueTest, IndirectTableAndDirectThenIndirect) {
  start(8, {.event_idx = false, .indirect = true});
  const Buffer table[] = {{kData, 10, false}, {kData + 0x100, 20, false}, {kData + 0x200, 30, true}};
  const uint16_t head = driver->add_indirect(table, kData + 0x1000);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  EXPECT_EQ(chain.head, head);
  ASSERT_EQ(chain.segments.size(), 3u);
  EXPECT_EQ(chain.readable_bytes, 30u);
  EXPECT_EQ(chain.writable_bytes, 30u);

  // 2.7.5.3.2: direct descriptors, then one indirect descriptor.
  driver->write_desc(5, kData + 0x300, 7, desc_flag::kNext, 6);
  driver->write_desc(6, kData + 0x1000, 3 * 16, desc_flag::kIndirect | desc_flag::kWrite, 0);
  driver->set_avail_entry(1, 5);
  driver->set_avail_idx(2);
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  EXPECT_EQ(chain.segments.size(), 4u);
  EXPECT_EQ(chain.readable_bytes, 37u);
}

TEST_F(SplitQueueTest, ZeroLengthBuffersAreAccepted) {
  start(8);
  const Buffer b[] = {{kData, 0, false}, {kData, 16, true}};
  driver->add(b);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  EXPECT_EQ(chain.readable_bytes, 0u);
}

TEST_F(SplitQueueTest, PushUsedWritesTheElementThenTheIndex) {
  start(4);
  const Buffer b[] = {{kData, 16, true}};
  const uint16_t head = driver->add(b);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  queue.push_used(chain.head, 9);
  auto used = driver->take_used();
  ASSERT_TRUE(used);
  EXPECT_EQ(used->id, head);
  EXPECT_EQ(used->len, 9u);
  EXPECT_EQ(driver->used_idx(), 1u);
  queue.push_used(4, 1);  // not a descriptor index of this queue: ignored
  EXPECT_EQ(driver->used_idx(), 1u);
}

// One mergeable RX frame's buffers: the driver sees all of them or none.
// The used index moves once, past every element; a head that is not a
// descriptor index of the queue is left out.
TEST_F(SplitQueueTest, PushUsedOfSeveralMovesTheIndexOnceAfterEveryElement) {
  start(8);
  const Buffer b[] = {{kData, 16, true}};
  uint16_t heads[3];
  for (uint16_t& h : heads) h = driver->add(b);
  driver->publish();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  const SplitQueue::UsedElement elements[] = {{heads[0], 100}, {8, 1}, {heads[1], 200}, {heads[2], 0}};
  queue.push_used(elements);
  EXPECT_EQ(driver->used_idx(), 3u);
  const uint32_t lens[] = {100, 200, 0};
  for (int i = 0; i < 3; ++i) {
    auto used = driver->take_used();
    ASSERT_TRUE(used) << i;
    EXPECT_EQ(used->id, heads[i]) << i;
    EXPECT_EQ(used->len, lens[i]) << i;
  }
  EXPECT_FALSE(driver->take_used());
  queue.push_used(std::span<const SplitQueue::UsedElement>{});  // nothing: the index stays
  EXPECT_EQ(driver->used_idx(), 3u);
}

TEST_F(SplitQueueTest, IndicesWrapAt65536) {
  start(4);
  const Buffer b[] = {{kData, 8, false}};
  for (uint32_t i = 0; i < 70000; ++i) {
    driver->add(b);
    driver->publish();
    ASSERT_EQ(pop(), SplitQueue::PopResult::kChain) << i;
    queue.push_used(chain.head, 0);
    ASSERT_TRUE(driver->take_used()) << i;
  }
  EXPECT_EQ(queue.next_avail(), static_cast<uint16_t>(70000));
  EXPECT_EQ(driver->used_idx(), static_cast<uint16_t>(70000));
}

TEST_F(SplitQueueTest, StoppedQueueNeitherPopsNorPushes) {
  start(4);
  const Buffer b[] = {{kData, 8, false}};
  driver->add(b);
  driver->publish();
  queue.stop();
  EXPECT_EQ(pop(), SplitQueue::PopResult::kEmpty);
  queue.push_used(0, 0);
  EXPECT_EQ(driver->used_idx(), 0u);
  EXPECT_FALSE(queue.should_interrupt());
}

TEST_F(SplitQueueTest, ConfigureRefusesAnUnvalidatedLayout) {
  QueueLayout bad = DriverRing::linux_layout(kRing, 8);
  bad.desc += 4;
  EXPECT_THROW(queue.configure(bad, {}), std::invalid_argument);
  EXPECT_FALSE(queue.enabled());
}

// --- used-buffer notifications (2.7.7) ---------------------------------------

TEST_F(SplitQueueTest, WithoutEventIdxNotifyUnlessNoInterrupt) {
  start(8);
  const Buffer b[] = {{kData, 8, false}};
  EXPECT_FALSE(queue.should_interrupt());  // nothing used yet
  driver->add(b);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  queue.push_used(chain.head, 0);
  EXPECT_TRUE(queue.should_interrupt());
  EXPECT_FALSE(queue.should_interrupt());  // nothing new since
  driver->set_avail_flags(kAvailFlagNoInterrupt);
  driver->add(b);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  queue.push_used(chain.head, 0);
  EXPECT_FALSE(queue.should_interrupt());
}

TEST_F(SplitQueueTest, EventIdxNotifiesWhenUsedIdxPassesUsedEvent) {
  start(8, {.event_idx = true, .indirect = false});
  const Buffer b[] = {{kData, 8, false}};
  auto use = [&] {
    driver->add(b);
    driver->publish();
    ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
    queue.push_used(chain.head, 0);
  };
  use();
  EXPECT_TRUE(queue.should_interrupt());  // the first decision has nothing to compare with
  // "notify me when the entry at index 3 is used" (used idx reaches 4).
  driver->set_used_event(3);
  use();  // used idx 2
  EXPECT_FALSE(queue.should_interrupt());
  use();  // 3
  EXPECT_FALSE(queue.should_interrupt());
  use();  // 4: crosses
  EXPECT_TRUE(queue.should_interrupt());
  use();  // 5: already past
  EXPECT_FALSE(queue.should_interrupt());
  // Batched: two uses in one decision that together cross the event.
  driver->set_used_event(6);
  use();
  use();  // 7
  EXPECT_TRUE(queue.should_interrupt());
  // The flags are ignored with EVENT_IDX (2.7.7.2).
  driver->set_avail_flags(kAvailFlagNoInterrupt);
  driver->set_used_event(7);
  use();  // 8
  EXPECT_TRUE(queue.should_interrupt());
}

// --- available-buffer notifications (2.7.10) ---------------------------------

TEST_F(SplitQueueTest, EventIdxPublishesAvailEventWhenGoingIdle) {
  start(8, {.event_idx = true, .indirect = false});
  EXPECT_EQ(pop(), SplitQueue::PopResult::kEmpty);
  EXPECT_EQ(driver->avail_event(), 0u);
  const Buffer b[] = {{kData, 8, false}};
  driver->add(b);
  driver->add(b);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  EXPECT_EQ(pop(), SplitQueue::PopResult::kEmpty);
  EXPECT_EQ(driver->avail_event(), 2u);  // kick me for the entry at index 2
}

TEST_F(SplitQueueTest, DisabledNotificationsAndTheRecheckOnEnable) {
  start(8);
  queue.disable_notifies();
  EXPECT_EQ(driver->used_flags(), kUsedFlagNoNotify);
  EXPECT_FALSE(queue.enable_notifies());  // nothing pending
  EXPECT_EQ(driver->used_flags(), 0u);
  queue.disable_notifies();
  const Buffer b[] = {{kData, 8, false}};
  driver->add(b);
  driver->publish();  // arrives while kicks are suppressed
  EXPECT_TRUE(queue.enable_notifies());  // so the device must look again
}

TEST_F(SplitQueueTest, EventIdxEnableWritesAvailEventAndKeepsFlagsZero) {
  start(8, {.event_idx = true, .indirect = false});
  queue.disable_notifies();
  EXPECT_EQ(driver->used_flags(), 0u);  // must stay 0 with EVENT_IDX
  const Buffer b[] = {{kData, 8, false}};
  driver->add(b);
  driver->publish();
  ASSERT_EQ(pop(), SplitQueue::PopResult::kChain);
  EXPECT_FALSE(queue.enable_notifies());
  EXPECT_EQ(driver->avail_event(), 1u);
}

}  // namespace
}  // namespace kvmmio::virtio
