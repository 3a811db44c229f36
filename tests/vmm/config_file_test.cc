// SPDX-License-Identifier: BSD-2-Clause
// `kvmmio run --config FILE` (vmm/cli/config_file.h): the file's lines, and
// their options parsed where --config stands, mistakes named by line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_files.h"
#include "vmm/cli/config_file.h"
#include "vmm/cli/options.h"

namespace kvmmio::vmm {
namespace {

std::string message_of(const std::vector<std::string>& args) {
  try {
    parse_command_line(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

void write_text(const std::string& path, const std::string& text) {
  test::write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

TEST(ConfigFile, LinesAreKeyAndTheRestOfTheLine) {
  const auto o = parse_config_text(
      "# a VM\n\nkernel /boot/Image\n  mem=1G  \ncmdline root=/dev/vda rw  quiet\t\nnet tap=vm0\nnet tap=vm1\n", "f");
  ASSERT_EQ(o.size(), 5u);
  EXPECT_EQ(o[0].key, "kernel");
  EXPECT_EQ(o[0].value, "/boot/Image");
  EXPECT_EQ(o[0].line, 3);
  EXPECT_EQ(o[1].key, "mem");
  EXPECT_EQ(o[1].value, "1G");
  EXPECT_EQ(o[2].value, "root=/dev/vda rw  quiet") << "spaces inside a value stay";
  EXPECT_EQ(o[4].value, "tap=vm1");
  EXPECT_EQ(o[4].line, 7);
  EXPECT_TRUE(parse_config_text("", "f").empty());
  EXPECT_EQ(parse_config_text("mem 1G", "f").size(), 1u) << "no newline at the end";
}

TEST(ConfigFile, MistakesNameTheLine) {
  const std::pair<const char*, const char*> bad[] = {
      {"mem\n", "line 1: mem needs a value"},
      {"\n--mem 1G\n", "line 2: '--mem 1G': a line is KEY VALUE"},
      {"mem: 1G\n", "line 1: 'mem: 1G': a key is letters"},
      {"Mem 1G\n", "line 1: 'Mem 1G': a line is KEY VALUE"},
  };
  for (size_t i = 0; i < std::size(bad); ++i) {
    SCOPED_TRACE(bad[i].first);
    try {
      parse_config_text(bad[i].first, "--config f");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--config f, ") + bad[i].second), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(parse_config_text(std::string("mem 1\0G\n", 8), "f"), UsageError) << "a NUL byte";
}

TEST(ConfigFile, ItsOptionsStandWhereConfigStands) {
  test::TempDir dir;
  const std::string f = dir.file("vm0.conf");
  write_text(f, "kernel /boot/Image\ncmdline root=/dev/vda rw\nmem 1G\nnet tap=vm0\nname vm0\n");
  Command c = parse_command_line({"run", "--config", f, "--net", "tap=vm1", "--cpus", "2"});
  EXPECT_EQ(c.run.kernel, "/boot/Image");
  EXPECT_EQ(c.run.kernel_cmdline(), default_cmdline(ConsoleKind::kSerial) + " root=/dev/vda rw");
  EXPECT_EQ(c.run.mem, 1ull << 30);
  EXPECT_EQ(c.run.cpus, 2);
  ASSERT_EQ(c.run.nets.size(), 2u) << "net repeats across the file and the command line";
  EXPECT_EQ(c.run.nets[0].tap, "vm0");
  EXPECT_EQ(c.run.nets[1].tap, "vm1");
  EXPECT_EQ(c.run.name, "vm0");
  EXPECT_EQ(parse_command_line({"run", "--config=" + f}).run.kernel, "/boot/Image");
}

TEST(ConfigFile, OneDecisionPerOptionAndNoSurprises) {
  test::TempDir dir;
  const std::string f = dir.file("vm0.conf");
  write_text(f, "kernel /boot/Image\nmem 1G\n");
  EXPECT_NE(message_of({"run", "--config", f, "--mem", "2G"}).find("--mem is given twice; give it once (once in --config"),
            std::string::npos);
  EXPECT_NE(message_of({"run", "--config", f, "--config", f}).find("--config is given twice"), std::string::npos);
  EXPECT_NE(message_of({"run", "--config"}).find("--config needs a file"), std::string::npos);
  EXPECT_NE(message_of({"run", "--config", dir.file("none.conf")}).find("No such file"), std::string::npos);
  EXPECT_NE(message_of({"run", "--config", dir.path()}).find("--config " + dir.path()), std::string::npos)
      << "a directory";
  write_text(f, "kernal /boot/Image\n");
  EXPECT_NE(message_of({"run", "--config", f}).find("line 1: no option 'kernal'"), std::string::npos);
  write_text(f, "config other.conf\n");
  EXPECT_NE(message_of({"run", "--config", f}).find("line 1: a config file names no other"), std::string::npos);
  write_text(f, "help yes\n");
  EXPECT_NE(message_of({"run", "--config", f}).find("line 1: no option 'help'"), std::string::npos);
  write_text(f, std::string(kMaxConfigBytes + 1, '#'));
  EXPECT_NE(message_of({"run", "--config", f}).find("a config file has at most"), std::string::npos);
}

}  // namespace
}  // namespace kvmmio::vmm
