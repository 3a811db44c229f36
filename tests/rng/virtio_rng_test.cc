// SPDX-License-Identifier: BSD-2-Clause
// VirtioRng behind the virtio-mmio transport, driven as Linux's virtio_mmio
// and virtio_rng drivers drive it (tests/virtio's MmioDriver and
// DriverRing, real memfd guest RAM, no KVM): negotiation, buffers and
// multi-descriptor chains filled, hostile chains (device-readable buffers,
// buffers outside RAM), the rate bound on a clock the test moves (throttled
// requests wait for the timer, then resume), the work budget per dispatch,
// and a reset that leaves nothing pending.
#include "kvmmio/rng/virtio_rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "../virtio/driver_ring.h"
#include "../virtio/harness.h"
#include "../virtio/mmio_driver.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::rng {
namespace {

using namespace std::chrono_literals;
using virtio::test::Buffer;
using virtio::test::DriverRing;
using virtio::test::eventually;
using virtio::test::ManualClock;
using virtio::test::MmioDriver;
using virtio::test::UsedElem;
namespace feature = virtio::feature;
namespace status = virtio::status;

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRamSize = 4 << 20;
constexpr uint64_t kBase = 0x0a000000;
constexpr uint64_t kRing = kRam + 0x10000;
constexpr uint64_t kBuffers = kRam + 0x100000;
constexpr uint32_t kQueueSize = 64;

// What Linux's virtio_rng asks for: no device bits; the core's ring and
// transport bits.
constexpr uint64_t kLinuxWants = feature::bit(feature::kRingIndirectDesc) | feature::bit(feature::kRingEventIdx) |
                                 feature::bit(feature::kVersion1);

// One virtio-rng behind a transport, with a Linux-like driver.
struct RngMachine {
  explicit RngMachine(RngOptions options = {}, uint32_t version = virtio::kVersionModern) {
    memory.add_ram(kRam, kRamSize);
    device = std::make_unique<VirtioRng>(memory, loop, std::move(options));
    virtio::TransportOptions t;
    t.version = version;
    t.notify = virtio::NotifyMode::kTrap;
    t.regs = virtio::RegsMode::kTrap;  // no mirror mapped: every register access is the transport's
    transport = std::make_unique<virtio::MmioTransport>(
        *device, virtio::TransportEnv{.memory = memory, .irq = irq, .base = kBase, .loop = &loop, .name = "rng-test"},
        t);
    driver = std::make_unique<MmioDriver>(*transport);
  }
  ~RngMachine() { transport.reset(); }

  // virtrng_probe() and virtio_device_ready(): negotiate, one queue, DRIVER_OK.
  uint64_t bring_up() {
    EXPECT_TRUE(driver->probe());
    EXPECT_EQ(driver->device_id(), 4u);
    const auto f = driver->initialize(kLinuxWants);
    EXPECT_TRUE(f);
    const auto layout = driver->setup_queue(VirtioRng::kRequestQueue, kRing, kQueueSize);
    EXPECT_TRUE(layout);
    if (!layout) return 0;
    ring = std::make_unique<DriverRing>(memory, *layout);
    driver->driver_ok();
    EXPECT_FALSE(needs_reset());
    return f.value_or(0);
  }

  // One chain of `buffers`, published and notified.
  uint16_t request(std::vector<Buffer> buffers) {
    const uint16_t head = ring->add(buffers);
    ring->publish();
    driver->notify(VirtioRng::kRequestQueue);
    return head;
  }
  // A chain of one device-writable buffer of `len` bytes in page `page`.
  uint16_t request(unsigned page, uint32_t len) { return request({{buffer(page), len, true}}); }
  static uint64_t buffer(unsigned page) { return kBuffers + uint64_t{page} * 4096; }

