// SPDX-License-Identifier: BSD-2-Clause
// QueueDrain on a split queue in guest memory, driven by DriverRing as
// Linux drives a ring: the budget stop and what it re-queues, notify
// suppression and its re-enabling, the interrupt decision, chains a
// device keeps or pauses on, and hostile chains.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "../virtio/driver_ring.h"
#include "kvmmio/virtio/queue_drain.h"

namespace kvmmio::virtio {
namespace {

using test::Buffer;
using test::DriverRing;

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRamSize = 1 << 20;
constexpr uint64_t kRing = kRam + 0x1000;
constexpr uint64_t kData = kRam + 0x80000;

struct CountingInterrupt : VirtioInterrupt {
  void signal_used() override { ++used; }
  void signal_config_change() override {}
  void needs_reset(const char*) override {}
  std::atomic<unsigned> used{0};
};

struct RecordingSink : QueueFaultSink {
  void queue_fault(uint32_t, QueueError error) override { faults.push_back(error); }
  std::vector<QueueError> faults;
};

class QueueDrainTest : public ::testing::Test {
 protected:
  void SetUp() override { memory.add_ram(kRam, kRamSize); }
  void start(uint32_t size, SplitQueue::Features f = {}) {
    driver = std::make_unique<DriverRing>(memory, DriverRing::linux_layout(kRing, size));
    queue.configure(driver->layout(), f);
    drain.bind(&queue, &irq);
  }
  // Publishes `n` one-buffer chains of `len` device-readable bytes.
  std::vector<uint16_t> offer(unsigned n, uint32_t len = 64) {
    std::vector<uint16_t> heads;
    for (unsigned i = 0; i < n; ++i) {
      const Buffer b[] = {{kData + 4096 * (heads.size() % 16), len, false}};
      heads.push_back(driver->add(b));
    }
    driver->publish();
    return heads;
  }
  // A device that returns every chain at once and records its head.
  QueueDrain::Handler recorder() {
    return [this](const DescriptorChain& c, uint64_t) {
      seen.push_back(c.head);
      return ChainStep::used(0, c.readable_bytes);
    };
  }

