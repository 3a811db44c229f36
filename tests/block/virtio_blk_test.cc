// SPDX-License-Identifier: BSD-2-Clause
// VirtioBlock behind the virtio-mmio transport (no KVM: memfd guest RAM,
// notifies through fake ioeventfds polled by a real EventLoop), on real
// image files in a temporary directory: every request type, every status,
// the hostile requests of docs/security.md, read-only disks, resets with
// requests in flight, and several request queues (VIRTIO_BLK_F_MQ).
#include "kvmmio/block/virtio_blk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "block_machine.h"
#include "kvmmio/base/error.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::block::test {
namespace {

constexpr uint64_t kImageSize = 1 << 20;  // 2048 sectors
constexpr uint64_t bit(unsigned n) { return uint64_t{1} << n; }

class VirtioBlockTest : public testing::Test {
 protected:
  DiskOptions disk(bool ro = false) {
    DiskOptions o;
    o.path = image;
    o.read_only = ro;
    o.serial = "kvmmio-serial-0001";
    return o;
  }
  // The image untouched at [offset, offset + len)?
  bool pristine(uint64_t offset, size_t len) {
    const auto got = file_bytes(image, offset, len);
    for (size_t i = 0; i < len; ++i)
      if (got[i] != static_cast<uint8_t>((offset + i) * 7 + 3)) return false;
    return true;
  }
  TempDir dir;
  std::string image = dir.image("disk.img", kImageSize);
};

// The request tests, on each engine (engine=io_uring explicitly: a ring
// that cannot be set up fails them rather than falling back).
class VirtioBlockEngineTest : public VirtioBlockTest, public testing::WithParamInterface<EngineChoice> {
 protected:
  DiskOptions disk(bool ro = false) {
    DiskOptions o = VirtioBlockTest::disk(ro);
    o.engine = GetParam();
    return o;
  }
};
std::string engine_param_name(const testing::TestParamInfo<EngineChoice>& info) {
  return info.param == EngineChoice::kIoUring ? "IoUring" : "Threads";
}
INSTANTIATE_TEST_SUITE_P(Engines, VirtioBlockEngineTest,
                         testing::Values(EngineChoice::kIoUring, EngineChoice::kThreads), engine_param_name);

TEST_P(VirtioBlockEngineTest, OffersItsFeaturesAndConfiguration) {
  BlockMachine m(disk());
  const uint64_t f = m.bring_up();
  EXPECT_TRUE(f & bit(spec::kFSizeMax));
  EXPECT_TRUE(f & bit(spec::kFSegMax));
  EXPECT_TRUE(f & bit(spec::kFBlkSize));
  EXPECT_TRUE(f & bit(spec::kFFlush));
  EXPECT_FALSE(f & bit(spec::kFRo));
  // /tmp is the test host's file system; the probe says what it can do.
  EXPECT_EQ((f & bit(spec::kFDiscard)) != 0, m.device->disk().can_discard());
  EXPECT_EQ((f & bit(spec::kFWriteZeroes)) != 0, m.device->disk().can_write_zeroes());
  EXPECT_EQ(m.driver->read_config(0, 4), kImageSize / 512);  // capacity, low half
  EXPECT_EQ(m.driver->read_config(4, 4), 0u);
  EXPECT_EQ(m.driver->read_config(8, 4), VirtioBlock::kSizeMax);
  EXPECT_EQ(m.driver->read_config(12, 4), VirtioBlock::kSegMax);
  // Linux never builds a request the device refuses: size_max x seg_max
  // is within the request bound.
  EXPECT_LE(uint64_t{VirtioBlock::kSizeMax} * VirtioBlock::kSegMax, VirtioBlock::kMaxRequestBytes);
  EXPECT_EQ(m.driver->read_config(20, 4), 512u);
  EXPECT_EQ(m.driver->status() & virtio::status::kDriverOk, virtio::status::kDriverOk);
}

TEST_P(VirtioBlockEngineTest, WritesReachTheImageAndReadsComeBack) {
  BlockMachine m(disk());
  m.bring_up();
  std::vector<uint8_t> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i ^ 0x5a);
  m.memory.write(BlockMachine::data_at(0), data.data(), data.size());
  m.request(0, spec::kTOut, 8, 4096, false);
  auto e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->len, 1u);  // only the status byte was written
  EXPECT_EQ(m.status(0), spec::kSOk);
  EXPECT_EQ(file_bytes(image, 8 * 512, 4096), data);
  EXPECT_TRUE(pristine(0, 8 * 512));
  EXPECT_TRUE(pristine(8 * 512 + 4096, 4096));

  m.request(1, spec::kTIn, 8, 4096, true);
  e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->len, 4097u);
  EXPECT_EQ(m.status(1), spec::kSOk);
  EXPECT_EQ(m.guest(BlockMachine::data_at(1), 4096), data);
  // The last sector of the disk is readable; its data is the image's.
  m.request(2, spec::kTIn, kImageSize / 512 - 1, 512, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(2), spec::kSOk);
  EXPECT_EQ(m.guest(BlockMachine::data_at(2), 512), file_bytes(image, kImageSize - 512, 512));
  EXPECT_EQ(m.device->counters().reads, 2u);
  EXPECT_EQ(m.device->counters().writes, 1u);
  EXPECT_EQ(m.device->counters().bytes_written, 4096u);
  EXPECT_GT(m.irq.take().value_or(0), 0u) << "no used-buffer interrupt";
  EXPECT_EQ(m.device->guest_errors(), 0u);
}

