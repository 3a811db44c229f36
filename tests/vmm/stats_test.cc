// SPDX-License-Identifier: BSD-2-Clause
// The --stats JSON: the documented keys, per-vCPU exits by reason, device
// counters, string escaping, and well-formed nesting.
#include "vmm/stats/stats.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "vmm/stats/device_stats.h"

namespace kvmmio::vmm {
namespace {

// A small structural check: brackets balance outside strings, strings end.
bool balanced(const std::string& json) {
  std::string stack;
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      else if (static_cast<unsigned char>(c) < 0x20)
        return false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      stack += c;
    else if (c == '}' || c == ']') {
      if (stack.empty() || (c == '}') != (stack.back() == '{')) return false;
      stack.pop_back();
    }
  }
  return stack.empty() && !in_string;
}

MachineStats sample() {
  MachineStats m;
  m.cpus = 2;
  m.mem_bytes = 256u << 20;
  m.gic = "v3";
  m.wall_time_seconds = 4.25;
  m.startup.phases_ms = {{"setup", 1.23456}, {"vm", 2}};
  m.exit_status = 0;
  m.stop_reason = "poweroff";
  VcpuExitCounts c0;
  c0.mmio = 120;
  c0.interrupted = 1;
  c0.system_event = 1;
  m.vcpus.push_back(vcpu_stats(0, c0));
  VcpuExitCounts c1;
  c1.mmio = 3;
  m.vcpus.push_back(vcpu_stats(1, c1));
  m.devices.push_back(DeviceStats{
      "uart0", "pl011", 0x09000000, 0x1000, 1, {{"tx_bytes", 100}, {"guest_errors", 0}}});
  return m;
}

TEST(Stats, VcpuExitsByReasonAndTotal) {
  VcpuExitCounts c;
  c.mmio = 5;
  c.hlt = 2;
  c.unknown = 1;
  const VcpuStats s = vcpu_stats(3, c);
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.total_exits, 8u);
  ASSERT_EQ(s.exits.size(), 8u);
  EXPECT_EQ(s.exits[0], (std::pair<std::string, uint64_t>{"mmio", 5}));
}

TEST(Stats, JsonHasTheDocumentedShape) {
  const std::string json = to_json(sample());
  EXPECT_TRUE(balanced(json)) << json;
  for (const char* line : {"  \"schema_version\": 1,",
                           "  \"cpus\": 2,",
                           "  \"mem_bytes\": 268435456,",
                           "  \"gic\": \"v3\",",
                           "  \"wall_time_seconds\": 4.25,",
                           "  \"startup_ms\": {",
                           "    \"setup\": 1.235,",
                           "    \"vm\": 2.0",
                           "  \"exit_status\": 0,",
                           "  \"stop_reason\": \"poweroff\",",
                           "  \"reboots\": 0,",
                           "  \"unclaimed_mmio\": 0,",
                           "  \"event_loop_wakeups\": 0,",
                           "      \"index\": 0,",
                           "      \"total_exits\": 122,",
                           "        \"mmio\": 120,",
                           "        \"system_event\": 1,",
                           "      \"index\": 1,",
                           "      \"total_exits\": 3,",
                           "      \"name\": \"uart0\",",
                           "      \"type\": \"pl011\",",
                           "      \"base\": 150994944,",
                           "      \"spi\": 1,",
                           "        \"tx_bytes\": 100,",
                           "        \"guest_errors\": 0"})
    EXPECT_NE(json.find(std::string(line) + "\n"), std::string::npos) << line << "\n" << json;
}

TEST(Stats, EmptyListsAndEscapedStrings) {
  MachineStats m;
  m.stop_reason = "failure: \"x\"\n\tat \\ \x01";
  const std::string json = to_json(m);
  EXPECT_TRUE(balanced(json)) << json;
  EXPECT_NE(json.find("\"vcpus\": [],"), std::string::npos);
  EXPECT_NE(json.find("\"devices\": []\n"), std::string::npos);
  EXPECT_NE(json.find(R"("failure: \"x\"\n\tat \\ \u0001")"), std::string::npos) << json;
}

// docs/usage.md shows a --stats document: it must be what the writer
// writes for that machine, byte for byte.
TEST(Stats, TheUsageExampleIsWhatTheWriterWrites) {
  const char* src = std::getenv("KVMMIO_SRCDIR");
  if (!src) GTEST_SKIP() << "KVMMIO_SRCDIR is not set (make check sets it)";
  std::ifstream in(std::string(src) + "/docs/usage.md");
  ASSERT_TRUE(in) << "cannot read docs/usage.md";
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const size_t section = text.find("## Statistics (`--stats FILE`)");
  ASSERT_NE(section, std::string::npos);
  const size_t begin = text.find("```json\n", section);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = text.find("```\n", begin + 8);
  ASSERT_NE(end, std::string::npos);
  const std::string example = text.substr(begin + 8, end - begin - 8);

  MachineStats m;
  m.cpus = 1;
  m.mem_bytes = 268435456;
  m.gic = "v3";
  m.wall_time_seconds = 8.321;
  // Binary fractions: the writer's rounding to 0.001 ms leaves them as is.
  m.startup.exec_to_main_ms = 10;
  m.startup.phases_ms = {{"setup", 2.125},      {"vm", 1.5},          {"vcpus", 0.75},
                         {"vgic", 0.25},        {"devices", 0.5},     {"device_tree", 0.125},
                         {"image_load", 4.875}, {"confine", 0.625},   {"first_run", 0.25}};
  m.startup.to_first_run_ms = 21;
  m.stop_reason = "poweroff";
  m.event_loop_wakeups = 12;
  m.rss_outside_guest_ram_kib = 1380;
  m.private_outside_guest_ram_kib = 412;
  m.threads = 4;
  VcpuExitCounts exits;
  exits.mmio = 224;
  exits.system_event = 1;
  m.vcpus.push_back(vcpu_stats(0, exits));
  console::Pl011::Counters uart;
  uart.tx_bytes = 163;
  m.devices.push_back({"uart0", "pl011", 150994944, 4096, 1, pl011_counters(uart)});
  EXPECT_EQ(example, to_json(m));
}

// The control socket's "stats" answer is the same document on one line;
// "api" is there only with --api-socket.
TEST(Stats, TheOneLineDocumentIsTheSameAndApiIsThereOnlyWithTheSocket) {
  MachineStats m;
  m.cpus = 2;
  m.paused = true;
  const std::string line = to_json_line(m);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(line), nlohmann::json::parse(to_json(m)));
  EXPECT_EQ(nlohmann::json::parse(line)["paused"], true);
  EXPECT_FALSE(nlohmann::json::parse(line).contains("api"));
  m.api_socket = "/run/vm0.sock";
  m.api = {{"requests", 3}, {"errors", 1}};
  const auto doc = nlohmann::json::parse(to_json_line(m));
  EXPECT_EQ(doc["api"]["socket"], "/run/vm0.sock");
  EXPECT_EQ(doc["api"]["counters"]["errors"], 1);
}

}  // namespace
}  // namespace kvmmio::vmm
