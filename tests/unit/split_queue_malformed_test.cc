// SPDX-License-Identifier: BSD-2-Clause
// Every malformed ring the issue lists, built by a hostile driver: the queue
// must yield no chain, report the error once to its fault sink, stay broken,
// and never loop or leave guest RAM (the fuzzer adds ASan to that).
#include <gtest/gtest.h>

#include <vector>

#include "../virtio/driver_ring.h"
#include "kvmmio/virtio/split_queue.h"

namespace kvmmio::virtio {
namespace {

using test::Buffer;
using test::DriverRing;
using enum QueueError;

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRamSize = 4 << 20;
constexpr uint64_t kRing = kRam + 0x1000;
constexpr uint64_t kTable = kRam + 0x40000;
constexpr uint64_t kData = kRam + 0x100000;
constexpr uint16_t kNext = desc_flag::kNext, kWrite = desc_flag::kWrite, kIndirect = desc_flag::kIndirect;

struct RecordingSink : QueueFaultSink {
  void queue_fault(uint32_t queue, QueueError error) override { faults.push_back({queue, error}); }
  std::vector<std::pair<uint32_t, QueueError>> faults;
};

class MalformedRing : public ::testing::Test {
 protected:
  void SetUp() override { memory.add_ram(kRam, kRamSize); }
  void start(uint32_t size, bool indirect = true) {
    driver = std::make_unique<DriverRing>(memory, DriverRing::linux_layout(kRing, size));
    queue.configure(driver->layout(), {.event_idx = false, .indirect = indirect});
  }
  // Publishes `head` as the next available chain.
  void expose(uint16_t head) {
    driver->set_avail_entry(driver->avail_idx() % driver->layout().size, head);
    driver->set_avail_idx(driver->avail_idx() + 1);
  }
  // The queue refuses, reports `error` once, and stays refused.
  void expect_fault(QueueError error) {
    DescriptorChain chain;
    EXPECT_EQ(queue.pop(chain), SplitQueue::PopResult::kBroken);
    ASSERT_EQ(sink.faults.size(), 1u);
    EXPECT_EQ(sink.faults[0].first, 3u);
    EXPECT_EQ(sink.faults[0].second, error) << to_string(sink.faults[0].second) << " instead of "
                                            << to_string(error);
    EXPECT_TRUE(queue.broken());
    EXPECT_EQ(queue.pop(chain), SplitQueue::PopResult::kBroken);
    EXPECT_EQ(sink.faults.size(), 1u);  // reported once
    EXPECT_EQ(driver->used_idx(), 0u);   // nothing was returned to the driver
  }