  std::vector<uint8_t> bytes(uint64_t gpa, size_t len) {
    std::vector<uint8_t> b(len);
    EXPECT_TRUE(memory.read(gpa, b.data(), len));
    return b;
  }
  static bool all_zero(const std::vector<uint8_t>& b) {
    return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
  }
  // Every used element the driver can take now.
  std::vector<UsedElem> used() {
    std::vector<UsedElem> all;
    while (auto e = ring->take_used()) all.push_back(*e);
    return all;
  }
  bool needs_reset() { return driver->status() & status::kDeviceNeedsReset; }

  GuestMemory memory;
  EventFd irq;
  EventLoop loop;
  std::unique_ptr<VirtioRng> device;
  std::unique_ptr<virtio::MmioTransport> transport;
  std::unique_ptr<MmioDriver> driver;
  std::unique_ptr<DriverRing> ring;
};

class VirtioRngVersions : public testing::TestWithParam<uint32_t> {};

TEST_P(VirtioRngVersions, NegotiatesWithLinuxAsDevice4WithOneQueueAndNoConfig) {
  RngMachine m({}, GetParam());
  const uint64_t f = m.bring_up();
  EXPECT_EQ(m.driver->version(), GetParam());
  EXPECT_EQ(f & 0xffffff, 0u);  // no device-type bits (5.4.3)
  EXPECT_EQ(feature::has(f, feature::kVersion1), GetParam() == virtio::kVersionModern);
  EXPECT_EQ(m.driver->status() & status::kDriverOk, status::kDriverOk);
  EXPECT_EQ(m.device->counters().activations, 1u);
  for (uint32_t q : {0u, 1u}) {
    m.driver->write(virtio::reg::kQueueSel, q);
    EXPECT_EQ(m.driver->read(virtio::reg::kQueueNumMax), q == 0 ? VirtioRng::kQueueSize : 0u) << q;
  }
  EXPECT_EQ(m.device->config_size(), 0u);
  // Served on either layout.
  m.request(0, 32);
  const auto u = m.used();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].len, 32u);
}

INSTANTIATE_TEST_SUITE_P(Layouts, VirtioRngVersions, testing::Values(virtio::kVersionModern, virtio::kVersionLegacy));

TEST(VirtioRng, FillsEachBufferWithRandomBytesAndInterrupts) {
  RngMachine m;
  m.bring_up();
  m.irq.take();
  for (unsigned i = 0; i < 4; ++i) m.request(i, 64);
  const auto u = m.used();
  ASSERT_EQ(u.size(), 4u);
  for (const UsedElem& e : u) EXPECT_EQ(e.len, 64u);
  EXPECT_GE(m.irq.take().value_or(0), 1u);
  // 64 random bytes are never all zero, and never repeat (each 2^-512).
  const auto first = m.bytes(RngMachine::buffer(0), 64);
  EXPECT_FALSE(RngMachine::all_zero(first));
  EXPECT_NE(first, m.bytes(RngMachine::buffer(1), 64));
  EXPECT_TRUE(RngMachine::all_zero(m.bytes(RngMachine::buffer(0) + 64, 64)));  // nothing past the buffer
  EXPECT_EQ(m.device->counters().bytes_served, 256u);
  EXPECT_EQ(m.device->counters().requests, 4u);
  EXPECT_EQ(m.device->guest_errors(), 0u);
  EXPECT_EQ(m.transport->counters().guest_errors, 0u);
}

TEST(VirtioRng, FillsEveryDescriptorOfAChain) {
  RngMachine m;
  m.bring_up();
  m.request({{RngMachine::buffer(0), 16, true}, {RngMachine::buffer(1), 100, true}, {RngMachine::buffer(2), 4000, true}});
  const auto u = m.used();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].len, 4116u);
  EXPECT_FALSE(RngMachine::all_zero(m.bytes(RngMachine::buffer(0), 16)));
  EXPECT_FALSE(RngMachine::all_zero(m.bytes(RngMachine::buffer(1), 100)));
  EXPECT_FALSE(RngMachine::all_zero(m.bytes(RngMachine::buffer(2) + 3900, 100)));
  EXPECT_EQ(m.device->counters().bytes_served, 4116u);
  EXPECT_EQ(m.device->counters().requests, 1u);
}