TEST_P(VirtioBlockEngineTest, DataSplitAcrossDescriptorsAndSharingTheHeadersDescriptor) {
  BlockMachine m(disk());
  m.bring_up();
  // OUT: the header and the first 512 data bytes in one descriptor, the
  // rest in two more (2.7.4.2: framing is the driver's choice).
  const uint64_t buf = BlockMachine::data_at(3);
  const spec::RequestHeader h{spec::kTOut, 0, 100};
  m.memory.write(buf, &h, sizeof h);
  std::vector<uint8_t> data(1536, 0xab);
  data[700] = 0x11;
  m.memory.write(buf + 16, data.data(), 512);
  m.memory.write(buf + 0x1000, data.data() + 512, 512);
  m.memory.write(buf + 0x2000, data.data() + 1024, 512);
  m.submit({{buf, 16 + 512, false}, {buf + 0x1000, 512, false}, {buf + 0x2000, 512, false},
            {BlockMachine::kStatus, 1, true}});
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), spec::kSOk);
  EXPECT_EQ(file_bytes(image, 100 * 512, 1536), data);
  // IN: the data and the status byte in one device-writable descriptor.
  const spec::RequestHeader in{spec::kTIn, 0, 100};
  m.memory.write(buf + 0x3000, &in, sizeof in);
  m.submit({{buf + 0x3000, 16, false}, {buf + 0x4000, 1536 + 1, true}});
  const auto e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->len, 1537u);
  EXPECT_EQ(m.guest(buf + 0x4000, 1536), data);
  EXPECT_EQ(m.guest(buf + 0x4000 + 1536, 1)[0], spec::kSOk);
}

TEST_P(VirtioBlockEngineTest, FlushSucceedsAfterWritesAndGetIdAnswersTheSerial) {
  BlockMachine m(disk());
  m.bring_up();
  std::vector<uint8_t> data(512, 0x42);
  m.memory.write(BlockMachine::data_at(0), data.data(), data.size());
  m.request(0, spec::kTOut, 0, 512, false);
  m.request(1, spec::kTFlush, 0, 0, false);
  ASSERT_TRUE(m.used());
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), spec::kSOk);
  EXPECT_EQ(m.status(1), spec::kSOk);
  EXPECT_EQ(m.device->counters().flushes, 1u);
  EXPECT_EQ(file_bytes(image, 0, 512), data);

  m.request(2, spec::kTGetId, 0, 20, true);
  const auto e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->len, 21u);
  EXPECT_EQ(m.status(2), spec::kSOk);
  const auto id = m.guest(BlockMachine::data_at(2), 20);
  EXPECT_EQ(std::string(id.begin(), id.begin() + 18), "kvmmio-serial-0001");
  EXPECT_EQ(id[18], 0);
  EXPECT_EQ(id[19], 0);
}

// Requests that run one after another on the worker complete in order: a
// FLUSH's status comes after the writes submitted before it.
TEST_P(VirtioBlockEngineTest, FlushCompletesAfterTheWritesBeforeIt) {
  BlockMachine m(disk());
  m.bring_up();
  std::vector<uint8_t> data(65536 - 512, 0x24);
  for (unsigned s = 0; s < 4; ++s) {
    m.memory.write(BlockMachine::data_at(s), data.data(), data.size());
    m.request(s, spec::kTOut, 128 * s, static_cast<uint32_t>(data.size()), false);
  }
  m.request(4, spec::kTFlush, 0, 0, false);
  std::vector<uint32_t> order;
  for (int i = 0; i < 5; ++i) {
    const auto e = m.used();
    ASSERT_TRUE(e);
    order.push_back(e->id);
  }
  // The flush's chain head (the ring's fifth chain, 3 descriptors each) is last.
  EXPECT_EQ(order.back(), 4u * 3u);
  EXPECT_EQ(m.status(4), spec::kSOk);
}

TEST_P(VirtioBlockEngineTest, DiscardAndWriteZeroesLeaveZeroes) {
  BlockMachine m(disk());
  const uint64_t f = m.bring_up();
  if (!(f & bit(spec::kFDiscard)) || !(f & bit(spec::kFWriteZeroes)))
    GTEST_SKIP() << "the file system of /tmp refuses fallocate punch-hole or zero-range";
  for (const auto& [slot, type, sector, flags] :
       std::vector<std::tuple<unsigned, uint32_t, uint64_t, uint32_t>>{
           {0, spec::kTDiscard, 16, 0}, {1, spec::kTWriteZeroes, 64, 0}, {2, spec::kTWriteZeroes, 128, 1}}) {
    const spec::DiscardRange r{sector, 16, flags};
    m.memory.write(BlockMachine::data_at(slot), &r, sizeof r);
    m.request(slot, type, 0, sizeof r, false);
    ASSERT_TRUE(m.used());
    EXPECT_EQ(m.status(slot), spec::kSOk) << slot;
    EXPECT_EQ(file_bytes(image, sector * 512, 16 * 512), std::vector<uint8_t>(16 * 512, 0)) << slot;
    EXPECT_TRUE(pristine((sector + 16) * 512, 512));
  }
  EXPECT_EQ(m.device->counters().discards, 1u);
  EXPECT_EQ(m.device->counters().write_zeroes, 2u);
}

