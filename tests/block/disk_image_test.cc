// SPDX-License-Identifier: BSD-2-Clause
// DiskImage::open(): every refusal names the fix (in the options' own
// words here; the program's --disk words: tests/vmm/device_specs_test.cc); the
// image lock refuses a second user, naming its PID; the rule of
// kvmmio/base/user_path.h keeps other users' links and files out, and a
// block device needs block_device.
#include "kvmmio/block/disk_image.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/sysmacros.h>

#include <csignal>
#include <cstring>
#include <optional>
#include <string>

#include "block_machine.h"
#include "kvmmio/base/error.h"
#include "kvmmio/block/disk_options.h"
#include "tests/vmm/test_files.h"

namespace kvmmio::block::test {
namespace {

// The message, and whether it says `part`.
testing::AssertionResult Says(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << message << "\" does not say \"" << part << "\"";
}

std::string open_error(const DiskOptions& o) {
  try {
    DiskImage::open(o);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(opened)";
}

class DiskImageTest : public testing::Test {
 protected:
  DiskOptions options(const std::string& path, bool ro = false) {
    DiskOptions o;
    o.path = path;
    o.read_only = ro;
    return o;
  }
  TempDir dir;
};

TEST_F(DiskImageTest, OpensARawImage) {
  const DiskImage d = DiskImage::open(options(dir.image("a.img", 1 << 20)));
  EXPECT_EQ(d.capacity_sectors(), 2048u);
  EXPECT_FALSE(d.read_only());
  EXPECT_FALSE(d.block_device());
  EXPECT_EQ(d.alignment(), 512u);
}

TEST_F(DiskImageTest, MissingFileNamesHowToMakeOne) {
  EXPECT_TRUE(Says(open_error(options(dir.path + "/none.img")), "truncate -s 1G"));
}

TEST_F(DiskImageTest, SizeNotAWholeNumberOfSectorsNamesTheNextOne) {
  const std::string p = dir.image("odd.img", 1000);
  EXPECT_TRUE(Says(open_error(options(p)), "not a multiple of 512"));
  EXPECT_TRUE(Says(open_error(options(p)), "truncate -s 1024"));
  EXPECT_TRUE(Says(open_error(options(dir.image("empty.img", 0))), "empty"));
}

TEST_F(DiskImageTest, ADirectoryIsNotAnImage) {
  EXPECT_TRUE(Says(open_error(options(dir.path, true)), "not a regular file or a block device"));
}

// open_error() as user nobody (65534) where the test runs as root (root
// opens any file), in a child process; the message, or "(opened)".
std::string open_error_unprivileged(const DiskOptions& o) {
  if (::geteuid() != 0) return open_error(o);
  int out[2];
  if (::pipe(out) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(out[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(1);
    const std::string e = open_error(o);
    if (::write(out[1], e.data(), e.size()) != static_cast<ssize_t>(e.size())) _exit(1);
    _exit(0);
  }
  ::close(out[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? got : "the unprivileged child failed";
}

TEST_F(DiskImageTest, ReadOnlyFileWithoutRoOnSaysToGiveIt) {
  ASSERT_EQ(::chmod(dir.path.c_str(), 0755), 0);  // nobody may look inside
  const std::string p = dir.image("ro.img", 4096);
  ASSERT_EQ(::chmod(p.c_str(), 0444), 0);
  EXPECT_TRUE(Says(open_error_unprivileged(options(p)), "set read_only = true"));
  EXPECT_EQ(open_error_unprivileged(options(p, true)), "(opened)");
}

TEST_F(DiskImageTest, NoPermissionSaysSo) {
  ASSERT_EQ(::chmod(dir.path.c_str(), 0755), 0);
  const std::string p = dir.image("secret.img", 4096);
  // As root the child (nobody) may not read root's 0600; otherwise our own
  // file is made unreadable.
  ASSERT_EQ(::chmod(p.c_str(), ::geteuid() == 0 ? 0600 : 0), 0);
  EXPECT_TRUE(Says(open_error_unprivileged(options(p, true)), "no permission"));
  EXPECT_TRUE(Says(open_error_unprivileged(options(p)), "no permission"));
}

// flock is per open file: a second open in this process conflicts as a
// second VMM would, and /proc/locks names this process as the holder.
TEST_F(DiskImageTest, ASecondWriterIsRefusedNamingTheHolder) {
  const std::string p = dir.image("locked.img", 4096);
  const DiskImage first = DiskImage::open(options(p));
  const std::string pid = "PID " + std::to_string(::getpid());
  EXPECT_TRUE(Says(open_error(options(p)), pid));
  EXPECT_TRUE(Says(open_error(options(p, true)), pid));  // nor may anyone read while it writes
}

// What a second VMM sees: another process holds the image; the refusal
// names that process's PID.
TEST_F(DiskImageTest, AnotherProcessHoldingTheImageIsNamed) {
  const std::string p = dir.image("other.img", 4096);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    try {
      const DiskImage held = DiskImage::open(options(p));
      if (::write(ready[1], "x", 1) != 1) _exit(1);
      ::pause();  // until the test kills it
    } catch (...) {
    }
    _exit(1);
  }
  ::close(ready[1]);
  char c = 0;
  const bool holding = ::read(ready[0], &c, 1) == 1;
  ::close(ready[0]);
  const std::string refused = holding ? open_error(options(p)) : "";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(holding) << "the child could not open the image";
  EXPECT_TRUE(Says(refused, "in use by PID " + std::to_string(child)));
  EXPECT_TRUE(Says(refused, "set read_only = true"));
  // The holder is gone: its lock went with it.
  EXPECT_EQ(open_error(options(p)), "(opened)");
}

TEST_F(DiskImageTest, ReadersShareTheImageAndKeepWritersOut) {
  const std::string p = dir.image("shared.img", 4096);
  const DiskImage a = DiskImage::open(options(p, true));
  const DiskImage b = DiskImage::open(options(p, true));
  EXPECT_TRUE(a.read_only() && b.read_only());
  EXPECT_TRUE(Says(open_error(options(p)), "in use by PID"));
}

TEST_F(DiskImageTest, TheLockGoesWithTheImage) {
  const std::string p = dir.image("again.img", 4096);
  { const DiskImage first = DiskImage::open(options(p)); }
  EXPECT_EQ(open_error(options(p)), "(opened)");
}

TEST_F(DiskImageTest, CacheNoneOpensDirectOrSaysWhyNot) {
  DiskOptions o = options(dir.image("direct.img", 1 << 20));
  o.cache = CacheMode::kNone;
  const std::string e = open_error(o);
  if (e != "(opened)") {
    EXPECT_TRUE(Says(e, "set cache = writeback"));
    return;
  }
  const DiskImage d = DiskImage::open(o);
  EXPECT_TRUE(d.direct());
  EXPECT_EQ(d.alignment() % 512, 0u);
}

// A block device node of root's (the loop device 7:0) in `dir`; "" where
// this host allows no mknod.
std::string block_node(const std::string& dir) {
  const std::string node = dir + "/loop";
  return ::mknod(node.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0 ? node : "";
}

TEST_F(DiskImageTest, ABlockDeviceNeedsDeviceOn) {
  const std::string node = block_node(dir.path);
  if (node.empty()) GTEST_SKIP() << "mknod refused here: " << std::strerror(errno);
  const std::string why = open_error(options(node));
  EXPECT_TRUE(Says(why, "disk " + node + ": a block device"));
  EXPECT_TRUE(Says(why, "set block_device = true"));
  // With it the type is right; the loop device may still have no image
  // (empty) or be unopenable here (a nodev mount): anything but the type.
  DiskOptions o = options(node);
  o.block_device = true;
  const std::string past = open_error(o);
  EXPECT_EQ(past.find("block_device"), std::string::npos) << past;
  EXPECT_EQ(past.find("not a regular file"), std::string::npos) << past;
}

TEST_F(DiskImageTest, AFifoIsRefusedWithoutBlocking) {
  const std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(Says(open_error(options(fifo)), "a FIFO, not a regular file or a block device"));
}

// In a directory every user may write, sticky or not.
class SharedDirDisk : public testing::TestWithParam<mode_t> {
 protected:
  void SetUp() override {
    if (const char* why = vmm::test::SharedDirTraps::needs_root()) GTEST_SKIP() << why;
    traps_.emplace(GetParam());
  }
  static DiskOptions options(const std::string& path) {
    DiskOptions o;
    o.path = path;
    return o;
  }
  std::optional<vmm::test::SharedDirTraps> traps_;
};

TEST_P(SharedDirDisk, ALinkToRootsFileIsRefused) {
  const std::string why = open_error(options(traps_->link));
  EXPECT_TRUE(Says(why, "disk " + traps_->link + ": link is a symbolic link in " + traps_->dir));
  EXPECT_TRUE(Says(why, "kvmmio follows no links there: give the file's own path"));
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(SharedDirDisk, ALinkToABlockDeviceIsRefusedEvenWithDeviceOn) {
  DiskOptions o = options(traps_->dir + "/disk");
  ASSERT_EQ(::symlink("/dev/loop0", o.path.c_str()), 0);
  o.block_device = true;
  EXPECT_TRUE(Says(open_error(o), "disk is a symbolic link"));
}

TEST_P(SharedDirDisk, AnotherUsersFileIsRefused) {
  const std::string why = open_error(options(traps_->foreign));
  EXPECT_TRUE(Says(why, "disk " + traps_->foreign + ": owned by uid 65534"));
  EXPECT_TRUE(Says(why, "only when root or the user it runs as owns them"));
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(SharedDirDisk, TheUsersOwnImageIsAccepted) {
  const vmm::test::TrustPathOwner as_nobody(vmm::test::SharedDirTraps::kOtherUid);  // --user 65534
  EXPECT_EQ(open_error(options(traps_->foreign)), "(opened)");
}

INSTANTIATE_TEST_SUITE_P(StickyOrNot, SharedDirDisk, testing::ValuesIn(vmm::test::kSharedDirModes));

TEST(DiskImageLinks, ALinkWhereOnlyRootWritesIsFollowed) {
  vmm::test::TrustedDir dir;
  if (const char* why = dir.skip_reason()) GTEST_SKIP() << why;
  vmm::test::write_file(dir.file("disk.img"), std::vector<uint8_t>(4096, 0));
  ASSERT_EQ(::symlink("disk.img", dir.file("by-id").c_str()), 0);
  DiskOptions o;
  o.path = dir.file("by-id");
  EXPECT_EQ(open_error(o), "(opened)");
}

}  // namespace
}  // namespace kvmmio::block::test