TEST(VirtioRng, ADeviceReadableBufferIsAGuestErrorReturnedWithNothing) {
  RngMachine m;
  m.bring_up();
  m.request({{RngMachine::buffer(0), 16, false}, {RngMachine::buffer(1), 64, true}});
  auto u = m.used();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].len, 0u);
  EXPECT_TRUE(RngMachine::all_zero(m.bytes(RngMachine::buffer(1), 64)));  // nothing written
  EXPECT_EQ(m.device->guest_errors(), 1u);
  EXPECT_EQ(m.device->counters().refused, 1u);
  EXPECT_EQ(m.device->counters().bytes_served, 0u);
  // The device goes on: the next request is served.
  EXPECT_FALSE(m.needs_reset());
  m.request(2, 64);
  u = m.used();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].len, 64u);
  EXPECT_EQ(m.device->guest_errors(), 1u);
}

TEST(VirtioRng, ABufferOutsideRamIsRefusedByTheRing) {
  RngMachine m;
  m.bring_up();
  // Starts in RAM and runs off its end; then one far outside it.
  m.request({{kRam + kRamSize - 16, 64, true}});
  EXPECT_TRUE(m.needs_reset());
  EXPECT_EQ(m.transport->counters().guest_errors, 1u);
  EXPECT_EQ(m.device->counters().bytes_served, 0u);
  EXPECT_TRUE(m.used().empty());

  RngMachine far;
  far.bring_up();
  far.request({{0x10000000000, 64, true}});
  EXPECT_TRUE(far.needs_reset());
  EXPECT_EQ(far.device->counters().bytes_served, 0u);
  EXPECT_TRUE(far.used().empty());
}

// Waits for the next used element (served from the loop's timer).
UsedElem next_used(RngMachine& m) {
  std::optional<UsedElem> e;
  EXPECT_TRUE(eventually([&] { return (e = m.ring->take_used()).has_value(); }));
  return e.value_or(UsedElem{});
}

TEST(VirtioRng, TheRateBoundHoldsAndAThrottledRequestResumes) {
  ManualClock clock;
  RngMachine m({.bytes_per_second = 10000, .burst_bytes = 100, .clock = clock.source()});
  m.bring_up();
  // The burst: the first request gets its 64 bytes; the second does not
  // fit in the 36 left and waits, and the third behind it.
  m.request(0, 64);
  m.request(1, 64);
  m.request(2, 64);
  auto u = m.used();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].len, 64u);
  EXPECT_EQ(m.device->counters().throttled, 1u);
  // A notify while it waits changes nothing: the timer resumes it.
  m.request(3, 64);
  EXPECT_TRUE(m.used().empty());
  // 2 ms earn 20 bytes, 56 in all: still short. (The timer may fire
  // meanwhile, finds the bucket short and waits again: counted once.)
  clock.advance(2ms);
  m.loop.flush();
  EXPECT_TRUE(m.used().empty());
  EXPECT_EQ(m.device->counters().bytes_served, 64u);
  // 1 ms more: 66 bytes; the timer serves the waiting request, and the
  // next one waits.
  clock.advance(1ms);
  EXPECT_EQ(next_used(m).len, 64u);
  EXPECT_LE(m.device->counters().bytes_served, 100u + 10000u * 3 / 1000);
  EXPECT_TRUE(m.used().empty());
  // The loop thread throttles the next request after it returns this one:
  // awaited, never assumed done when the used entry shows.
  EXPECT_TRUE(eventually([&] { return m.device->counters().throttled == 2u; }));
  // A second refills the burst: one more request, then the last waits
  // (before the clock moves again, or it would fit at once).
  clock.advance(1s);
  EXPECT_EQ(next_used(m).len, 64u);
  EXPECT_TRUE(eventually([&] { return m.device->counters().throttled == 3u; }));
  clock.advance(1s);
  EXPECT_EQ(next_used(m).len, 64u);
  EXPECT_EQ(m.device->counters().throttled, 3u);
  EXPECT_EQ(m.device->counters().requests, 4u);
  EXPECT_EQ(m.device->counters().bytes_served, 256u);
}

