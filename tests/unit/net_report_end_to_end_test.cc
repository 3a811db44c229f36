// SPDX-License-Identifier: BSD-2-Clause
// net_report end to end on files: a raw JSON-lines file and its micro JSON in a
// scratch directory, through read_runs_file, aggregate and the renderers;
// the JSON is read back and its key numbers checked.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "bench/report/read_runs.h"
#include "bench/report/render_json.h"
#include "bench/report/render_text.h"
#include "bench/report/report.h"
#include "tests/unit/net_report_test_data.h"
#include "tests/vmm/test_files.h"

namespace kvmmio::report {
namespace {

using Json = nlohmann::ordered_json;

class NetReportEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.file("raw.jsonl")) << test::kSampleRuns << test::kSampleMicroLine;
    std::ofstream(dir_.file("micro.json")) << test::kMicroJson;
    RawData raw;
    read_runs_file(dir_.file("raw.jsonl"), raw);
    report_ = aggregate(raw);
  }
  vmm::test::TempDir dir_;
  Report report_;
};

TEST_F(NetReportEndToEnd, JsonReadsBackWithTheExpectedNumbers) {
  const Json j = Json::parse(render_json(report_, "sample"));
  EXPECT_EQ(j["schema_version"].get<double>(), 2);
  EXPECT_EQ(j["title"].get<std::string>(), "sample");
  EXPECT_EQ(j["meta"]["kernel"].get<std::string>(), "6.1.0-57-arm64");
  EXPECT_EQ(j["meta"]["gic"].get<std::string>(), "3");

  ASSERT_EQ(j["iperf"].size(), 3u);
  const Json& host = j["iperf"][0];
  EXPECT_EQ(host["config"].get<std::string>(), "host");
  EXPECT_EQ(host["mtu"].get<double>(), 1500);
  EXPECT_EQ(host["streams"].get<double>(), 1);
  EXPECT_EQ(host["runs_ok"].get<double>(), 3);
  EXPECT_EQ(host["median_gbps"].get<double>(), 11);
  EXPECT_EQ(host["min_gbps"].get<double>(), 10);
  EXPECT_EQ(host["max_gbps"].get<double>(), 12);
  EXPECT_DOUBLE_EQ(host["spread_pct"].get<double>(), 200.0 / 11);
  EXPECT_EQ(host["bytes"].get<double>(), 20625000000.0);
  EXPECT_TRUE(host["per_gb"].is_null());

  const Json& trap = j["iperf"][2];
  EXPECT_EQ(trap["config"].get<std::string>(), "user-trap");
  EXPECT_EQ(trap["runs_ok"].get<double>(), 2);
  EXPECT_EQ(trap["runs_failed"].get<double>(), 1);
  EXPECT_EQ(trap["median_gbps"].get<double>(), 2.5);
  EXPECT_EQ(trap["ratio_to_user_trap"].get<double>(), 1);
  EXPECT_EQ(trap["per_gb"]["vcpu_exits"].get<double>(), 500000);
  EXPECT_EQ(trap["per_gb"]["vmm_irqs"].get<double>(), 6000);
  EXPECT_EQ(trap["per_gb"]["injected"].get<double>(), 4000);
  EXPECT_EQ(trap["per_gb"]["relayed"].get<double>(), 2000);
  EXPECT_EQ(j["iperf"][1]["ratio_to_user_trap"].get<double>(), 3.5);

  ASSERT_EQ(j["rr"].size(), 2u);
  EXPECT_EQ(j["rr"][1]["median_p50_us"].get<double>(), 100);
  EXPECT_EQ(j["rr"][1]["p50_ratio_to_host"].get<double>(), 2.5);

  ASSERT_EQ(j["micro"].size(), 1u);
  const Json& micro = j["micro"][0];
  EXPECT_EQ(micro["platform"].get<std::string>(), "host-x86_64");
  EXPECT_EQ(micro["file"].get<std::string>(), "micro.json");
  EXPECT_EQ(micro["us"]["irq_line_relay"].get<double>(), 30);
  EXPECT_EQ(micro["mmio_exit_per_ioeventfd"].get<double>(), 4);  // 10 / 2.5
  EXPECT_EQ(micro["irq_line_relay_per_irqfd"].get<double>(), 1.2);  // 30 / 25

  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0]["reason"].get<std::string>(), "iperf3_timeout");
  EXPECT_EQ(j["failures"][0]["source"].get<std::string>(), dir_.file("raw.jsonl") + ":9");
}