// cache=none: O_DIRECT on the image, guest buffers at any address (here
// 3 bytes past a page boundary, never aligned as O_DIRECT needs) through
// the bounce buffer; requests longer than the bounce buffer in pieces.
TEST_P(VirtioBlockEngineTest, CacheNoneServesUnalignedGuestBuffers) {
  DiskOptions o = disk();
  o.cache = CacheMode::kNone;
  std::unique_ptr<BlockMachine> m;
  try {
    m = std::make_unique<BlockMachine>(o);
  } catch (const UserError& e) {
    GTEST_SKIP() << "no O_DIRECT on /tmp here: " << e.what();
  }
  const uint64_t f = m->bring_up();
  EXPECT_TRUE(f & bit(spec::kFBlkSize));
  EXPECT_EQ(m->device->settings().cache_none, 1u);
  const uint32_t align = m->device->disk().alignment();
  EXPECT_EQ(m->driver->read_config(20, 4), align);
  const uint32_t len = 320 * 1024;  // more than the 256 KiB bounce buffer
  const uint64_t buf = BlockMachine::kData + 3;
  std::vector<uint8_t> data(len);
  for (size_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>(i * 13 + 1);
  m->memory.write(buf, data.data(), len);
  const uint64_t sector = 2 * align / 512;
  const spec::RequestHeader out{spec::kTOut, 0, sector};
  m->memory.write(BlockMachine::kHeaders, &out, sizeof out);
  m->submit({{BlockMachine::kHeaders, 16, false}, {buf, len, false}, {BlockMachine::kStatus, 1, true}});
  ASSERT_TRUE(m->used());
  EXPECT_EQ(m->status(0), spec::kSOk);
  EXPECT_EQ(file_bytes(image, sector * 512, len), data);
  const uint64_t back = BlockMachine::kData + 0x60000 + 5;
  const spec::RequestHeader in{spec::kTIn, 0, sector};
  m->memory.write(BlockMachine::kHeaders + 16, &in, sizeof in);
  m->submit({{BlockMachine::kHeaders + 16, 16, false}, {back, len, true}, {BlockMachine::kStatus + 1, 1, true}});
  ASSERT_TRUE(m->used());
  EXPECT_EQ(m->status(1), spec::kSOk);
  EXPECT_EQ(m->guest(back, len), data);
  if (align > 512) {
    // A sector the O_DIRECT alignment does not divide is refused, not bounced.
    m->request(2, spec::kTIn, 1, align, true);
    ASSERT_TRUE(m->used());
    EXPECT_EQ(m->status(2), spec::kSIoErr);
  }
}

struct Hostile {
  const char* name;
  uint32_t type;
  uint64_t sector;
  uint32_t data_len;
  bool data_writable;
  uint8_t want;
};

class VirtioBlockHostileTest : public VirtioBlockTest, public testing::WithParamInterface<Hostile> {};

TEST_P(VirtioBlockHostileTest, IsRefusedCountedAndTouchesNothing) {
  const Hostile& h = GetParam();
  BlockMachine m(disk());
  m.bring_up();
  std::vector<uint8_t> guest_before = m.guest(BlockMachine::data_at(0), 0x10000);
  m.request(0, h.type, h.sector, h.data_len, h.data_writable);
  const auto e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->len, 1u);
  EXPECT_EQ(m.status(0), h.want);
  EXPECT_EQ(m.device->guest_errors(), 1u);
  EXPECT_EQ(m.device->counters().refused, 1u);
  EXPECT_TRUE(pristine(0, kImageSize));
  EXPECT_EQ(m.guest(BlockMachine::data_at(0), 0x10000), guest_before);
  // The device goes on serving.
  m.request(1, spec::kTIn, 0, 512, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(1), spec::kSOk);
}

INSTANTIATE_TEST_SUITE_P(
    Requests, VirtioBlockHostileTest,
    testing::Values(Hostile{"ReadPastTheEnd", spec::kTIn, kImageSize / 512 - 1, 1024, true, spec::kSIoErr},
                    Hostile{"WritePastTheEnd", spec::kTOut, kImageSize / 512, 512, false, spec::kSIoErr},
                    Hostile{"SectorThatOverflows", spec::kTIn, ~uint64_t{0} - 1, 4096, true, spec::kSIoErr},
                    Hostile{"ReadWithoutData", spec::kTIn, 0, 0, true, spec::kSIoErr},
                    Hostile{"WriteWithoutData", spec::kTOut, 0, 0, false, spec::kSIoErr},
                    Hostile{"PartialSector", spec::kTIn, 0, 100, true, spec::kSIoErr},
                    Hostile{"ReadIntoReadableData", spec::kTIn, 0, 512, false, spec::kSIoErr},
                    Hostile{"WriteFromWritableData", spec::kTOut, 0, 512, true, spec::kSIoErr},
                    Hostile{"FlushWithData", spec::kTFlush, 0, 512, true, spec::kSIoErr},
                    Hostile{"GetIdWithReadableData", spec::kTGetId, 0, 20, false, spec::kSIoErr},
                    Hostile{"UnknownType", 77, 0, 512, true, spec::kSUnsupp},
                    Hostile{"DiscardWithoutRange", spec::kTDiscard, 0, 0, false, spec::kSIoErr}),
    [](const testing::TestParamInfo<Hostile>& i) { return std::string(i.param.name); });