  GuestMemory memory;
  RecordingSink sink;
  SplitQueue queue{memory, 1, &sink};
  CountingInterrupt irq;
  unsigned budget_stops = 0;
  QueueDrain drain{[this] { ++budget_stops; }};
  std::unique_ptr<DriverRing> driver;
  std::vector<uint16_t> seen;
};

TEST_F(QueueDrainTest, StopsAtTheChainBudgetAndTheNextRunTakesTheRest) {
  start(16);
  const std::vector<uint16_t> heads = offer(10);
  DrainResult r = drain.run({.chains = 4}, recorder());
  EXPECT_EQ(r.stop, DrainStop::kBudget);
  EXPECT_EQ(r.chains, 4u);
  EXPECT_EQ(budget_stops, 1u) << "the rest must be re-queued";
  EXPECT_EQ(driver->used_idx(), 4u);
  EXPECT_EQ(driver->used_flags(), kUsedFlagNoNotify) << "notifies stay suppressed until the rest is done";
  EXPECT_EQ(drain.run({.chains = 4}, recorder()).stop, DrainStop::kBudget);
  r = drain.run({.chains = 4}, recorder());
  EXPECT_EQ(r.stop, DrainStop::kEmpty);
  EXPECT_EQ(r.chains, 2u);
  EXPECT_EQ(budget_stops, 2u);
  EXPECT_EQ(seen, heads) << "every chain once, in order";
  EXPECT_EQ(driver->used_idx(), 10u);
  EXPECT_EQ(driver->used_flags(), 0u) << "idle: the driver's next buffers must notify";
}

TEST_F(QueueDrainTest, StopsAtTheByteBudget) {
  start(16);
  offer(8, 1000);
  const DrainResult r = drain.run({.chains = 64, .bytes = 2500}, recorder());
  EXPECT_EQ(r.stop, DrainStop::kBudget);
  EXPECT_EQ(r.chains, 3u) << "stops once the bytes reach the budget, not before";
  EXPECT_EQ(r.bytes, 3000u);
  EXPECT_EQ(budget_stops, 1u);
}

TEST_F(QueueDrainTest, SuppressesNotifiesWhileHandlingWithAndWithoutEventIdx) {
  for (const bool event_idx : {false, true}) {
    SCOPED_TRACE(event_idx ? "EVENT_IDX" : "flags");
    start(8, {.event_idx = event_idx});
    offer(3);
    std::vector<uint16_t> flags_seen, event_seen;
    drain.run({.chains = 64}, [&](const DescriptorChain&, uint64_t) {
      flags_seen.push_back(driver->used_flags());
      event_seen.push_back(driver->avail_event());
      return ChainStep::used(0);
    });
    ASSERT_EQ(flags_seen.size(), 3u);
    if (!event_idx) {
      EXPECT_EQ(flags_seen, std::vector<uint16_t>(3, kUsedFlagNoNotify));
      EXPECT_EQ(driver->used_flags(), 0u);
    } else {
      // 2.7.10: flags stay 0; avail_event is not moved while busy, then
      // asks for a notify at the next entry.
      EXPECT_EQ(flags_seen, std::vector<uint16_t>(3, 0));
      EXPECT_EQ(event_seen, std::vector<uint16_t>(3, 0));
      EXPECT_EQ(driver->avail_event(), 3u);
    }
  }
}

TEST_F(QueueDrainTest, InterruptsOncePerRunUnlessTheDriverSuppressesIt) {
  start(16);
  offer(5);
  drain.run({.chains = 64}, recorder());
  EXPECT_EQ(irq.used, 1u) << "one interrupt for the batch";
  driver->set_avail_flags(kAvailFlagNoInterrupt);
  offer(2);
  drain.run({.chains = 64}, recorder());
  EXPECT_EQ(irq.used, 1u) << "VRING_AVAIL_F_NO_INTERRUPT";
  drain.run({.chains = 64}, recorder());
  EXPECT_EQ(irq.used, 1u) << "nothing pushed: no interrupt";
}

TEST_F(QueueDrainTest, EventIdxInterruptsOnlyWhenUsedEventIsCrossed) {
  start(16, {.event_idx = true});
  offer(2);
  drain.run({.chains = 64}, recorder());
  EXPECT_EQ(irq.used, 1u);
  driver->set_used_event(5);  // the driver wants to hear at the 6th used entry
  offer(2);
  drain.run({.chains = 64}, recorder());
  EXPECT_EQ(irq.used, 1u) << "used idx 4 has not passed used_event 5";
  offer(2);
  drain.run({.chains = 64}, recorder());
  EXPECT_EQ(irq.used, 2u) << "used idx 6 passed used_event 5";
}

TEST_F(QueueDrainTest, KeptChainsAreCompletedLaterInAnyOrder) {
  start(16);
  const std::vector<uint16_t> heads = offer(3);
  const DrainResult r = drain.run({.chains = 64}, [](const DescriptorChain&, uint64_t) { return ChainStep::kept(); });
  EXPECT_EQ(r.stop, DrainStop::kEmpty);
  EXPECT_EQ(r.chains, 3u);
  EXPECT_EQ(driver->used_idx(), 0u) << "kept chains are not returned yet";
  EXPECT_EQ(irq.used, 0u);
  drain.complete(heads[2], 7);
  drain.complete(heads[0], 9);
  drain.interrupt_if_due();
  EXPECT_EQ(irq.used, 1u);
  const auto a = driver->take_used(), b = driver->take_used();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->id, heads[2]);
  EXPECT_EQ(a->len, 7u);
  EXPECT_EQ(b->id, heads[0]);
  EXPECT_FALSE(driver->take_used());
}

TEST_F(QueueDrainTest, APausedChainComesFirstInTheNextRunAndIsNotPoppedAgain) {
  start(16);
  const std::vector<uint16_t> heads = offer(3);
  bool wait = true;
  std::vector<uint16_t> offered;
  auto device = [&](const DescriptorChain& c, uint64_t) {
    offered.push_back(c.head);
    if (c.head == heads[1] && wait) return ChainStep::paused();
    return ChainStep::used(0);
  };
  DrainResult r = drain.run({.chains = 64}, device);
  EXPECT_EQ(r.stop, DrainStop::kPaused);
  EXPECT_EQ(budget_stops, 0u) << "a pause is the device's to resume";
  EXPECT_EQ(driver->used_idx(), 1u);
  EXPECT_EQ(driver->used_flags(), kUsedFlagNoNotify);
  wait = false;
  r = drain.run({.chains = 64}, device);
  EXPECT_EQ(r.stop, DrainStop::kEmpty);
  EXPECT_EQ(r.chains, 1u) << "only the third chain was popped";
  EXPECT_EQ(offered, (std::vector<uint16_t>{heads[0], heads[1], heads[1], heads[2]}));
  EXPECT_EQ(driver->used_idx(), 3u);
}

TEST_F(QueueDrainTest, AnUnfinishedChainIsABudgetStop) {
  start(16);
  offer(2, 5000);
  const DrainResult r = drain.run({.chains = 64, .bytes = 4096}, [](const DescriptorChain&, uint64_t left) {
    return ChainStep::unfinished(left);
  });
  EXPECT_EQ(r.stop, DrainStop::kBudget);
  EXPECT_EQ(budget_stops, 1u);
  EXPECT_EQ(driver->used_idx(), 0u);
}

TEST_F(QueueDrainTest, LastStopsAndReEnablesNotifies) {
  start(16);
  offer(4);
  const DrainResult r = drain.run({.chains = 64}, [](const DescriptorChain&, uint64_t) { return ChainStep::last(3); });
  EXPECT_EQ(r.stop, DrainStop::kLast);
  EXPECT_EQ(r.chains, 1u);
  EXPECT_EQ(driver->used_idx(), 1u);
  EXPECT_EQ(driver->used_flags(), 0u);
  EXPECT_EQ(irq.used, 1u);
}

TEST_F(QueueDrainTest, ALoopingChainStopsTheDrainAsTheRingReportsIt) {
  start(8);
  offer(2);  // two good chains (descriptors 0 and 1) first
  driver->write_desc(2, kData, 8, desc_flag::kNext, 3);
  driver->write_desc(3, kData, 8, desc_flag::kNext, 2);
  driver->set_avail_entry(2, 2);
  driver->set_avail_idx(3);
  const DrainResult r = drain.run({.chains = 64}, recorder());
  EXPECT_EQ(r.stop, DrainStop::kBroken);
  EXPECT_EQ(seen.size(), 2u) << "the device never sees the malformed chain";
  EXPECT_EQ(sink.faults, std::vector<QueueError>{QueueError::kChainTooLong});
  EXPECT_EQ(driver->used_idx(), 2u);
  EXPECT_EQ(irq.used, 1u) << "the good chains before it are still returned and signalled";
  EXPECT_EQ(drain.run({.chains = 64}, recorder()).stop, DrainStop::kBroken);
  EXPECT_EQ(sink.faults.size(), 1u) << "reported once";
  EXPECT_EQ(budget_stops, 0u);
}

TEST_F(QueueDrainTest, ABufferOutsideRamStopsTheDrain) {
  start(8);
  const Buffer b[] = {{kRam + kRamSize - 16, 64, false}};
  driver->add(b);
  driver->publish();
  EXPECT_EQ(drain.run({.chains = 64}, recorder()).stop, DrainStop::kBroken);
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(sink.faults, std::vector<QueueError>{QueueError::kBufferOutsideRam});
  EXPECT_EQ(irq.used, 0u);
}

TEST_F(QueueDrainTest, AFailedChainStopsTheDrainWithoutReturningIt) {
  start(8);
  offer(3);
  const DrainResult r = drain.run({.chains = 64}, [](const DescriptorChain&, uint64_t) { return ChainStep::failed(); });
  EXPECT_EQ(r.stop, DrainStop::kFailed);
  EXPECT_EQ(r.chains, 1u);
  EXPECT_EQ(driver->used_idx(), 0u);
}

TEST_F(QueueDrainTest, WithoutARingNothingRuns) {
  QueueDrain idle;
  bool called = false;
  EXPECT_EQ(idle.run({.chains = 64}, [&](const DescriptorChain&, uint64_t) {
              called = true;
              return ChainStep::used(0);
            }).stop,
            DrainStop::kStopped);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace kvmmio::virtio