TEST_F(NetReportEndToEnd, TextHasEveryTable) {
  const std::string t = render_text(report_, "sample");
  for (const char* heading : {"Throughput:", "Latency:", "KVM-layer microbenchmarks:", "Failed runs"})
    EXPECT_NE(t.find(heading), std::string::npos) << heading;
  // The ratio rows: the name, then the one platform's ratio at the end.
  const auto line_of = [&](const std::string& start) {
    const size_t at = t.find("\n" + start);
    return at == std::string::npos ? "" : t.substr(at + 1, t.find('\n', at + 1) - at - 1);
  };
  EXPECT_TRUE(line_of("mmio_exit / ioeventfd").ends_with(" 4.00x")) << t;
  EXPECT_TRUE(line_of("irq_line_relay / irqfd").ends_with(" 1.20x")) << t;
  EXPECT_TRUE(line_of("user-trap").ends_with(" 500000      2000      6000        5000")) << t;
}

// The peer VMM's records and the counters read from outside, through a
// file: order, the peer ratios, the outside rates with an unreadable one,
// in report.json and report.txt.
TEST(NetReportEndToEndPeer, QemuConfigsAndOutsideCounters) {
  vmm::test::TempDir dir;
  std::ofstream(dir.file("raw.jsonl")) << test::kSampleRuns << test::kSamplePps << test::kSamplePeer;
  RawData raw;
  read_runs_file(dir.file("raw.jsonl"), raw);
  const Report report = aggregate(raw);
  EXPECT_EQ(report.configs, (std::vector<std::string>{"host", "vhost-irqfd", "vhost-irqfd-mirror", "user-trap",
                                                      "qemu-pci", "qemu-mmio"}));

  const Json j = Json::parse(render_json(report, "peer"));
  ASSERT_EQ(j["iperf"].size(), 6u);
  std::vector<std::string> order;
  for (const Json& c : j["iperf"]) order.push_back(c["config"].get<std::string>());
  EXPECT_EQ(order, report.configs);
  const Json& pci = j["iperf"][4];
  EXPECT_TRUE(pci["ratio_to_peer"].is_null());
  EXPECT_EQ(pci["ratio_to_host"].get<double>(), 8.0 / 11);
  EXPECT_EQ(pci["outside_per_gb"]["kvm_exits"].get<double>(), 5000);
  EXPECT_EQ(pci["outside_per_gb"]["kvm_halt_wakeup"].get<double>(), 1000);
  EXPECT_TRUE(pci["outside_per_gb"]["kvm_mmio_exit_kernel"].is_null());
  EXPECT_EQ(j["iperf"][5]["ratio_to_peer"].get<double>(), 0.5);
  EXPECT_EQ(j["iperf"][5]["outside_per_gb"]["kvm_mmio_exit_user"].get<double>(), 150000);
  EXPECT_EQ(j["iperf"][2]["ratio_to_peer"].get<double>(), 1.5);
  EXPECT_EQ(j["iperf"][2]["outside_per_gb"]["guest_irqs"].get<double>(), 3000);
  EXPECT_EQ(j["iperf"][3]["ratio_to_peer"].get<double>(), 0.3125);
  EXPECT_EQ(j["rr"][0]["p50_ratio_to_peer"].get<double>(), 0.5);
  EXPECT_EQ(j["rr"][0]["p99_ratio_to_peer"].get<double>(), 0.2);
  EXPECT_EQ(j["rr"][3]["config"].get<std::string>(), "qemu-mmio");
  EXPECT_EQ(j["rr"][3]["p99_ratio_to_peer"].get<double>(), 1.5);
  EXPECT_EQ(j["pps"][2]["outside_per_mpkt"]["kvm_mmio_exit_kernel"].get<double>(), 25000);
  EXPECT_EQ(j["iperf"][4].at("vmm_cpu_core_pct").get<double>(), 40);
  EXPECT_TRUE(j["iperf"][5].at("vmm_cpu_core_pct").is_null());
  EXPECT_EQ(j["pps"][2].at("vmm_cpu_core_pct").get<double>(), 50);
  EXPECT_EQ(j["pps"][3]["ratio_to_peer"].get<double>(), 0.75);

  const std::string t = render_text(report, "peer");
  for (const char* heading : {"Throughput:", "Latency:", "Packet rate:", "Counters read from outside the VMM",
                              "iperf3, per GB received", "udp_pps, per million datagrams received", "Failed runs"})
    EXPECT_NE(t.find(heading), std::string::npos) << heading;
  const size_t outside = t.find("Counters read from outside the VMM");
  const auto line_of = [&](const std::string& start) {
    const size_t at = t.find("\n" + start, outside);
    return at == std::string::npos ? "" : t.substr(at + 1, t.find('\n', at + 1) - at - 1);
  };
  EXPECT_TRUE(line_of("qemu-pci ").ends_with("  5000         200           -      1000       100      400   2000     40.0"))
      << t;
  // Written before vmm_cpu_ms: "-" for its rate and the % of a core.
  EXPECT_TRUE(line_of("qemu-mmio ").ends_with("200000      150000           0      1000         -        -   3000        -"))
      << t;
}

}  // namespace
}  // namespace kvmmio::report