TEST_P(VirtioBlockEngineTest, StatusInADeviceReadableDescriptorGetsNothingWritten) {
  BlockMachine m(disk());
  m.bring_up();
  const spec::RequestHeader h{spec::kTIn, 0, 0};
  m.memory.write(BlockMachine::kHeaders, &h, sizeof h);
  const uint8_t poison = 0xee;
  m.memory.write(BlockMachine::kStatus, &poison, 1);
  m.submit({{BlockMachine::kHeaders, 16, false}, {BlockMachine::data_at(0), 512, false},
            {BlockMachine::kStatus, 1, false}});
  const auto e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->len, 0u);
  EXPECT_EQ(m.status(0), 0xee);
  EXPECT_EQ(m.device->guest_errors(), 1u);
}

TEST_P(VirtioBlockEngineTest, TooManyDataSegmentsAreRefused) {
  BlockMachine m(disk());
  m.bring_up(VirtioBlock::kQueueSize);
  // With the header sharing its descriptor with the first data and
  // SEG_MAX more data descriptors, the chain has SEG_MAX + 1 data
  // segments: one too many. Indirect, so the chain takes one ring entry.
  const uint64_t first = BlockMachine::kData;
  const spec::RequestHeader h{spec::kTOut, 0, 0};
  m.memory.write(first, &h, sizeof h);
  std::vector<Buffer> chain{{first, 16 + 512, false}};
  for (uint32_t i = 1; i <= VirtioBlock::kSegMax; ++i) chain.push_back({first + i * 1024, 512, false});
  chain.push_back({BlockMachine::kStatus, 1, true});
  ASSERT_EQ(chain.size(), VirtioBlock::kSegMax + 2);
  m.ring->add_indirect(chain, BlockMachine::kRam + 0x700000);
  m.ring->publish();
  ASSERT_TRUE(m.notify_fds.guest_notify(0));
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), spec::kSIoErr);
  EXPECT_EQ(m.device->guest_errors(), 1u);
  EXPECT_TRUE(pristine(0, kImageSize));
  // SEG_MAX data segments are served.
  chain.erase(chain.end() - 2);
  m.ring->add_indirect(chain, BlockMachine::kRam + 0x710000);
  m.ring->publish();
  ASSERT_TRUE(m.notify_fds.guest_notify(0));
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), spec::kSOk);
  EXPECT_EQ(m.device->counters().bytes_written, uint64_t{VirtioBlock::kSegMax} * 512);
}

TEST_P(VirtioBlockEngineTest, ReadOnlyDiskOffersRoAndRefusesWrites) {
  BlockMachine m(disk(/*ro=*/true));
  const uint64_t f = m.bring_up();
  EXPECT_TRUE(f & bit(spec::kFRo));
  EXPECT_FALSE(f & bit(spec::kFDiscard));
  EXPECT_FALSE(f & bit(spec::kFWriteZeroes));
  m.request(0, spec::kTOut, 0, 512, false);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), spec::kSIoErr);
  const spec::DiscardRange r{0, 8, 0};
  m.memory.write(BlockMachine::data_at(1), &r, sizeof r);
  m.request(1, spec::kTDiscard, 0, sizeof r, false);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(1), spec::kSUnsupp);  // not offered
  EXPECT_EQ(m.device->guest_errors(), 2u);
  EXPECT_TRUE(pristine(0, kImageSize));
  m.request(2, spec::kTIn, 0, 512, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(2), spec::kSOk);
  m.request(3, spec::kTFlush, 0, 0, false);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(3), spec::kSOk);
}

TEST_P(VirtioBlockEngineTest, ResetWithRequestsInFlightDropsThemAndServesTheNextDriver) {
  BlockMachine m(disk());
  m.bring_up();
  for (unsigned s = 0; s < 32; ++s) m.request(s, spec::kTIn, s * 8, 4096, true);
  m.driver->reset();  // status 0 while the worker may still be reading
  EXPECT_EQ(m.driver->status(), 0u);
  m.bring_up();
  m.request(40, spec::kTIn, 0, 512, true);
  const auto e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(m.status(40), spec::kSOk);
  EXPECT_EQ(m.device->counters().activations, 2u);
}

