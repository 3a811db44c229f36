// SPDX-License-Identifier: BSD-2-Clause
// The checked guest-memory accessor: a property test over many random ranges
// (including ones built to wrap or straddle), plus the edge cases by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "kvmmio/guest_memory.h"

namespace kvmmio {
namespace {

constexpr uint64_t kPage = 4096;

// The reference model: is [gpa, gpa+len) inside one region, without wrap?
bool inside_one_region(const GuestMemory& mem, uint64_t gpa, uint64_t len) {
  if (gpa + len < gpa) return false;
  for (const auto& r : mem.regions()) {
    if (gpa >= r->gpa() && gpa - r->gpa() <= r->size() && len <= r->size() - (gpa - r->gpa()))
      return true;
  }
  return false;
}

class GuestMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem.add_ram(0x40000000, 16 * kPage);
    mem.add_ram(0x40010000, 4 * kPage);  // adjacent to the first
    mem.add_ram(0xffffffffffe00000ull, 256 * kPage);  // high, ends at 2^64 - 1 MiB
  }
  GuestMemory mem;
};

TEST_F(GuestMemoryTest, AcceptsRangesInsideARegion) {
  auto s = mem.span(0x40000000, 16 * kPage);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->data(), mem.regions()[0]->host());
  EXPECT_EQ(s->size(), 16 * kPage);
  auto t = mem.span(0x40010000 + 5, 7);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->data(), mem.regions()[1]->host() + 5);
}

TEST_F(GuestMemoryTest, RefusesRangesOutsideStraddlingOrWrapping) {
  EXPECT_FALSE(mem.span(0x3fffffff, 2));              // starts before RAM
  EXPECT_FALSE(mem.span(0x40000000 + 16 * kPage - 1, 2));  // straddles two regions
  EXPECT_FALSE(mem.span(0x40014000, 1));              // just past the second
  EXPECT_FALSE(mem.span(0x40000000, UINT64_MAX));     // wraps
  EXPECT_FALSE(mem.span(UINT64_MAX, 2));              // wraps
  EXPECT_FALSE(mem.span(0xffffffffffe00000ull, 256 * kPage + 1));
  EXPECT_TRUE(mem.span(0xffffffffffe00000ull, 256 * kPage));
  EXPECT_FALSE(mem.span(0xffffffffffffffffull, 1));   // above all RAM
  EXPECT_FALSE(mem.span(0, 0));                       // empty, but not in RAM
  EXPECT_TRUE(mem.span(0x40000000, 0));
}

TEST_F(GuestMemoryTest, PropertyMatchesReferenceModelOverRandomRanges) {
  std::mt19937_64 rng(20261129);
  const uint64_t interesting[] = {0, 1, 0x3fffffff, 0x40000000, 0x4000ffff, 0x40010000,
                                  0x40013fff, 0x40014000, 0xffffffffffe00000ull, 0xfffffffffff00000ull};
  int accepted = 0, refused = 0;
  for (int i = 0; i < 200000; ++i) {
    uint64_t gpa, len;
    switch (i % 4) {
      case 0: gpa = rng(); len = rng(); break;                       // anywhere
      case 1: gpa = interesting[rng() % 10] + (rng() % 64) - 32;     // near edges
              len = rng() % (32 * kPage); break;
      case 2: gpa = 0x40000000 + rng() % (24 * kPage); len = rng() % (24 * kPage); break;
      default: gpa = 0xfffffffffff00000ull - rng() % (2 * kPage); len = rng() % (4 * kPage); break;
    }
    const bool expect = inside_one_region(mem, gpa, len);
    auto s = mem.span(gpa, len);
    ASSERT_EQ(s.has_value(), expect) << std::hex << "gpa=0x" << gpa << " len=0x" << len;
    if (s) {
      // The pointer must be exactly the region's host base plus the offset.
      bool found = false;
      for (const auto& r : mem.regions()) {
        if (gpa >= r->gpa() && gpa - r->gpa() <= r->size() && len <= r->size() - (gpa - r->gpa())) {
          EXPECT_EQ(s->data(), r->host() + (gpa - r->gpa()));
          found = true;
          break;
        }
      }
      EXPECT_TRUE(found);
      ++accepted;
    } else {
      ++refused;
    }
  }
  // The generator must exercise both outcomes heavily, or the test proves little.
  EXPECT_GT(accepted, 20000);
  EXPECT_GT(refused, 20000);
}

TEST_F(GuestMemoryTest, ReadWriteGoThroughTheCheck) {
  const uint32_t v = 0x12345678;
  EXPECT_TRUE(mem.store(0x40000010, v));
  EXPECT_EQ(mem.load<uint32_t>(0x40000010), v);
  EXPECT_FALSE(mem.store(0x40014000 - 2, v));  // would run past the end
  EXPECT_FALSE(mem.load<uint32_t>(0x40014000 - 2));
}

TEST(GuestMemorySetup, RejectsBadRegions) {
  GuestMemory mem;
  mem.add_ram(0x1000, kPage);
  EXPECT_THROW(mem.add_ram(0x1000, kPage), std::invalid_argument);       // overlap
  EXPECT_THROW(mem.add_ram(0x0, 2 * kPage), std::invalid_argument);      // overlap
  EXPECT_THROW(mem.add_ram(0x10001, kPage), std::invalid_argument);      // unaligned
  EXPECT_THROW(mem.add_ram(0x20000, 0), std::invalid_argument);          // empty
  EXPECT_THROW(mem.add_ram(UINT64_MAX - kPage + 1 - kPage, 3 * kPage), std::invalid_argument);  // wraps
  EXPECT_THROW(mem.add_ram(UINT64_MAX - kPage + 1, kPage), std::invalid_argument);  // ends at 2^64
}

TEST(GuestMemorySetup, RegionsAreSharedMemfds) {
  GuestMemory mem;
  const RamRegion& r = mem.add_ram(0, kPage);
  EXPECT_GE(r.memfd(), 0);
  // What the memfd holds is what the guest sees: another mapping could share it.
  ASSERT_TRUE(mem.store<uint32_t>(0x10, 0xabcd));
  uint32_t via_fd = 0;
  ASSERT_EQ(::pread(r.memfd(), &via_fd, sizeof(via_fd), 0x10), 4);
  EXPECT_EQ(via_fd, 0xabcdu);
}

// Guest RAM stays out of the VMM's core files: the mapping is MADV_DONTDUMP
// ("dd" among its VmFlags in /proc/self/smaps).
TEST(GuestMemorySetup, RamIsLeftOutOfCoreDumps) {
  GuestMemory mem;
  const RamRegion& r = mem.add_ram(0, 4 * kPage);
  char start[32];
  std::snprintf(start, sizeof start, "%lx-", reinterpret_cast<unsigned long>(r.host()));
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_region = false, found = false;
  while (std::getline(smaps, line)) {
    if (line.rfind(start, 0) == 0) in_region = true;
    if (in_region && line.rfind("VmFlags:", 0) == 0) {
      EXPECT_NE((line + " ").find(" dd "), std::string::npos) << line;
      found = true;
      break;
    }
  }
  EXPECT_TRUE(found) << "no mapping at " << start << " in /proc/self/smaps";
}

}  // namespace
}  // namespace kvmmio
