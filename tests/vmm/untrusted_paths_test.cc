// SPDX-License-Identifier: BSD-2-Clause
// --console ...,file=, --kernel and --initrd by the rule of
// kvmmio/base/user_path.h: in a directory every user may write (sticky or
// not), another user's link or file is refused, naming the path and the
// rule, and neither it nor what it leads to is touched. (--stats and
// --dump-dtb: output_file_test.cc; --disk: disk_image_test.cc.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "kvmmio/base/error.h"
#include "tests/vmm/test_files.h"
#include "vmm/console/console_setup.h"
#include "vmm/boot/image_loader.h"

namespace kvmmio::vmm {
namespace {

using Kind = ConsoleDestination::Kind;
using test::SharedDirTraps;


// Opens `path` as the option does; its refusal, or "(opened)".
using Opener = void (*)(const std::string& path);

void open_console_file(const std::string& path) {
  ConsoleEnds ends = open_console({Kind::kFile, path}, TerminalRole::kNotTerminal);
  // What a guest would print, were the open allowed.
  if (::write(ends.out, "guest\n", 6) != 6) throw std::runtime_error("console write failed");
}
void open_kernel(const std::string& path) { KernelImage k(path); }
void open_initrd(const std::string& path) { BootFile f(path, "--initrd"); }

struct Caller {
  const char* shown;  // how messages start, before the path
  Opener open;
};
const Caller kCallers[] = {
    {"--console ...,file=", open_console_file},
    {"--kernel ", open_kernel},
    {"--initrd ", open_initrd},
};

std::string refusal(const Caller& c, const std::string& path) {
  try {
    c.open(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(opened)";
}

testing::AssertionResult Says(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << message << "\" does not say \"" << part << "\"";
}

class UntrustedPaths : public testing::TestWithParam<std::tuple<Caller, mode_t>> {
 protected:
  void SetUp() override {
    if (const char* why = SharedDirTraps::needs_root()) GTEST_SKIP() << why;
    traps_.emplace(std::get<1>(GetParam()));
  }
  const Caller& caller() const { return std::get<0>(GetParam()); }
  std::optional<SharedDirTraps> traps_;
};

TEST_P(UntrustedPaths, ALinkToRootsFileIsRefused) {
  const std::string why = refusal(caller(), traps_->link);
  EXPECT_TRUE(Says(why, caller().shown + traps_->link + ": link is a symbolic link in " + traps_->dir));
  EXPECT_TRUE(Says(why, "other users can write; kvmmio follows no links there"));
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(UntrustedPaths, AnotherUsersFileIsRefused) {
  const std::string why = refusal(caller(), traps_->foreign);
  EXPECT_TRUE(Says(why, caller().shown + traps_->foreign + ": owned by uid 65534"));
  EXPECT_TRUE(Says(why, "only when root or the user it runs as owns them"));
  EXPECT_TRUE(traps_->untouched());
}

TEST_P(UntrustedPaths, AFifoNeverBlocks) {
  // Root's own FIFO without a reader: a console refuses it at once
  // (ENXIO), a boot file because it is no regular file.
  const std::string fifo = traps_->dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string why = refusal(caller(), fifo);
  EXPECT_TRUE(Says(why, caller().shown + fifo)) << why;
  EXPECT_TRUE(why.find("reader") != std::string::npos || why.find("not a regular file") != std::string::npos)
      << why;
}

INSTANTIATE_TEST_SUITE_P(StickyOrNot, UntrustedPaths,
                         testing::Combine(testing::ValuesIn(kCallers), testing::ValuesIn(test::kSharedDirModes)),
                         [](const auto& info) {
                           const std::string shown = std::get<0>(info.param).shown;
                           const std::string mode = std::get<1>(info.param) & S_ISVTX ? "Sticky" : "NotSticky";
                           return (shown[2] == 'c' ? "Console" : shown[2] == 'k' ? "Kernel" : "Initrd") + mode;
                         });

TEST(UntrustedPaths, TheUsersOwnFileIsAccepted) {
  if (const char* why = SharedDirTraps::needs_root()) GTEST_SKIP() << why;
  SharedDirTraps traps(01777);
  test::write_file(traps.foreign, test::make_image(0, 1 << 20, test::kModernFlags));
  const test::TrustPathOwner as_nobody(SharedDirTraps::kOtherUid);
  EXPECT_NO_THROW(open_kernel(traps.foreign));
  EXPECT_NO_THROW(open_initrd(traps.foreign));
  EXPECT_NO_THROW(open_console_file(traps.foreign));
}

TEST(UntrustedPaths, LinksWhereOnlyRootWritesAreFollowed) {
  test::TrustedDir dir;
  if (const char* why = dir.skip_reason()) GTEST_SKIP() << why;
  test::write_file(dir.file("Image"), test::make_image(0, 1 << 20, test::kModernFlags));
  ASSERT_EQ(::symlink("Image", dir.file("vmlinuz").c_str()), 0);
  EXPECT_NO_THROW(open_kernel(dir.file("vmlinuz")));
  EXPECT_NO_THROW(open_initrd(dir.file("vmlinuz")));
  ASSERT_EQ(::symlink("console.log", dir.file("console").c_str()), 0);
  open_console_file(dir.file("console"));  // a new file where the link leads
  const std::vector<uint8_t> log = test::read_file(dir.file("console.log"));
  EXPECT_EQ(std::string(log.begin(), log.end()), "guest\n");
}

TEST(UntrustedPaths, AConsoleFifoWithAReaderIsWritten) {
  test::TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const UniqueFd reader(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  ASSERT_TRUE(reader);
  open_console_file(fifo);
  char buf[8] = {};
  EXPECT_EQ(::read(reader.get(), buf, sizeof buf), 6);
}

}  // namespace
}  // namespace kvmmio::vmm