// The VMM's teardown: the transport (and the device lock it owns) goes
// first, with requests queued and one running, then the device. The
// worker is held inside its first request (its start hook) until the
// transport is gone: the reset it makes waits for none of them.
TEST_P(VirtioBlockEngineTest, TeardownWithRequestsInFlightWaitsOnlyForTheRunningOne) {
  Latch latch;
  BlockDeviceOptions hold;
  hold.on_io_thread_start = [&] { latch.hold(); };
  hold.on_uring_thread_start = hold.on_io_thread_start;
  auto m = std::make_unique<BlockMachine>(disk(), hold);
  const auto releaser = latch.releaser();
  m->bring_up();
  for (unsigned s = 0; s < 32; ++s) m->request(s, spec::kTIn, s * 8, 4096, true);
  ASSERT_TRUE(latch.wait_arrived());
  ASSERT_TRUE(virtio::test::eventually([&] { return m->device->requests_in_flight() == 32; }));
  m->transport.reset();  // resets the device: returns with the worker still held
  // The held request is not given back until its thread lets go of it (the
  // io_uring engine may have taken more of them, not yet started).
  EXPECT_GE(m->device->requests_in_flight(), 1u);
  latch.release();
  EXPECT_TRUE(virtio::test::eventually([&] { return m->device->requests_in_flight() == 0; }));
  EXPECT_EQ(m->device->counters().reads, 0u) << "a request of the reset activation was started";
  EXPECT_EQ(m->status(0), 0xee) << "the held request got a status";
  EXPECT_EQ(m->status(1), 0xee) << "a dropped request got a status";
  m.reset();  // joins the worker, which must not touch the freed transport
}

TEST_P(VirtioBlockEngineTest, MoreRequestsThanTheInFlightBoundAllComplete) {
  BlockMachine m(disk());
  m.bring_up();
  // Indirect chains (one ring descriptor each), so more of them fit than
  // kMaxInFlight in the 128-entry ring.
  const unsigned n = 100;
  static_assert(n > VirtioBlock::kMaxInFlight);
  for (unsigned s = 0; s < n; ++s) {
    const spec::RequestHeader h{spec::kTIn, 0, s};
    m.memory.write(BlockMachine::kHeaders + s * 16, &h, sizeof h);
    const Buffer chain[] = {{BlockMachine::kHeaders + s * 16, 16, false},
                            {BlockMachine::kData + s * 512, 512, true},
                            {BlockMachine::kStatus + s, 1, true}};
    m.ring->add_indirect(chain, BlockMachine::kRam + 0x700000 + s * 64);
  }
  m.ring->publish();
  ASSERT_TRUE(m.notify_fds.guest_notify(0));
  for (unsigned i = 0; i < n; ++i) ASSERT_TRUE(m.used()) << i;
  for (unsigned s = 0; s < n; ++s) EXPECT_EQ(m.status(s), spec::kSOk) << s;
  EXPECT_EQ(m.guest(BlockMachine::kData + 99 * 512, 512), file_bytes(image, 99 * 512, 512));
  EXPECT_EQ(m.device->counters().reads, n);
}

// Multiqueue (VIRTIO_BLK_F_MQ): every queue is served on its own, and each
// chain comes back on the queue it came from.

TEST_P(VirtioBlockEngineTest, OneQueueOffersNoMultiqueue) {
  BlockMachine m(disk());
  const uint64_t f = m.bring_up();
  EXPECT_FALSE(f & bit(spec::kFMq)) << "a 1-queue disk's features changed";
  EXPECT_EQ(m.device->num_queues(), 1u);
  EXPECT_EQ(m.device->settings().queues, 1u);
  EXPECT_EQ(m.driver->read_config(34, 2), 1u);
}

TEST_P(VirtioBlockEngineTest, FourQueuesOfferMultiqueueAndNameTheirThreads) {
  for (unsigned bad : {0u, VirtioBlock::kMaxQueues + 1}) {
    BlockDeviceOptions o;
    o.queues = bad;
    EXPECT_THROW(BlockMachine(disk(), o), std::invalid_argument) << bad;
  }
  BlockDeviceOptions o;
  o.queues = 4;
  o.thread_name = "tblk7";
  BlockMachine m(disk(), o);
  const uint64_t f = m.bring_up();
  EXPECT_TRUE(f & bit(spec::kFMq));
  EXPECT_EQ(m.device->num_queues(), 4u);
  EXPECT_EQ(m.device->settings().queues, 4u);
  EXPECT_EQ(m.device->settings().max_in_flight, VirtioBlock::kMaxInFlight) << "the bound is per queue";
  EXPECT_EQ(m.driver->read_config(34, 2), 4u);  // num_queues (le16 at 34)
  EXPECT_EQ(m.driver->read_config(20, 4), 512u) << "the fields before num_queues are unchanged";
  // Every queue has its own live notify fd (the ioeventfds KVM would match).
  for (uint32_t q = 0; q < 4; ++q) EXPECT_TRUE(m.notify_fds.assigned(q)) << q;
  // One engine thread per queue, each named after its queue.
  auto names = [] {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(entry.path() / "comm");
      std::string name;
      std::getline(comm, name);
      out.push_back(name);
    }
    return out;
  };
  for (const char* want : {"tblk7q0", "tblk7q1", "tblk7q2", "tblk7q3"})
    EXPECT_TRUE(virtio::test::eventually([&] {
      const auto n = names();
      return std::count(n.begin(), n.end(), want) == 1;
    })) << want;
}

