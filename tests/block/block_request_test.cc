// SPDX-License-Identifier: BSD-2-Clause
// parse_request() alone, on chains built by hand in guest RAM: the checks
// that need disks too large for a test file (a range longer than offered,
// sectors near 2^64), and the statuses and status positions it answers.
#include "kvmmio/block/block_request.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kvmmio::block {
namespace {

constexpr uint64_t kRam = 0x40000000;

class ParseRequestTest : public testing::Test {
 protected:
  ParseRequestTest() {
    memory.add_ram(kRam, 1 << 20);
    limits.capacity_sectors = uint64_t{1} << 40;  // 512 TiB: only numbers here
    limits.seg_max = 254;
    limits.max_range_sectors = 1u << 21;
    limits.discard = limits.write_zeroes = true;
  }
  // header | data (readable or writable) | status, one segment each.
  virtio::DescriptorChain chain(uint32_t type, uint64_t sector, uint32_t data_len, bool data_writable) {
    const spec::RequestHeader h{type, 0, sector};
    memory.write(kRam, &h, sizeof h);
    virtio::DescriptorChain c;
    c.segments.push_back({kRam, 16, false});
    c.readable_bytes = 16;
    if (data_len) {
      c.segments.push_back({kRam + 0x1000, data_len, data_writable});
      (data_writable ? c.writable_bytes : c.readable_bytes) += data_len;
    }
    c.segments.push_back({kRam + 0x80000, 1, true});
    c.writable_bytes += 1;
    return c;
  }
  ParsedRequest range(uint32_t type, uint64_t sector, uint32_t sectors, uint32_t flags = 0) {
    const spec::DiscardRange r{sector, sectors, flags};
    memory.write(kRam + 0x1000, &r, sizeof r);
    return parse_request(memory, chain(type, 0, sizeof r, false), limits);
  }
  GuestMemory memory;
  DiskLimits limits;
};

TEST_F(ParseRequestTest, AcceptsWellFormedRequestsWithTheirStatusPosition) {
  const ParsedRequest in = parse_request(memory, chain(spec::kTIn, 7, 4096, true), limits);
  ASSERT_TRUE(in.request);
  EXPECT_EQ(in.request->sector, 7u);
  EXPECT_EQ(in.request->data_bytes, 4096u);
  EXPECT_EQ(in.request->status_offset, 4096u);  // after the data, in the writable part
  const ParsedRequest out = parse_request(memory, chain(spec::kTOut, 0, 512, false), limits);
  ASSERT_TRUE(out.request);
  EXPECT_EQ(out.request->status_offset, 0u);
  const ParsedRequest wz = range(spec::kTWriteZeroes, 100, 8, spec::kDiscardFlagUnmap);
  ASSERT_TRUE(wz.request);
  EXPECT_TRUE(wz.request->unmap);
  EXPECT_EQ(wz.request->sector, 100u);
  EXPECT_EQ(wz.request->data_bytes, 8u * 512);
}

TEST_F(ParseRequestTest, SectorsNearTheTopOfTheRangeDoNotWrap) {
  for (uint64_t sector : {limits.capacity_sectors, limits.capacity_sectors - 7, ~uint64_t{0},
                          ~uint64_t{0} / 512 + 1}) {
    const ParsedRequest p = parse_request(memory, chain(spec::kTIn, sector, 4096, true), limits);
    EXPECT_FALSE(p.request) << sector;
    EXPECT_EQ(p.status, spec::kSIoErr) << sector;
  }
  EXPECT_TRUE(parse_request(memory, chain(spec::kTIn, limits.capacity_sectors - 8, 4096, true), limits).request);
}

TEST_F(ParseRequestTest, RangesAreCheckedAgainstWhatIsOffered) {
  EXPECT_EQ(range(spec::kTDiscard, 0, limits.max_range_sectors + 1).status, spec::kSIoErr);
  EXPECT_TRUE(range(spec::kTDiscard, 0, limits.max_range_sectors).request);
  EXPECT_EQ(range(spec::kTDiscard, limits.capacity_sectors - 1, 2).status, spec::kSIoErr);
  EXPECT_EQ(range(spec::kTDiscard, 0, 0).status, spec::kSIoErr);
  EXPECT_EQ(range(spec::kTDiscard, 0, 8, spec::kDiscardFlagUnmap).status, spec::kSUnsupp);
  EXPECT_EQ(range(spec::kTWriteZeroes, 0, 8, 2).status, spec::kSUnsupp);
  limits.discard = false;
  EXPECT_EQ(range(spec::kTDiscard, 0, 8).status, spec::kSUnsupp);
}

TEST_F(ParseRequestTest, NoWritableByteMeansNoStatusPosition) {
  virtio::DescriptorChain c = chain(spec::kTOut, 0, 512, false);
  c.segments.back().device_writable = false;
  c.writable_bytes = 0;
  c.readable_bytes += 1;
  const ParsedRequest p = parse_request(memory, c, limits);
  EXPECT_FALSE(p.request);
  EXPECT_FALSE(p.status_offset);
  EXPECT_NE(p.error, nullptr);
}

TEST_F(ParseRequestTest, AHeaderShorterThan16BytesIsRefused) {
  virtio::DescriptorChain c = chain(spec::kTFlush, 0, 0, false);
  c.segments.front().len = 15;
  c.readable_bytes = 15;
  const ParsedRequest p = parse_request(memory, c, limits);
  EXPECT_FALSE(p.request);
  EXPECT_EQ(p.status, spec::kSIoErr);
  EXPECT_EQ(p.status_offset, 0u);
}

}  // namespace
}  // namespace kvmmio::block
