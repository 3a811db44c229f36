// SPDX-License-Identifier: BSD-2-Clause
// The io_uring engine's own cases (the request tests of virtio_blk_test.cc
// run on both engines): which engine runs, the fallback to threads when
// the ring is refused (by a real seccomp filter, in a death test's child),
// the explicit engine=io_uring error, FLUSH after many writes in flight.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>

#include "block_machine.h"
#include "kvmmio/base/error.h"
#include "kvmmio/block/disk_options.h"
#include "kvmmio/block/virtio_blk.h"

namespace kvmmio::block::test {
namespace {

constexpr uint64_t kImageSize = 1 << 20;

DiskOptions disk_at(const std::string& image, EngineChoice engine) {
  DiskOptions o;
  o.path = image;
  o.engine = engine;
  return o;
}

// io_uring_setup fails with EPERM from here on (what a container's seccomp
// profile does); every other call is allowed.
void refuse_io_uring_setup() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    _exit(90);
}

TEST(UringEngineTest, TheDefaultIsIoUringAndTheSettingsSaySo) {
  const TempDir dir;
  BlockMachine m(disk_at(dir.image("disk.img", kImageSize), EngineChoice::kDefault));
  EXPECT_STREQ(m.device->engine_name(), "io_uring");
  EXPECT_EQ(m.device->settings().io_uring, 1u);
  BlockMachine t(disk_at(dir.image("other.img", kImageSize), EngineChoice::kThreads));
  EXPECT_STREQ(t.device->engine_name(), "threads");
  EXPECT_EQ(t.device->settings().io_uring, 0u);
}

// Runs in the death test's child: exits 0 when the default fell back to
// threads and served a write and a read, and engine=io_uring was an error
// naming the fix.
[[noreturn]] void fall_back_when_refused(const std::string& image, const std::string& other) {
  refuse_io_uring_setup();
  int status = 0;
  {
    BlockMachine m(disk_at(image, EngineChoice::kDefault));
    if (std::string(m.device->engine_name()) != "threads" || m.device->settings().io_uring != 0) status = 10;
    m.bring_up();
    std::vector<uint8_t> bytes(4096, 0x5a);
    m.memory.write(BlockMachine::data_at(0), bytes.data(), bytes.size());
    m.request(0, spec::kTOut, 8, 4096, false);
    if (!m.used() || m.status(0) != spec::kSOk) status = 11;
    m.request(1, spec::kTIn, 8, 4096, true);
    if (!m.used() || m.status(1) != spec::kSOk || m.guest(BlockMachine::data_at(1), 4096) != bytes) status = 12;
  }
  try {
    BlockMachine m(disk_at(other, EngineChoice::kIoUring));
    status = 13;  // no error
  } catch (const UserError& e) {
    const std::string what = e.what();
    // The options' own words (a program gives its own: tests/vmm/device_specs_test.cc).
    if (what.find("with engine = io_uring") == std::string::npos ||
        what.find("set engine = threads") == std::string::npos ||
        what.find("Operation not permitted") == std::string::npos)
      status = 14;
  }
  if (status == 0 && ::write(STDERR_FILENO, "fell back\n", 10) != 10) status = 15;
  _exit(status);
}

TEST(UringEngineDeathTest, ARefusedRingFallsBackToThreadsUnlessIoUringWasAskedFor) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const TempDir dir;
  const std::string image = dir.image("disk.img", kImageSize);
  const std::string other = dir.image("other.img", kImageSize);
  EXPECT_EXIT(fall_back_when_refused(image, other), testing::ExitedWithCode(0), "fell back");
}

// The image's lock goes with the device, at once: the ring's own open of
// the image (the kernel lets go of a ring's registered files some time
// after the ring is closed) holds no lock. Before the ring had an open file
// description of its own, the second device here was refused ("in use").
TEST(UringEngineTest, TheImageIsFreeTheMomentTheDeviceIsGone) {
  const TempDir dir;
  const std::string image = dir.image("disk.img", kImageSize);
  for (int i = 0; i < 20; ++i) {
    BlockMachine m(disk_at(image, EngineChoice::kIoUring));
    ASSERT_STREQ(m.device->engine_name(), "io_uring") << i;
    m.bring_up();
    m.request(0, spec::kTIn, 0, 4096, true);
    ASSERT_TRUE(m.used()) << i;
    ASSERT_EQ(m.status(0), spec::kSOk) << i;
  }
}