TEST_P(VirtioBlockEngineTest, RequestsOnEachQueueCompleteOnThatQueue) {
  BlockDeviceOptions o;
  o.queues = 4;
  BlockMachine m(disk(), o);
  m.bring_up();
  // A write on each queue, to a place of its own, each waited for on its
  // own ring; then each place read back through the next queue.
  for (uint32_t q = 0; q < 4; ++q) {
    std::vector<uint8_t> data(4096, static_cast<uint8_t>(0x30 + q));
    m.memory.write(BlockMachine::data_at(q), data.data(), data.size());
    m.request(q, spec::kTOut, 64 * q, 4096, false, q);
  }
  for (uint32_t q = 0; q < 4; ++q) {
    const auto e = m.used(q);
    ASSERT_TRUE(e) << q;
    EXPECT_EQ(e->id, 0u) << "queue " << q << "'s first chain";
    EXPECT_EQ(e->len, 1u);
    EXPECT_EQ(m.status(q), spec::kSOk) << q;
  }
  for (uint32_t q = 0; q < 4; ++q) {
    EXPECT_EQ(file_bytes(image, 64 * q * 512, 4096), std::vector<uint8_t>(4096, static_cast<uint8_t>(0x30 + q)));
    m.request(8 + q, spec::kTIn, 64 * q, 4096, true, (q + 1) % 4);
  }
  for (uint32_t q = 0; q < 4; ++q) {
    const auto e = m.used((q + 1) % 4);
    ASSERT_TRUE(e) << q;
    EXPECT_EQ(e->id, 3u) << "the second chain of queue " << (q + 1) % 4;
    EXPECT_EQ(e->len, 4097u);
    EXPECT_EQ(m.status(8 + q), spec::kSOk);
    EXPECT_EQ(m.guest(BlockMachine::data_at(8 + q), 4096), std::vector<uint8_t>(4096, static_cast<uint8_t>(0x30 + q)));
  }
  for (uint32_t q = 0; q < 4; ++q) EXPECT_FALSE(m.rings[q]->take_used()) << "an extra used element on queue " << q;
  EXPECT_EQ(m.device->counters().writes, 4u);
  EXPECT_EQ(m.device->counters().reads, 4u);
  EXPECT_EQ(m.device->requests_in_flight(), 0u);
  EXPECT_GT(m.irq.take().value_or(0), 0u) << "no used-buffer interrupt";
  EXPECT_EQ(m.device->guest_errors(), 0u);
}

// The spec orders nothing across queues: a driver that wants a write
// flushed waits for it to complete, then sends the FLUSH, on any queue.
// Within a queue, a FLUSH completes after every request before it.
TEST_P(VirtioBlockEngineTest, FlushOnOneQueueAfterWritesOnAnotherAndOrderWithinAQueue) {
  BlockDeviceOptions o;
  o.queues = 3;
  BlockMachine m(disk(), o);
  m.bring_up();
  std::vector<uint8_t> data(8192, 0x6c);
  m.memory.write(BlockMachine::data_at(0), data.data(), data.size());
  m.request(0, spec::kTOut, 200, 8192, false, 1);
  ASSERT_TRUE(m.used(1));
  EXPECT_EQ(m.status(0), spec::kSOk);
  m.request(1, spec::kTFlush, 0, 0, false, 2);
  ASSERT_TRUE(m.used(2));
  EXPECT_EQ(m.status(1), spec::kSOk);
  EXPECT_EQ(file_bytes(image, 200 * 512, 8192), data);
  EXPECT_EQ(m.device->counters().flushes, 1u);
  // Queue 0: four writes, then a FLUSH, which is the last to complete
  // there, while queue 2 serves reads at the same time.
  std::vector<uint8_t> big(65536 - 512, 0x24);
  for (unsigned s = 0; s < 4; ++s) {
    m.memory.write(BlockMachine::data_at(10 + s), big.data(), big.size());
    m.request(10 + s, spec::kTOut, 400 + 128 * s, static_cast<uint32_t>(big.size()), false, 0);
    m.request(20 + s, spec::kTIn, 128 * s, 4096, true, 2);
  }
  m.request(14, spec::kTFlush, 0, 0, false, 0);
  std::vector<uint32_t> order;
  for (int i = 0; i < 5; ++i) {
    const auto e = m.used(0);
    ASSERT_TRUE(e);
    order.push_back(e->id);
  }
  EXPECT_EQ(order.back(), 4u * 3u) << "queue 0's FLUSH (its fifth chain) did not complete last there";
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(m.used(2));
  for (unsigned s = 0; s < 5; ++s) EXPECT_EQ(m.status(10 + s), spec::kSOk) << s;
  for (unsigned s = 0; s < 4; ++s) EXPECT_EQ(m.status(20 + s), spec::kSOk) << s;
  EXPECT_EQ(m.device->counters().flushes, 2u);
}

TEST_P(VirtioBlockEngineTest, ResetWithRequestsInFlightOnSeveralQueues) {
  BlockDeviceOptions o;
  o.queues = 4;
  BlockMachine m(disk(), o);
  m.bring_up();
  for (unsigned s = 0; s < 64; ++s) m.request(s, spec::kTIn, s * 8, 4096, true, s % 4);
  m.driver->reset();  // status 0 while every engine may still be reading
  EXPECT_EQ(m.driver->status(), 0u);
  // Those already running end off the lock, soon.
  EXPECT_TRUE(virtio::test::eventually([&] { return m.device->requests_in_flight() == 0; }));
  // The next driver uses two of the four queues, as Linux does with two CPUs.
  m.bring_up(128, 2);
  for (uint32_t q = 0; q < 2; ++q) m.request(70 + q, spec::kTIn, 0, 512, true, q);
  for (uint32_t q = 0; q < 2; ++q) {
    const auto e = m.used(q);
    ASSERT_TRUE(e) << q;
    EXPECT_EQ(m.status(70 + q), spec::kSOk) << q;
  }
  EXPECT_EQ(m.device->counters().activations, 2u);
  // A queue the driver did not set up does not exist for it.
  m.driver->notify(3);
  EXPECT_EQ(m.device->requests_in_flight(), 0u);
}