  GuestMemory memory;
  RecordingSink sink;
  SplitQueue queue{memory, 3, &sink};
  std::unique_ptr<DriverRing> driver;
};

TEST_F(MalformedRing, DescriptorLoop) {
  start(8);
  driver->write_desc(0, kData, 8, kNext, 1);
  driver->write_desc(1, kData, 8, kNext, 0);
  expose(0);
  expect_fault(kChainTooLong);
}

TEST_F(MalformedRing, DescriptorPointingAtItself) {
  start(8);
  driver->write_desc(2, kData, 8, kNext, 2);
  expose(2);
  expect_fault(kChainTooLong);
}

TEST_F(MalformedRing, IndirectChainLongerThanTheQueueSize) {
  // 2.7.5.3.1: no chain longer than the queue size, indirect or not.
  start(4);
  for (uint16_t i = 0; i < 8; ++i)
    driver->write_desc_at(kTable + 16 * i, kData, 8, i < 7 ? kNext : 0, static_cast<uint16_t>(i + 1));
  driver->write_desc(0, kTable, 8 * 16, kIndirect, 0);
  expose(0);
  expect_fault(kChainTooLong);
}

TEST_F(MalformedRing, LoopInsideAnIndirectTable) {
  start(8);
  driver->write_desc_at(kTable, kData, 8, kNext, 1);
  driver->write_desc_at(kTable + 16, kData, 8, kNext, 0);
  driver->write_desc(0, kTable, 32, kIndirect, 0);
  expose(0);
  expect_fault(kChainTooLong);
}

TEST_F(MalformedRing, AvailableEntryBeyondTheQueue) {
  start(8);
  expose(8);
  expect_fault(kHeadOutOfRange);
}

TEST_F(MalformedRing, NextBeyondTheQueue) {
  start(8);
  driver->write_desc(0, kData, 8, kNext, 8);
  expose(0);
  expect_fault(kNextOutOfRange);
}

TEST_F(MalformedRing, NextBeyondTheIndirectTable) {
  start(8);
  driver->write_desc_at(kTable, kData, 8, kNext, 2);  // the table has 2 entries
  driver->write_desc(0, kTable, 32, kIndirect, 0);
  expose(0);
  expect_fault(kNextOutOfRange);
}

TEST_F(MalformedRing, BufferOutsideGuestRam) {
  start(8);
  driver->write_desc(0, 0x1000, 8, 0, 0);
  expose(0);
  expect_fault(kBufferOutsideRam);
}

TEST_F(MalformedRing, BufferRunningPastTheEndOfRam) {
  start(8);
  driver->write_desc(0, kRam + kRamSize - 4, 8, 0, 0);
  expose(0);
  expect_fault(kBufferOutsideRam);
}

TEST_F(MalformedRing, BufferWrappingTheAddressSpace) {
  start(8);
  driver->write_desc(0, UINT64_MAX - 3, 16, kWrite, 0);
  expose(0);
  expect_fault(kBufferOutsideRam);
}

TEST_F(MalformedRing, ChainOfMoreThan4GiB) {
  // 4097 buffers of 1 MiB (the same guest megabyte, which is allowed).
  start(8192);
  constexpr uint16_t kCount = 4097;
  for (uint16_t i = 0; i < kCount; ++i)
    driver->write_desc(i, kData, 1 << 20, i + 1 < kCount ? kNext : 0, static_cast<uint16_t>(i + 1));
  expose(0);
  expect_fault(kChainBytesTooLarge);
}

TEST_F(MalformedRing, IndirectTableInsideAnIndirectTable) {
  start(8);
  driver->write_desc_at(kTable + 0x100, kData, 8, 0, 0);
  driver->write_desc_at(kTable, kTable + 0x100, 16, kIndirect, 0);
  driver->write_desc(0, kTable, 16, kIndirect, 0);
  expose(0);
  expect_fault(kNestedIndirect);
}

TEST_F(MalformedRing, IndirectWithNext) {
  start(8);
  driver->write_desc_at(kTable, kData, 8, 0, 0);
  driver->write_desc(0, kTable, 16, kIndirect | kNext, 1);
  driver->write_desc(1, kData, 8, 0, 0);
  expose(0);
  expect_fault(kIndirectWithNext);
}

TEST_F(MalformedRing, IndirectTableOfZeroLength) {
  start(8);
  driver->write_desc(0, kTable, 0, kIndirect, 0);
  expose(0);
  expect_fault(kIndirectBadLength);
}

TEST_F(MalformedRing, IndirectTableLengthNotAMultipleOf16) {
  start(8);
  driver->write_desc(0, kTable, 24, kIndirect, 0);
  expose(0);
  expect_fault(kIndirectBadLength);
}

TEST_F(MalformedRing, IndirectTableOutsideRam) {
  start(8);
  driver->write_desc(0, kRam + kRamSize - 16, 32, kIndirect, 0);
  expose(0);
  expect_fault(kIndirectTableOutsideRam);
}

TEST_F(MalformedRing, IndirectWithoutTheFeature) {
  start(8, /*indirect=*/false);
  driver->write_desc_at(kTable, kData, 8, 0, 0);
  driver->write_desc(0, kTable, 16, kIndirect, 0);
  expose(0);
  expect_fault(kIndirectNotNegotiated);
}

TEST_F(MalformedRing, DeviceWritableBeforeDeviceReadable) {
  start(8);
  driver->write_desc(0, kData, 8, kWrite | kNext, 1);
  driver->write_desc(1, kData, 8, 0, 0);
  expose(0);
  expect_fault(kWritableBeforeReadable);
}

TEST_F(MalformedRing, WritableDirectThenReadableInTheIndirectTable) {
  start(8);
  driver->write_desc_at(kTable, kData, 8, 0, 0);  // readable
  driver->write_desc(0, kData, 8, kWrite | kNext, 1);
  driver->write_desc(1, kTable, 16, kIndirect, 0);
  expose(0);
  expect_fault(kWritableBeforeReadable);
}

TEST_F(MalformedRing, AvailIndexJumpingMoreThanTheQueueSize) {
  start(8);
  driver->set_avail_idx(9);
  expect_fault(kAvailIndexJump);
}

TEST_F(MalformedRing, AvailIndexGoingBackwards) {
  // "Decrementing" reads as a jump of almost 65536.
  start(8);
  driver->set_avail_idx(0xffff);
  expect_fault(kAvailIndexJump);
}

TEST_F(MalformedRing, ReconfiguringClearsTheBrokenState) {
  start(8);
  expose(8);
  DescriptorChain chain;
  ASSERT_EQ(queue.pop(chain), SplitQueue::PopResult::kBroken);
  start(8);  // the driver reset the device and set the queue up again
  EXPECT_FALSE(queue.broken());
  const Buffer b[] = {{kData, 8, false}};
  driver->add(b);
  driver->publish();
  EXPECT_EQ(queue.pop(chain), SplitQueue::PopResult::kChain);
}

}  // namespace
}  // namespace kvmmio::virtio