TEST(VirtioRng, ARequestGetsAtMostTheBurst) {
  ManualClock clock;
  RngMachine m({.bytes_per_second = 1000, .burst_bytes = 100, .clock = clock.source()});
  m.bring_up();
  m.request(0, 4096);
  const auto u = m.used();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].len, 100u);
}

TEST(VirtioRng, EachDispatchStopsAtItsBudgetAndTheLoopServesTheRest) {
  RngMachine m;
  m.bring_up();
  // More chains than one dispatch serves: one notify after all of them.
  for (unsigned i = 0; i < kQueueSize; ++i) m.ring->add(std::vector<Buffer>{{RngMachine::buffer(i), 8, true}});
  m.ring->publish();
  m.driver->notify(VirtioRng::kRequestQueue);
  ASSERT_TRUE(eventually([&] { return m.device->counters().requests == kQueueSize; }));
  EXPECT_EQ(m.used().size(), kQueueSize);
  EXPECT_EQ(m.device->counters().bytes_served, 8u * kQueueSize);
  // The notify's dispatch stopped at kChainsPerDispatch (the ring held as
  // many): the rest, here the look for more, was the loop's.
  static_assert(kQueueSize == VirtioRng::kChainsPerDispatch);
  EXPECT_EQ(m.device->counters().budget_yields, 1u);

  // A chain of 256 KiB (one 64 KiB buffer four times over) gets at most
  // one dispatch's bytes.
  std::vector<Buffer> big(4, Buffer{RngMachine::buffer(0), 64 << 10, true});
  m.request(big);  // may wait for the bucket a moment: the 512 bytes above came out of the burst
  EXPECT_EQ(next_used(m).len, VirtioRng::kBytesPerDispatch);
}

TEST(VirtioRng, AResetLeavesNothingPending) {
  ManualClock clock;
  RngMachine m({.bytes_per_second = 1000, .burst_bytes = 64, .clock = clock.source()});
  m.bring_up();
  m.request(0, 64);
  m.request(1, 64);  // waits for the bucket
  ASSERT_EQ(m.used().size(), 1u);
  EXPECT_EQ(m.device->counters().throttled, 1u);

  m.driver->reset();
  EXPECT_FALSE(m.device->waiting_for_tokens());  // no loop callback runs after reset(): no race
  clock.advance(10s);
  std::this_thread::sleep_for(100ms);  // past when the timer would have fired
  m.loop.flush();
  EXPECT_EQ(m.device->counters().bytes_served, 64u);

  // The next driver starts from a fresh ring and is served; the bucket
  // was not refilled by the reset, only by the time that passed.
  m.bring_up();
  EXPECT_EQ(m.device->counters().activations, 2u);
  m.request(2, 64);
  const auto u = m.used();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].len, 64u);
  EXPECT_EQ(m.device->counters().bytes_served, 128u);
}

TEST(VirtioRng, RefusesAZeroRate) {
  GuestMemory memory;
  EventLoop loop;
  EXPECT_THROW(VirtioRng(memory, loop, {.bytes_per_second = 0}), std::invalid_argument);
  EXPECT_THROW(VirtioRng(memory, loop, {.burst_bytes = 0}), std::invalid_argument);
}

TEST(VirtioRng, ReportsItsSettingsThenItsCounters) {
  RngMachine m;
  std::vector<std::string> names;
  m.device->visit_counters([&](const char* name, uint64_t) { names.emplace_back(name); });
  ASSERT_EQ(names.size(), std::size(RngSettings::kInfo) + std::size(RngCounters::kInfo));
  EXPECT_EQ(names.front(), "rate_bytes_per_second");
  EXPECT_EQ(names.back(), "activations");
}

}  // namespace
}  // namespace kvmmio::rng