// Many writes in flight at once on the ring, then a FLUSH: it completes
// last (after every write before it), and the image holds every write.
TEST(UringEngineTest, AFlushCompletesAfterEveryWriteInFlightBeforeIt) {
  const TempDir dir;
  const std::string image = dir.image("disk.img", kImageSize);
  BlockMachine m(disk_at(image, EngineChoice::kIoUring));
  m.bring_up();
  constexpr unsigned kWrites = 32;
  for (unsigned i = 0; i < kWrites; ++i) {
    std::vector<uint8_t> bytes(4096, static_cast<uint8_t>(i + 1));
    m.memory.write(BlockMachine::data_at(i), bytes.data(), bytes.size());
    m.request(i, spec::kTOut, i * 8, 4096, false);
  }
  m.request(kWrites, spec::kTFlush, 0, 0, false);
  std::vector<uint16_t> order;
  for (unsigned i = 0; i <= kWrites; ++i) {
    const auto e = m.used();
    ASSERT_TRUE(e);
    order.push_back(static_cast<uint16_t>(e->id));
  }
  // The flush's chain is the last one added; its descriptors come after
  // every write's, so its head is the largest.
  const uint16_t flush_head = *std::max_element(order.begin(), order.end());
  EXPECT_EQ(order.back(), flush_head);
  for (unsigned i = 0; i <= kWrites; ++i) EXPECT_EQ(m.status(i), spec::kSOk) << i;
  for (unsigned i = 0; i < kWrites; ++i)
    EXPECT_EQ(file_bytes(image, i * 4096, 4096), std::vector<uint8_t>(4096, static_cast<uint8_t>(i + 1))) << i;
  EXPECT_EQ(m.device->counters().writes, kWrites);
  EXPECT_EQ(m.device->counters().flushes, 1u);
}

// io_uring_enter failing as it does under memory pressure (-EAGAIN,
// -ENOMEM, injected through the test seam): a few failures are retried and
// the requests succeed; failures that last answer the waiting request
// IOERR; either way the queue goes on serving, and nothing ends the
// process.
TEST(UringEngineTest, SubmitFailuresAreRetriedOrAnsweredAndTheQueueGoesOn) {
  const TempDir dir;
  const std::string image = dir.image("disk.img", kImageSize);
  std::atomic<int> fail_left{0};
  std::atomic<int> error{0};
  BlockDeviceOptions o;
  o.uring_submit_fault = [&]() -> int {
    if (fail_left.load() <= 0) return 0;
    --fail_left;
    return error.load();
  };
  BlockMachine m(disk_at(image, EngineChoice::kIoUring), o);
  ASSERT_STREQ(m.device->engine_name(), "io_uring");
  m.bring_up();
  unsigned slot = 0;
  for (const int e : {-EAGAIN, -ENOMEM, -EBUSY, -EINTR}) {
    error = e;
    fail_left = 3;  // fewer than UringWorker::kSubmitRetries: retried
    std::vector<uint8_t> bytes(4096, static_cast<uint8_t>(slot + 1));
    m.memory.write(BlockMachine::data_at(slot), bytes.data(), bytes.size());
    m.request(slot, spec::kTOut, slot * 8, 4096, false);
    ASSERT_TRUE(m.used()) << e;
    EXPECT_EQ(m.status(slot), spec::kSOk) << e;
    EXPECT_EQ(file_bytes(image, slot * 4096, 4096), bytes) << e;
    EXPECT_EQ(fail_left.load(), 0) << "the failures were not met";
    ++slot;
  }
  // Lasting: the request is answered IOERR, the image untouched.
  error = -ENOMEM;
  fail_left = 1 << 30;
  std::vector<uint8_t> bytes(4096, 0x77);
  m.memory.write(BlockMachine::data_at(slot), bytes.data(), bytes.size());
  m.request(slot, spec::kTOut, 100 * 8, 4096, false);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(slot), spec::kSIoErr);
  EXPECT_EQ(m.device->counters().io_errors, 1u);
  EXPECT_NE(file_bytes(image, 100 * 4096, 4096), bytes);
  ++slot;
  // The pressure gone, the queue serves again.
  fail_left = 0;
  m.request(slot, spec::kTIn, 0, 4096, true);
  ASSERT_TRUE(m.used());
  EXPECT_EQ(m.status(slot), spec::kSOk);
  EXPECT_EQ(m.guest(BlockMachine::data_at(slot), 4096), std::vector<uint8_t>(4096, 1));
  EXPECT_EQ(m.device->counters().writes, 4u);
  EXPECT_EQ(m.device->requests_in_flight(), 0u);
}

}  // namespace
}  // namespace kvmmio::block::test
