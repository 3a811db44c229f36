// SPDX-License-Identifier: BSD-2-Clause
// The checked guest-memory accessor: a property test over many random ranges
// (including ones built to wrap or straddle), plus the edge cases by name;
// and RAM an embedder hands over (a host mapping, or an fd and offset).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

#include "kvmmio/base/unique_fd.h"
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

// The embedder's RAM, at its own host address: GuestMemory reaches exactly
// those bytes, and leaves the mapping to the embedder.
TEST(GuestMemoryMapping, AHostMappingIsBorrowedAsItIs) {
  void* p = ::mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* bytes = static_cast<uint8_t*>(p);
  {
    GuestMemory mem;
    const RamRegion& r = mem.add_ram({.gpa = 0x80000000, .size = 2 * kPage, .host = p});
    EXPECT_EQ(r.host(), bytes);
    EXPECT_FALSE(r.owns_mapping());
    EXPECT_EQ(r.memfd(), -1);
    ASSERT_TRUE(mem.store<uint32_t>(0x80000000 + kPage + 8, 0x5a5a1234));
    uint32_t direct;
    std::memcpy(&direct, bytes + kPage + 8, 4);
    EXPECT_EQ(direct, 0x5a5a1234u);
    bytes[3] = 0x77;
    EXPECT_EQ(mem.load<uint8_t>(0x80000003), 0x77);
    EXPECT_FALSE(mem.span(0x80000000 + 2 * kPage - 1, 2));  // the checked accessor's rules stand
  }
  // Still mapped after the GuestMemory went: writable, and holding what the guest wrote.
  bytes[0] = 1;
  uint32_t kept;
  std::memcpy(&kept, bytes + kPage + 8, 4);
  EXPECT_EQ(kept, 0x5a5a1234u);
  ::munmap(p, 2 * kPage);
}

// The embedder's RAM in a file, from an offset: kvmmio maps it shared, so
// both sides see the same pages.
TEST(GuestMemoryMapping, AnFdIsMappedSharedFromItsOffset) {
  UniqueFd fd(::memfd_create("embedder-ram", MFD_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::ftruncate(fd.get(), 4 * kPage), 0);
  const uint32_t marker = 0xfeedf00d;
  ASSERT_EQ(::pwrite(fd.get(), &marker, 4, 2 * kPage + 16), 4);
  GuestMemory mem;
  const RamRegion& r = mem.add_ram({.gpa = 0x40000000, .size = 2 * kPage, .fd = fd.get(), .offset = 2 * kPage});
  EXPECT_TRUE(r.owns_mapping());
  EXPECT_EQ(r.fd_offset(), 2 * kPage);
  EXPECT_NE(r.memfd(), fd.get()) << "the region keeps a dup, not the embedder's fd";
  EXPECT_EQ(mem.load<uint32_t>(0x40000010), marker) << "the fd's offset is guest address 0x40000000";
  ASSERT_TRUE(mem.store<uint32_t>(0x40000000 + kPage, 0x0badcafe));
  uint32_t via_fd = 0;
  ASSERT_EQ(::pread(fd.get(), &via_fd, 4, 3 * kPage), 4);
  EXPECT_EQ(via_fd, 0x0badcafeu);
  fd.reset();  // the embedder may close its fd: the region has its own
  EXPECT_EQ(mem.load<uint32_t>(0x40000010), marker);
}

TEST(GuestMemoryMapping, RejectsMappingsItCannotUse) {
  GuestMemory mem;
  alignas(4096) static uint8_t page[2 * 4096];
  UniqueFd fd(::memfd_create("embedder-ram", MFD_CLOEXEC));
  ASSERT_EQ(::ftruncate(fd.get(), 2 * kPage), 0);
  using M = RamMapping;
  EXPECT_THROW(mem.add_ram(M{.gpa = 0, .size = kPage}), std::invalid_argument);  // neither
  EXPECT_THROW(mem.add_ram(M{.gpa = 0, .size = kPage, .host = page, .fd = fd.get()}), std::invalid_argument);  // both
  EXPECT_THROW(mem.add_ram(M{.gpa = 0, .size = kPage, .host = page + 1}), std::invalid_argument);  // unaligned host
  EXPECT_THROW(mem.add_ram(M{.gpa = 0, .size = kPage, .fd = fd.get(), .offset = 8}), std::invalid_argument);
  EXPECT_THROW(mem.add_ram(M{.gpa = 0x10, .size = kPage, .host = page}), std::invalid_argument);  // unaligned gpa
  EXPECT_THROW(mem.add_ram(M{.gpa = 0, .size = 0, .host = page}), std::invalid_argument);  // empty
  mem.add_ram(M{.gpa = 0, .size = kPage, .host = page});
  EXPECT_THROW(mem.add_ram(M{.gpa = 0, .size = kPage, .fd = fd.get()}), std::invalid_argument);  // overlap
  EXPECT_THROW(mem.add_ram(0, kPage), std::invalid_argument);  // overlap with kvmmio's own RAM too
  // An fd that cannot be mapped is a system error naming the call.
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  try {
    mem.add_ram(M{.gpa = 0x100000, .size = kPage, .fd = r.get()});
    FAIL() << "a pipe was mapped as RAM";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("mmap guest RAM"), std::string::npos) << e.what();
  }
  EXPECT_EQ(mem.regions().size(), 1u);
}

// The VmFlags line of the mapping that starts at ADDR in /proc/self/smaps,
// with a space at each end ("" when there is no such mapping).
std::string vm_flags(const void* addr) {
  char start[32];
  std::snprintf(start, sizeof start, "%lx-", reinterpret_cast<unsigned long>(addr));
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_region = false;
  while (std::getline(smaps, line)) {
    if (line.rfind(start, 0) == 0) in_region = true;
    if (in_region && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}

// Guest RAM stays out of the VMM's core files: the mapping is MADV_DONTDUMP
// ("dd" among its VmFlags in /proc/self/smaps).
TEST(GuestMemorySetup, RamIsLeftOutOfCoreDumps) {
  GuestMemory mem;
  const RamRegion& r = mem.add_ram(0, 4 * kPage);
  const std::string flags = vm_flags(r.host());
  ASSERT_NE(flags, "") << "no mapping at " << static_cast<void*>(r.host()) << " in /proc/self/smaps";
  EXPECT_NE(flags.find(" dd "), std::string::npos) << flags;
}

// kvmmio's RAM asks for transparent huge pages (MADV_HUGEPAGE: "hg"); the
// host's shmem_enabled decides whether it gets them (docs/usage.md).
TEST(GuestMemorySetup, RamAsksForHugePages) {
  if (::access("/sys/kernel/mm/transparent_hugepage", F_OK) != 0)
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  GuestMemory mem;
  const RamRegion& r = mem.add_ram(0, 4 * kPage);
  const std::string flags = vm_flags(r.host());
  ASSERT_NE(flags, "") << "no mapping at " << static_cast<void*>(r.host()) << " in /proc/self/smaps";
  EXPECT_NE(flags.find(" hg "), std::string::npos) << flags;
}

}  // namespace
}  // namespace kvmmio