// The in-flight bound is per queue: with every engine held in its first
// request, each queue takes kMaxInFlight requests and pauses there, so the
// device holds queues x kMaxInFlight; released, all complete where they
// came from.
TEST_P(VirtioBlockEngineTest, TheInFlightBoundIsPerQueue) {
  Latch latch;
  BlockDeviceOptions hold;
  hold.queues = 2;
  hold.on_io_thread_start = [&] { latch.hold(); };
  hold.on_uring_thread_start = hold.on_io_thread_start;
  BlockMachine m(disk(), hold);
  const auto releaser = latch.releaser();
  m.bring_up();
  const unsigned n = 100;  // per queue, indirect: one ring entry each
  static_assert(n > VirtioBlock::kMaxInFlight);
  for (uint32_t q = 0; q < 2; ++q) {
    for (unsigned i = 0; i < n; ++i) {
      const unsigned s = q * n + i;
      const spec::RequestHeader h{spec::kTIn, 0, s};
      m.memory.write(BlockMachine::kHeaders + s * 16, &h, sizeof h);
      const uint8_t poison = 0xee;
      m.memory.write(BlockMachine::kStatus + s, &poison, 1);
      const Buffer chain[] = {{BlockMachine::kHeaders + s * 16, 16, false},
                              {BlockMachine::kData + s * 512, 512, true},
                              {BlockMachine::kStatus + s, 1, true}};
      m.rings[q]->add_indirect(chain, BlockMachine::kRam + 0x700000 + s * 64);
    }
    m.rings[q]->publish();
    ASSERT_TRUE(m.notify_fds.guest_notify(q));
  }
  // A queue reaches the bound with its last admitted request and counts the
  // pause a moment later, when it meets the next one: wait for both (a
  // loaded L1 once read the count between the two).
  ASSERT_TRUE(virtio::test::eventually([&] {
    return m.device->requests_in_flight(0) == VirtioBlock::kMaxInFlight &&
           m.device->requests_in_flight(1) == VirtioBlock::kMaxInFlight &&
           m.device->counters().inflight_waits >= 2u;
  })) << m.device->requests_in_flight(0) << " and " << m.device->requests_in_flight(1) << " in flight, "
      << m.device->counters().inflight_waits << " pauses";
  EXPECT_EQ(m.device->requests_in_flight(), 2 * VirtioBlock::kMaxInFlight);
  ASSERT_TRUE(latch.wait_arrived(2)) << "each queue's engine thread starts on its own";
  latch.release();
  for (uint32_t q = 0; q < 2; ++q)
    for (unsigned i = 0; i < n; ++i) ASSERT_TRUE(m.used(q)) << q << " " << i;
  for (unsigned s = 0; s < 2 * n; ++s) EXPECT_EQ(m.status(s), spec::kSOk) << s;
  EXPECT_EQ(m.guest(BlockMachine::kData + 150 * 512, 512), file_bytes(image, 150 * 512, 512));
  EXPECT_EQ(m.device->counters().reads, 2 * n);
  EXPECT_EQ(m.device->requests_in_flight(), 0u);
}

// A reset while a request's I/O is held on the engine's thread returns at
// once: nothing waits for guest-sized I/O under the device lock. The next
// driver is set up while the old I/O is still held; released, the late
// request is discarded (no status byte, nothing on the new ring) and the
// new one is served.
TEST_P(VirtioBlockEngineTest, ResetReturnsWhileTheIoIsHeldAndTheLateCompletionIsDiscarded) {
  Latch latch;
  BlockMachine m(disk(), hold_io(latch));
  const auto releaser = latch.releaser();
  m.bring_up();
  for (unsigned s = 0; s < 8; ++s) m.request(s, spec::kTIn, s * 8, 4096, true);
  ASSERT_TRUE(latch.wait_arrived());
  const auto start = std::chrono::steady_clock::now();
  m.driver->reset();  // the held request's I/O has not even started
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(m.driver->status(), 0u);
  EXPECT_GE(m.device->requests_in_flight(), 1u) << "the held request counts against the bound until it ends";
  m.bring_up();
  m.request(20, spec::kTIn, 0, 512, true);
  latch.release();
  const auto e = m.used();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->id, 0u) << "the new ring's first chain";
  EXPECT_EQ(m.status(20), spec::kSOk);
  EXPECT_EQ(m.guest(BlockMachine::data_at(20), 512), file_bytes(image, 0, 512));
  EXPECT_TRUE(virtio::test::eventually([&] { return m.device->requests_in_flight() == 0; }));
  for (unsigned s = 0; s < 8; ++s) EXPECT_EQ(m.status(s), 0xee) << "a request of the reset driver got a status: " << s;
  EXPECT_FALSE(m.ring->take_used()) << "a request of the reset driver came back on the new ring";
  EXPECT_EQ(m.device->counters().activations, 2u);
}

