// SPDX-License-Identifier: BSD-2-Clause
// The rule of kvmmio/base/user_path.h on real files: links are followed
// only where no other user can write, other users' files are refused
// there, the --user kvmmio becomes is trusted, and nothing blocks.
#include "kvmmio/base/user_path.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "kvmmio/base/error.h"
#include "tests/vmm/test_files.h"

namespace kvmmio {
namespace {

using vmm::test::kSharedDirModes;
using vmm::test::SharedDirTraps;
using vmm::test::TempDir;
using vmm::test::TrustedDir;
using vmm::test::TrustPathOwner;


std::string refusal(const std::string& path) {
  try {
    const FoundFile f = find_user_file(path, "--test " + path);
    return f.exists() ? "(found)" : std::string("(system: ") + std::strerror(f.error) + ")";
  } catch (const UserError& e) {
    return e.what();
  }
}

testing::AssertionResult Says(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << message << "\" does not say \"" << part << "\"";
}

class SharedDir : public testing::TestWithParam<mode_t> {
 protected:
  void SetUp() override {
    if (const char* why = SharedDirTraps::needs_root()) GTEST_SKIP() << why;
    traps_.emplace(GetParam());
  }
  std::optional<SharedDirTraps> traps_;
};

TEST_P(SharedDir, ALinkIsRefusedNamingThePathAndTheRule) {
  const std::string why = refusal(traps_->link);
  EXPECT_TRUE(Says(why, "--test " + traps_->link + ": link is a symbolic link in " + traps_->dir));
  EXPECT_TRUE(Says(why, "a directory other users can write; kvmmio follows no links there"));
  EXPECT_TRUE(Says(why, "give the file's own path"));
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(SharedDir, ALinkOnTheWayIsRefusedToo) {
  ASSERT_EQ(::symlink(".", (traps_->dir + "/here").c_str()), 0);
  EXPECT_TRUE(Says(refusal(traps_->dir + "/here/foreign"), "here is a symbolic link"));
}

TEST_P(SharedDir, EverythingBelowIsUntrustedEvenRootsOwnDirectory) {
  const std::string sub = traps_->dir + "/root-only";
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  ASSERT_EQ(::symlink(traps_->victim.c_str(), (sub + "/link").c_str()), 0);
  // Below the first directory others can write (this one, or /tmp above).
  EXPECT_TRUE(Says(refusal(sub + "/link"), "link is a symbolic link in " + sub + ", below /"));
}

TEST_P(SharedDir, TrustStartsAnewAtAMountOnlyRootWrites) {
  // A mount's root cannot be renamed away by whoever writes the directory
  // it is mounted on, as /proc and /dev under a "/" everyone may write.
  const std::string mnt = traps_->dir + "/mnt";
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  if (::mount("kvmmio-test", mnt.c_str(), "tmpfs", 0, "mode=0755") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  ASSERT_EQ(::symlink(traps_->victim.c_str(), (mnt + "/link").c_str()), 0);
  // Followed (no refusal), to the victim's own place.
  EXPECT_TRUE(find_user_path(mnt + "/x", "--test").trusted()) << "the mount itself";
  const PathPlace place = find_user_path(mnt + "/link", "--test");
  EXPECT_EQ(place.error, 0);
  EXPECT_EQ(place.full_path(), traps_->victim) << "the link in the mount is followed";
  ::umount2(mnt.c_str(), MNT_DETACH);
}

TEST_P(SharedDir, AnotherUsersFileIsRefusedNamingItsOwner) {
  const std::string why = refusal(traps_->foreign);
  EXPECT_TRUE(Says(why, "--test " + traps_->foreign + ": owned by uid 65534, in " + traps_->dir));
  EXPECT_TRUE(Says(why, "only when root or the user it runs as owns them"));
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(SharedDir, TheUserKvmmioBecomesIsTrusted) {
  const TrustPathOwner as_nobody(SharedDirTraps::kOtherUid);
  const FoundFile f = find_user_file(traps_->foreign, "--test");
  ASSERT_TRUE(f.exists());
  EXPECT_EQ(f.st.st_uid, SharedDirTraps::kOtherUid);
  EXPECT_TRUE(Says(refusal(traps_->link), "symbolic link")) << "others can still write the directory";
}

TEST_P(SharedDir, NewFilesAreNeverAnExistingOneNorALink) {
  EXPECT_THROW(find_user_path(traps_->link, "--test"), UserError);
  PathPlace fresh = find_user_path(traps_->dir + "/new", "--test");
  EXPECT_FALSE(fresh.trusted());
  fresh.name = "link";  // as if planted after the walk
  EXPECT_FALSE(create_in_place(fresh, O_WRONLY, 0600));
  EXPECT_EQ(errno, EEXIST);
  fresh.name = "new";
  std::string a, b;
  const UniqueFd ta = create_temporary(fresh, 0600, a), tb = create_temporary(fresh, 0600, b);
  ASSERT_TRUE(ta && tb);
  EXPECT_NE(a, b) << "a name another user could guess";
  ASSERT_EQ(::unlinkat(fresh.dir.get(), a.c_str(), 0), 0);
  ASSERT_EQ(::unlinkat(fresh.dir.get(), b.c_str(), 0), 0);
  EXPECT_TRUE(traps_->untouched());
}

INSTANTIATE_TEST_SUITE_P(StickyOrNot, SharedDir, testing::ValuesIn(kSharedDirModes));

TEST(UserPath, LinksWhereOnlyRootWritesAreFollowed) {
  TrustedDir dir;
  if (const char* why = dir.skip_reason()) GTEST_SKIP() << why;
  vmm::test::write_file(dir.file("target"), {'t'});
  ASSERT_EQ(::symlink("target", dir.file("relative").c_str()), 0);
  ASSERT_EQ(::symlink(dir.file("target").c_str(), dir.file("absolute").c_str()), 0);
  ASSERT_EQ(::symlink(".", dir.file("self").c_str()), 0);
  struct stat target {};
  ASSERT_EQ(::stat(dir.file("target").c_str(), &target), 0);
  for (const std::string link : {"relative", "absolute", "self/self/relative"}) {
    const FoundFile f = find_user_file(dir.file(link), "--test");
    ASSERT_TRUE(f.exists()) << link << ": " << std::strerror(f.error);
    EXPECT_EQ(f.st.st_ino, target.st_ino) << link;
    EXPECT_TRUE(f.place.trusted());
  }
  // A relative path walks from the working directory.
  const std::string relative = std::filesystem::relative(dir.file("relative")).string();
  EXPECT_TRUE(find_user_file(relative, "--test").exists()) << relative;
}

TEST(UserPath, ALoopOfLinksIsELOOP) {
  TrustedDir dir;
  if (const char* why = dir.skip_reason()) GTEST_SKIP() << why;
  ASSERT_EQ(::symlink("b", dir.file("a").c_str()), 0);
  ASSERT_EQ(::symlink("a", dir.file("b").c_str()), 0);
  EXPECT_EQ(find_user_file(dir.file("a"), "--test").error, ELOOP);
}

TEST(UserPath, ProcLinksToOpenFilesAreOpenedThrough) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const UniqueFd r(fds[0]), w(fds[1]);
  const FoundFile f = find_user_file("/proc/self/fd/" + std::to_string(w.get()), "--test");
  ASSERT_TRUE(f.exists()) << std::strerror(f.error);
  EXPECT_TRUE(f.place.magic_link);
  const UniqueFd fd = open_found(f, "--test", O_WRONLY);
  ASSERT_TRUE(fd);
  ASSERT_EQ(::write(fd.get(), "x", 1), 1);
  char c = 0;
  EXPECT_EQ(::read(r.get(), &c, 1), 1);
  // Where udev or systemd made it (a bare devtmpfs, as the arm64
  // platform's L1 has, has no /dev/stdout).
  struct stat st {};
  if (::lstat("/dev/stdout", &st) == 0) {
    EXPECT_TRUE(find_user_file("/dev/stdout", "--test").exists()) << "/dev/stdout -> /proc/self/fd/1";
  }
}

TEST(UserPath, AFifoWithoutAReaderFailsAtOnceAndOneWithAReaderBlocksAsUsual) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const FoundFile f = find_user_file(fifo, "--test");
  ASSERT_TRUE(f.exists());
  EXPECT_FALSE(open_found(f, "--test", O_WRONLY));
  EXPECT_EQ(errno, ENXIO);
  const UniqueFd reader(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  ASSERT_TRUE(reader);
  const UniqueFd writer = open_found(f, "--test", O_WRONLY);
  ASSERT_TRUE(writer);
  EXPECT_EQ(::fcntl(writer.get(), F_GETFL) & O_NONBLOCK, 0) << "the caller did not ask for O_NONBLOCK";
  const UniqueFd nonblocking = open_found(f, "--test", O_WRONLY | O_NONBLOCK);
  EXPECT_NE(::fcntl(nonblocking.get(), F_GETFL) & O_NONBLOCK, 0);
}

TEST(UserPath, AGroupMayWriteOnlyWhenItIsRoots) {
  if (const char* why = SharedDirTraps::needs_root()) GTEST_SKIP() << why;
  TrustedDir dir;
  if (const char* why = dir.skip_reason()) GTEST_SKIP() << why;
  const std::string shared = dir.file("group");
  ASSERT_EQ(::mkdir(shared.c_str(), 0775), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0775), 0);
  ASSERT_EQ(::chown(shared.c_str(), 0, 0), 0);
  EXPECT_TRUE(find_user_path(shared + "/x", "--test").trusted()) << "group root";
  ASSERT_EQ(::chown(shared.c_str(), 0, 65534), 0);
  EXPECT_FALSE(find_user_path(shared + "/x", "--test").trusted()) << "group 65534 may write";
}

TEST(UserPath, TheSystemsRefusalsComeBackAsErrno) {
  EXPECT_EQ(find_user_file("/nonexistent-dir/x", "--test").error, ENOENT);
  EXPECT_EQ(find_user_file("/proc/self/status/x", "--test").error, ENOTDIR);
  EXPECT_EQ(find_user_path("/", "--test").error, EISDIR);
}

}  // namespace
}  // namespace kvmmio
