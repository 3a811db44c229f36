// SPDX-License-Identifier: BSD-2-Clause
// --stats "footprint": kvmmio's Rss and private memory outside guest RAM
// leave out exactly the mappings in the excluded ranges (a big touched mapping here, as
// guest RAM would be), and the thread count is this process's.
#include "vmm/footprint.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <thread>

namespace kvmmio::vmm {
namespace {

TEST(Footprint, ABigMappingCountsUnlessItIsExcluded) {
  constexpr size_t kBig = 64 << 20;
  void* p = ::mmap(nullptr, kBig, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, kBig);  // resident
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const HostRange big{begin, begin + kBig};
  const Footprint with = measure_footprint({});
  const Footprint without = measure_footprint(std::span<const HostRange>(&big, 1));
  ::munmap(p, kBig);
  EXPECT_GE(with.rss_outside_guest_ram_kib, kBig / 1024);
  EXPECT_GT(without.rss_outside_guest_ram_kib, 0u);
  // The mapping is this process's alone: private memory too.
  EXPECT_GE(with.private_outside_guest_ram_kib, kBig / 1024);
  EXPECT_NEAR(static_cast<double>(with.private_outside_guest_ram_kib -
                                  without.private_outside_guest_ram_kib),
              static_cast<double>(kBig / 1024), 4096.0);
  EXPECT_LE(without.private_outside_guest_ram_kib, without.rss_outside_guest_ram_kib);
  // Everything else is the same process a moment apart: within 4 MiB.
  EXPECT_NEAR(static_cast<double>(with.rss_outside_guest_ram_kib - without.rss_outside_guest_ram_kib),
              static_cast<double>(kBig / 1024), 4096.0);
}

TEST(Footprint, ThreadsAreCounted) {
  const uint64_t before = measure_footprint({}).threads;
  EXPECT_GE(before, 1u);
  std::thread t([&] { EXPECT_EQ(measure_footprint({}).threads, before + 1); });
  t.join();
}

TEST(Footprint, TheParsersReadSmapsAndStatus) {
  const std::string smaps =
      "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/kvmmio\n"
      "Size:                328 kB\n"
      "Rss:                 100 kB\n"
      "Shared_Clean:         96 kB\n"
      "Private_Clean:         4 kB\n"
      "Private_Dirty:         0 kB\n"
      "7f0000000000-7f0010000000 rw-s 00000000 00:01 99 /memfd:guest-ram (deleted)\n"
      "Rss:              262144 kB\n"
      "Private_Dirty:    262144 kB\n"
      "7fff00000000-7fff00021000 rw-p 00000000 00:00 0 [stack]\n"
      "Rss:                  12 kB\n"
      "Private_Clean:         0 kB\n"
      "Private_Dirty:        12 kB\n";
  const HostRange ram{0x7f0000000000, 0x7f0010000000};
  EXPECT_EQ(rss_kib_outside(smaps, {}), 100u + 262144u + 12u);
  EXPECT_EQ(rss_kib_outside(smaps, std::span<const HostRange>(&ram, 1)), 112u);
  EXPECT_EQ(private_kib_outside(smaps, {}), 4u + 262144u + 12u);
  EXPECT_EQ(private_kib_outside(smaps, std::span<const HostRange>(&ram, 1)), 16u);
  EXPECT_EQ(threads_of("Name:\tkvmmio\nThreads:\t4\nSigQ:\t0/1\n"), 4u);
  EXPECT_EQ(threads_of("garbage"), 0u);
}

}  // namespace
}  // namespace kvmmio::vmm