class VirtioBlockBoundTest : public VirtioBlockEngineTest {
 protected:
  // Room for requests of the largest size.
  static constexpr uint64_t kBigImage = 2 * VirtioBlock::kMaxRequestBytes;
  DiskOptions big_disk() {
    DiskOptions o = disk();
    o.path = dir.image("big.img", kBigImage);
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(Engines, VirtioBlockBoundTest,
                         testing::Values(EngineChoice::kIoUring, EngineChoice::kThreads), engine_param_name);

// A request carries at most kMaxRequestBytes of data, however it is made
// up: one sector more is refused, and so is a chain naming one buffer many
// times.
TEST_P(VirtioBlockBoundTest, RequestsLargerThanTheBoundAreRefused) {
  BlockMachine m(big_disk());
  m.bring_up();
  const auto bound = static_cast<uint32_t>(VirtioBlock::kMaxRequestBytes);
  m.request(0, spec::kTIn, 0, bound, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(0), spec::kSOk);
  EXPECT_EQ(m.guest(BlockMachine::data_at(0) + bound - 4096, 4096), file_bytes(m.device->disk().path(), bound - 4096, 4096));
  m.request(1, spec::kTIn, 0, bound + 512, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(1), spec::kSIoErr);
  EXPECT_EQ(m.device->guest_errors(), 1u);
  // Eight descriptors naming the same 1 MiB buffer: 8 MiB.
  const uint64_t header = BlockMachine::kHeaders + 2 * 16;
  const spec::RequestHeader h{spec::kTIn, 0, 0};
  m.memory.write(header, &h, sizeof h);
  std::vector<Buffer> chain{{header, 16, false}};
  for (int i = 0; i < 8; ++i) chain.push_back({BlockMachine::kData, 1 << 20, true});
  chain.push_back({BlockMachine::kStatus + 2, 1, true});
  m.submit(chain);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(2), spec::kSIoErr);
  EXPECT_EQ(m.device->guest_errors(), 2u);
  EXPECT_EQ(m.device->counters().reads, 1u);
  EXPECT_EQ(m.device->counters().refused, 2u);
}

// With the engine held in its first request, a queue takes requests of the
// largest size only up to kMaxInFlightBytes and pauses there; released,
// all complete.
TEST_P(VirtioBlockBoundTest, TheBytesInFlightAreBounded) {
  Latch latch;
  BlockMachine m(big_disk(), hold_io(latch));
  const auto releaser = latch.releaser();
  m.bring_up();
  constexpr unsigned kRequests = 6;
  constexpr unsigned kFit = VirtioBlock::kMaxInFlightBytes / VirtioBlock::kMaxRequestBytes;
  static_assert(kRequests > kFit);
  for (unsigned s = 0; s < kRequests; ++s)  // their buffers overlap: the device does not mind
    m.request(s, spec::kTIn, 0, static_cast<uint32_t>(VirtioBlock::kMaxRequestBytes), true);
  ASSERT_TRUE(latch.wait_arrived());
  ASSERT_TRUE(virtio::test::eventually([&] {
    return m.device->requests_in_flight(0) == kFit && m.device->counters().inflight_waits >= 1u;
  })) << m.device->requests_in_flight(0) << " in flight";
  EXPECT_EQ(m.device->bytes_in_flight(0), VirtioBlock::kMaxInFlightBytes);
  latch.release();
  for (unsigned i = 0; i < kRequests; ++i) ASSERT_TRUE(m.used()) << i;
  for (unsigned s = 0; s < kRequests; ++s) EXPECT_EQ(m.status(s), spec::kSOk) << s;
  EXPECT_EQ(m.device->counters().reads, kRequests);
  EXPECT_TRUE(virtio::test::eventually([&] { return m.device->bytes_in_flight(0) == 0; }));
  EXPECT_EQ(m.device->requests_in_flight(), 0u);
}

// A driver resetting in a loop with the largest requests in flight: every
// reset returns while the I/O is held, and the requests of the reset
// drivers keep counting against the byte bound until they end, so the
// work a queue holds never grows past it.
TEST_P(VirtioBlockBoundTest, ResetsInALoopDoNotPileUpWork) {
  Latch latch;
  BlockMachine m(big_disk(), hold_io(latch));
  const auto releaser = latch.releaser();
  for (int round = 0; round < 5; ++round) {
    m.bring_up();
    for (unsigned s = 0; s < 4; ++s)
      m.request(s, spec::kTIn, 0, static_cast<uint32_t>(VirtioBlock::kMaxRequestBytes), true);
    ASSERT_TRUE(latch.wait_arrived());
    ASSERT_TRUE(virtio::test::eventually([&] { return m.device->counters().inflight_waits >= 1u; }));
    EXPECT_LE(m.device->bytes_in_flight(0), VirtioBlock::kMaxInFlightBytes) << round;
    m.driver->reset();
    EXPECT_LE(m.device->bytes_in_flight(0), VirtioBlock::kMaxInFlightBytes) << round;
  }
  latch.release();
  EXPECT_TRUE(virtio::test::eventually([&] { return m.device->requests_in_flight() == 0; }));
  m.bring_up();
  m.request(10, spec::kTIn, 8, 4096, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(10), spec::kSOk);
}

}  // namespace
}  // namespace kvmmio::block::test
