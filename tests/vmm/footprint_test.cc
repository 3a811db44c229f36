// SPDX-License-Identifier: BSD-2-Clause
// --stats "footprint": kvmmio's Rss and private memory outside guest RAM
// leave out exactly guest RAM's memfds (a big touched memfd here, as
// guest RAM would be) and count everything else (a big anonymous mapping,
// another shared mapping, which is not private); the thread count is this
// process's; the formulas on crafted status text.
#include "vmm/stats/footprint.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {
namespace {

constexpr size_t kBig = 64 << 20;
constexpr double kBigKib = kBig / 1024;
// The kernel's counters lag by a batch per CPU (or per thread), and the
// process allocates a little between two measurements.
constexpr double kSlackKib = 4096;

// A memfd mapped shared and touched, as kvmmio's guest RAM is.
struct TouchedMemfd {
  explicit TouchedMemfd(size_t size, size_t touched) : size(size) {
    fd = UniqueFd(::memfd_create("footprint-test", MFD_CLOEXEC));
    EXPECT_TRUE(fd.valid());
    EXPECT_EQ(::ftruncate(fd.get(), static_cast<off_t>(size)), 0);
    p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd.get(), 0);
    EXPECT_NE(p, MAP_FAILED);
    std::memset(p, 1, touched);
  }
  ~TouchedMemfd() { ::munmap(p, size); }
  GuestRamFile file() const { return {fd.get(), size}; }
  size_t size;
  UniqueFd fd;
  void* p = nullptr;
};

TEST(Footprint, GuestRamCountsUnlessItIsGuestRam) {
  TouchedMemfd ram(kBig, kBig);
  const GuestRamFile guest = ram.file();
  const Footprint with = measure_footprint({});
  const Footprint without = measure_footprint(std::span<const GuestRamFile>(&guest, 1));
  EXPECT_GE(static_cast<double>(with.rss_outside_guest_ram_kib), kBigKib - kSlackKib);
  EXPECT_GT(without.rss_outside_guest_ram_kib, 0u);
  EXPECT_NEAR(static_cast<double>(with.rss_outside_guest_ram_kib - without.rss_outside_guest_ram_kib),
              kBigKib, kSlackKib);
  // Shared memory is not counted as private, guest RAM or not.
  EXPECT_NEAR(static_cast<double>(with.private_outside_guest_ram_kib),
              static_cast<double>(without.private_outside_guest_ram_kib), kSlackKib);
  EXPECT_LE(without.private_outside_guest_ram_kib, without.rss_outside_guest_ram_kib);
}

TEST(Footprint, AnonymousMemoryAndOtherSharedMemoryCountBesideGuestRam) {
  TouchedMemfd ram(kBig, kBig);
  const GuestRamFile guest = ram.file();
  const Footprint before = measure_footprint(std::span<const GuestRamFile>(&guest, 1));
  void* anon = ::mmap(nullptr, kBig, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  std::memset(anon, 1, kBig);
  // Shared memory not guest RAM's, as a binary's text on a tmpfs.
  TouchedMemfd other(kBig, kBig / 2);
  const Footprint after = measure_footprint(std::span<const GuestRamFile>(&guest, 1));
  ::munmap(anon, kBig);
  EXPECT_NEAR(static_cast<double>(after.rss_outside_guest_ram_kib - before.rss_outside_guest_ram_kib),
              kBigKib * 1.5, kSlackKib);
  EXPECT_NEAR(static_cast<double>(after.private_outside_guest_ram_kib - before.private_outside_guest_ram_kib),
              kBigKib, kSlackKib);
}

TEST(Footprint, GuestRamIsItsAllocatedPagesAtMostItsSize) {
  TouchedMemfd ram(kBig, 2 << 20);
  const GuestRamFile guest = ram.file();
  EXPECT_EQ(guest_ram_kib(std::span<const GuestRamFile>(&guest, 1)), 2048u);
  const GuestRamFile smaller{ram.fd.get(), 1 << 20};  // a region of part of the file
  EXPECT_EQ(guest_ram_kib(std::span<const GuestRamFile>(&smaller, 1)), 1024u);
  const GuestRamFile none{-1, kBig};  // an embedder's mapping: no file to ask
  EXPECT_EQ(guest_ram_kib(std::span<const GuestRamFile>(&none, 1)), 0u);
}

TEST(Footprint, ThreadsAreCounted) {
  const uint64_t before = measure_footprint({}).threads;
  EXPECT_GE(before, 1u);
  std::thread t([&] { EXPECT_EQ(measure_footprint({}).threads, before + 1); });
  t.join();
}

TEST(Footprint, TheFormulasOnStatusText) {
  const std::string status =
      "Name:\tkvmmio\n"
      "VmRSS:\t  265448 kB\n"
      "RssAnon:\t     412 kB\n"
      "RssFile:\t     968 kB\n"
      "RssShmem:\t  264068 kB\n"
      "Threads:\t4\n"
      "SigQ:\t0/1\n";
  const StatusMemory m = parse_status(status);
  EXPECT_EQ(m.rss_anon_kib, 412u);
  EXPECT_EQ(m.rss_file_kib, 968u);
  EXPECT_EQ(m.rss_shmem_kib, 264068u);
  EXPECT_EQ(m.threads, 4u);
  // 256 MiB of guest RAM resident, 4 KiB of the register mirror.
  const Footprint f = footprint_of(m, 262144 + 1920);
  EXPECT_EQ(f.rss_outside_guest_ram_kib, 412u + 968u + 4u);
  EXPECT_EQ(f.private_outside_guest_ram_kib, 412u);
  EXPECT_EQ(f.threads, 4u);
  // More guest RAM allocated than mapped here (swapped out): the other
  // shared memory is taken, never more.
  const Footprint swapped = footprint_of(m, 300000);
  EXPECT_EQ(swapped.rss_outside_guest_ram_kib, 412u + 968u);
  EXPECT_EQ(swapped.private_outside_guest_ram_kib, 412u);
  const StatusMemory garbage = parse_status("garbage");
  EXPECT_EQ(garbage.threads, 0u);
  EXPECT_EQ(footprint_of(garbage, 0).rss_outside_guest_ram_kib, 0u);
}

}  // namespace
}  // namespace kvmmio::vmm
