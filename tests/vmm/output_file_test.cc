// SPDX-License-Identifier: BSD-2-Clause
// OutputFile: opened early, written (possibly many times: --stats
// snapshots) by replacing a regular file whole, written in place to pipes,
// and removed again when kvmmio created it but never wrote it; by the rule
// of kvmmio/base/user_path.h, never through another user's link or into
// another user's file where others can write.
#include "vmm/process/output_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>

#include "kvmmio/base/error.h"
#include "kvmmio/base/unique_fd.h"
#include "vmm/process/privileges.h"
#include "tests/vmm/test_files.h"

namespace kvmmio::vmm {
namespace {

std::string read_text(const std::string& path) {
  const std::vector<uint8_t> bytes = test::read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

// The names in `dir`: no temporary file is ever left behind.
size_t entries(const std::string& dir) {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST(OutputFile, LaterWritesReplaceTheWholeContent) {
  test::TempDir dir;
  const std::string path = dir.file("stats.json");
  OutputFile out(path, "--stats");
  out.write(std::string("a long first document\n"));
  EXPECT_EQ(read_text(path), "a long first document\n");
  out.write(std::string("short\n"));
  EXPECT_EQ(read_text(path), "short\n");  // no tail of the first one
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(OutputFile, EachWriteIsANewFileRenamedIntoPlace) {
  // A reader that opened the previous version keeps reading all of it: the
  // new content never appears inside a file someone is reading.
  test::TempDir dir;
  const std::string path = dir.file("stats.json");
  OutputFile out(path, "--stats");
  out.write(std::string("first\n"));
  UniqueFd reader(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(reader);
  const ino_t before = inode_of(path);
  out.write(std::string("second\n"));
  EXPECT_NE(inode_of(path), before);
  char buf[16] = {};
  ASSERT_EQ(::read(reader.get(), buf, sizeof buf), 6);
  EXPECT_EQ(std::string(buf, 6), "first\n");
}

TEST(OutputFile, AReaderMayDeleteTheFileBetweenWrites) {
  // The benchmark deletes the stats file, sends SIGUSR1 and waits for it to
  // reappear.
  test::TempDir dir;
  const std::string path = dir.file("stats.json");
  OutputFile out(path, "--stats");
  out.write(std::string("one\n"));
  ASSERT_EQ(::unlink(path.c_str()), 0);
  out.write(std::string("two\n"));
  EXPECT_EQ(read_text(path), "two\n");
}

TEST(OutputFile, APipeIsWrittenInPlace) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const std::string path = "/proc/self/fd/" + std::to_string(write_end.get());
  OutputFile out(path, "--stats");
  out.write(std::string("one\n"));
  out.write(std::string("two\n"));
  char buf[16] = {};
  ASSERT_EQ(::read(read_end.get(), buf, sizeof buf), 8);
  EXPECT_EQ(std::string(buf, 8), "one\ntwo\n");
}

TEST(OutputFile, AFileItCreatedButNeverWroteIsRemoved) {
  test::TempDir dir;
  const std::string path = dir.file("never.json");
  { OutputFile out(path, "--stats"); }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(OutputFile, AnExistingFileNeverWrittenIsLeftAlone) {
  test::TempDir dir;
  const std::string path = dir.file("old.json");
  test::write_file(path, {'o', 'l', 'd'});
  { OutputFile out(path, "--stats"); }
  EXPECT_EQ(read_text(path), "old");
}

TEST(OutputFile, AnUnwritableDirectoryIsAUsageErrorNamingTheOption) {
  try {
    OutputFile out("/nonexistent-dir/stats.json", "--stats");
    FAIL() << "opened a file in a missing directory";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--stats /nonexistent-dir/stats.json"), std::string::npos)
        << e.what();
  }
}

// --user: the --stats file was made by root at the start, in a sticky
// directory such as /tmp; the unprivileged kvmmio may not replace it
// there, so it writes through the fd it opened as root.
[[noreturn]] void write_as_nobody(OutputFile& out) {
  drop_privileges(65534, 65534);
  out.write(std::string("written by 65534\n"));
  _exit(0);
}

TEST(OutputFileDeathTest, AfterDroppingPrivilegesAFileInAStickyDirectoryIsStillWritten) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop from";
  // Forked, not executed again: the child writes this test's file.
  GTEST_FLAG_SET(death_test_style, "fast");
  test::TempDir dir;
  const std::string sticky = dir.file("sticky");
  ASSERT_EQ(::mkdir(sticky.c_str(), 01777), 0);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  const std::string path = sticky + "/stats.json";
  OutputFile out(path, "--stats");
  EXPECT_EXIT(write_as_nobody(out), testing::ExitedWithCode(0), "");
  EXPECT_EQ(read_text(path), "written by 65534\n");
  EXPECT_EQ(entries(sticky), 1u);
}

TEST(OutputFile, AFullDeviceIsAUsageErrorNamingTheOption) {
  // --dump-dtb /dev/full: the write fails; kvmmio exits 2 for a UserError.
  OutputFile out("/dev/full", "--dump-dtb");
  try {
    out.write(std::string("a device tree"));
    FAIL() << "wrote to /dev/full";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("--dump-dtb /dev/full: cannot write: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(std::strerror(ENOSPC)), std::string::npos) << msg;
  }
}

TEST(OutputFile, DashIsStandardOutput) {
  test::TempDir dir;
  const std::string path = dir.file("stdout");
  // Standard output redirected to a file for the test, restored after.
  UniqueFd saved(::dup(STDOUT_FILENO));
  {
    UniqueFd file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    ASSERT_TRUE(file);
    ASSERT_EQ(::dup2(file.get(), STDOUT_FILENO), STDOUT_FILENO);
  }
  {
    OutputFile out("-", "--dump-dtb");
    out.write(std::string("to stdout\n"));
  }
  ASSERT_EQ(::dup2(saved.get(), STDOUT_FILENO), STDOUT_FILENO);
  EXPECT_EQ(read_text(path), "to stdout\n");
  EXPECT_FALSE(std::filesystem::exists("-"));  // no file named "-" in the working directory
}

// --stats and --dump-dtb in a directory every user may write, sticky or
// not: another user's link to root's file, or another user's file.
class SharedDirOutput : public testing::TestWithParam<std::tuple<const char*, mode_t>> {
 protected:
  void SetUp() override {
    if (const char* why = test::SharedDirTraps::needs_root()) GTEST_SKIP() << why;
    traps_.emplace(std::get<1>(GetParam()));
  }
  const std::string option() const { return std::get<0>(GetParam()); }
  // The refusal, or "(written)" after a write.
  std::string refusal(const std::string& path) {
    try {
      OutputFile out(path, option());
      out.write(std::string("kvmmio's output\n"));
    } catch (const UserError& e) {
      return e.what();
    }
    return "(written)";
  }
  std::optional<test::SharedDirTraps> traps_;
};

TEST_P(SharedDirOutput, ALinkToRootsFileIsRefused) {
  const std::string why = refusal(traps_->link);
  EXPECT_NE(why.find(option() + " " + traps_->link + ": link is a symbolic link in " + traps_->dir),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("kvmmio follows no links there"), std::string::npos) << why;
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(SharedDirOutput, AnotherUsersFileIsRefused) {
  const std::string why = refusal(traps_->foreign);
  EXPECT_NE(why.find(option() + " " + traps_->foreign + ": owned by uid 65534"), std::string::npos) << why;
  EXPECT_NE(why.find("only when root or the user it runs as owns them"), std::string::npos) << why;
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(SharedDirOutput, TheUsersOwnFileIsReplaced) {
  const test::TrustPathOwner as_nobody(test::SharedDirTraps::kOtherUid);  // --user 65534
  EXPECT_EQ(refusal(traps_->foreign), "(written)");
  EXPECT_EQ(read_text(traps_->foreign), "kvmmio's output\n");
  EXPECT_EQ(entries(traps_->dir), 2u) << "a temporary file left behind";
}

TEST_P(SharedDirOutput, AFifoWithoutAReaderIsRefusedAtOnce) {
  const std::string fifo = traps_->dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string why = refusal(fifo);
  EXPECT_NE(why.find(option() + " " + fifo + ": cannot write"), std::string::npos) << why;
  EXPECT_NE(why.find("reader"), std::string::npos) << why;
}

INSTANTIATE_TEST_SUITE_P(StickyOrNot, SharedDirOutput,
                         testing::Combine(testing::Values("--stats", "--dump-dtb"),
                                          testing::ValuesIn(test::kSharedDirModes)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)[2] == 's' ? "Stats" : "DumpDtb") +
                                  (std::get<1>(info.param) & S_ISVTX ? "Sticky" : "NotSticky");
                         });

TEST(OutputFile, ALinkWhereOnlyRootWritesIsFollowed) {
  test::TrustedDir dir;
  if (const char* why = dir.skip_reason()) GTEST_SKIP() << why;
  ASSERT_EQ(::symlink("stats.json", dir.file("latest").c_str()), 0);
  OutputFile out(dir.file("latest"), "--stats");
  out.write(std::string("one\n"));
  out.write(std::string("two\n"));
  EXPECT_EQ(read_text(dir.file("stats.json")), "two\n");
  struct stat st {};
  ASSERT_EQ(::lstat(dir.file("latest").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link itself was replaced";
}

}  // namespace
}  // namespace kvmmio::vmm
