// SPDX-License-Identifier: BSD-2-Clause
// net_report's renderers and its JSON pieces: the text rows, nulls and
// escapes in JSON, the gnuplot data layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/report/render_gnuplot.h"
#include "bench/report/render_json.h"
#include "bench/report/render_text.h"
#include "bench/report/report.h"
#include "tests/unit/net_report_test_data.h"

namespace kvmmio::report {
namespace {

using Json = nlohmann::ordered_json;

Report sample() { return aggregate(test::parse(test::kSampleRuns)); }

// An iperf run of `config` with the seven outside counters (1 KVM exit over
// 1000 bytes: 1e6 per GB).
std::string iperf_line_outside(const std::string& config) { return test::iperf_line(config, 1, 1, test::kOutside); }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The line that starts with `prefix` (after collapsing runs of spaces).
std::string row(const std::string& text, const std::string& prefix) {
  for (std::string l : lines(text)) {
    std::string squeezed;
    for (char c : l)
      if (c != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += c;
    if (squeezed.rfind(prefix, 0) == 0) return squeezed;
  }
  return "(no row " + prefix + ")";
}

TEST(NetReportText, ThroughputRowsCarryEveryColumn) {
  const std::string t = render_text(sample(), "T");
  EXPECT_EQ(row(t, "host 1500"), "host 1500 g2h 1 11.00 18.2 3 1.00 4.40 - - - -");
  EXPECT_EQ(row(t, "vhost-irqfd 1500"), "vhost-irqfd 1500 g2h 1 8.75 17.1 2 0.80 3.50 200 0 0 5000");
  EXPECT_EQ(row(t, "user-trap 1500"), "user-trap 1500 g2h 1 2.50 40.0 2 +1f 0.23 1.00 500000 2000 6000 5000");
}

TEST(NetReportText, LatencyRowsFailuresAndWidth) {
  const std::string t = render_text(sample(), "My title");
  EXPECT_EQ(lines(t)[0], "My title");
  EXPECT_EQ(row(t, "gic="), "gic=3 seconds=5 repeats=3 kernel=6.1.0-57-arm64");
  EXPECT_EQ(row(t, "vhost-irqfd 1500 10000"), "vhost-irqfd 1500 10000 100.0 120.0 200.0 1 2.50");
  EXPECT_EQ(row(t, "iperf config=user-trap"),
            "iperf config=user-trap mtu=1500 dir=g2h streams=1 rep=2: iperf3_timeout (raw:9)");
  for (const std::string& l : lines(t)) EXPECT_LT(l.size(), 130u) << l;
}

TEST(NetReportText, PacketRateRowsAndFailures) {
  const std::string t = render_text(aggregate(test::parse(std::string(test::kSampleRuns) + test::kSamplePps)), "T");
  EXPECT_NE(t.find("Packet rate: udp_pps"), std::string::npos);
  EXPECT_EQ(row(t, "host 1500 64"), "host 1500 64 g2h 110000 18.2 0.0 2 1.00 - - - -");
  EXPECT_EQ(row(t, "vhost-irqfd 1500 64"), "vhost-irqfd 1500 64 g2h 20000 50.0 12.5 2 0.18 20000 20000 0 10000");
  EXPECT_EQ(row(t, "user-trap 1500 1472"), "user-trap 1500 1472 h2g - - - 0 +1f - - - - -");
  EXPECT_EQ(row(t, "pps config="), "pps config=user-trap mtu=1500 payload=1472 dir=h2g rep=1: udp_pps_failed (raw:17)");
  for (const std::string& l : lines(t)) EXPECT_LT(l.size(), 130u) << l;
  EXPECT_EQ(render_text(sample(), "T").find("Packet rate"), std::string::npos);
}

TEST(NetReportText, RetriedRunsUnderTheirCellWithEachEarlierReason) {
  const std::string t = render_text(aggregate(test::parse(test::kSampleAttempts)), "T");
  // Counted by their last attempts: host 10 and 12 Gbit/s, user-trap 2 and
  // a failure (11 / 2 = 5.5 x user-trap).
  EXPECT_EQ(row(t, "host 1500"), "host 1500 g2h 1 11.00 18.2 2 1.00 5.50 - - - -");
  EXPECT_EQ(row(t, "user-trap 1500"), "user-trap 1500 g2h 1 2.00 0.0 1 +1f 0.18 1.00 - - - -");
  // Failed once, under its last attempt's reason.
  EXPECT_EQ(row(t, "iperf config=user-trap"),
            "iperf config=user-trap mtu=1500 dir=g2h streams=1 rep=1: iperf3_timeout (raw:5)");
  const size_t retried = t.find("\nRetried runs (counted by their last attempt; the earlier, failed attempts are not)\n");
  ASSERT_NE(retried, std::string::npos) << t;
  EXPECT_EQ(t.substr(retried + 1), "Retried runs (counted by their last attempt; the earlier, failed attempts are not)\n"
                                   "\n"
                                   "  iperf config=host mtu=1500 dir=g2h streams=1: 1 of 2 runs retried\n"
                                   "    rep=1: ok at attempt 2 (raw:2); attempt 1 failed: iperf3_failed (raw:1)\n"
                                   "\n"
                                   "  iperf config=user-trap mtu=1500 dir=g2h streams=1: 1 of 2 runs retried\n"
                                   "    rep=1: failed at attempt 2: iperf3_timeout (raw:5); attempt 1 failed: "
                                   "iperf3_failed (raw:4)\n");
  EXPECT_EQ(render_text(sample(), "T").find("Retried"), std::string::npos);
}

TEST(NetReportText, GroupsAreSeparatedByABlankLine) {
  const Report r = aggregate(test::parse(
      R"({"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":1000000000})" "\n"
      R"({"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":1000000000})" "\n"
      R"({"kind":"iperf","config":"host","mtu":1500,"dir":"h2g","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":1000000000})" "\n"));
  const std::vector<std::string> l = lines(render_text(r, "T"));
  size_t i = 0;
  while (i < l.size() && l[i].rfind("user-trap", 0) != 0) ++i;
  ASSERT_LT(i + 2, l.size());
  EXPECT_EQ(l[i + 1], "");
  EXPECT_EQ(l[i + 2].rfind("host", 0), 0u);
}

TEST(NetReportText, MicroPlatformsSideBySide) {
  Report r;
  MicroPlatform a, b;
  a.result.platform = "arm64-gicv3";
  a.result.arch = "aarch64";
  a.result.us = {{"ioeventfd", 2}, {"mmio_exit", 7}};
  a.mmio_exit_per_ioeventfd = 3.5;
  b.result.platform = "host-x86_64";
  b.result.arch = "x86_64";
  b.result.us = {{"mmio_exit", 9.842}, {"irqfd", 25.875}};
  r.micro = {a, b};
  const std::string t = render_text(r, "T");
  EXPECT_EQ(row(t, "us per operation"), "us per operation arm64-gicv3 host-x86_64");
  EXPECT_EQ(row(t, "ioeventfd"), "ioeventfd 2.000 -");
  EXPECT_EQ(row(t, "mmio_exit "), "mmio_exit 7.000 9.842");
  EXPECT_EQ(row(t, "irqfd"), "irqfd - 25.875");
  EXPECT_EQ(row(t, "mmio_exit /"), "mmio_exit / ioeventfd 3.50x -");
}

TEST(NetReportJson, IsOneDocumentWithEscapedStringsAndAFinalNewline) {
  Report r = sample();
  r.meta.emplace_back("note", "a\"b\\c\n\x01");
  const std::string text = render_json(r, "T");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.rfind("{\n  \"schema_version\": ", 0), 0u) << text;
  const Json j = Json::parse(text);
  EXPECT_EQ(j["meta"]["note"].get<std::string>(), "a\"b\\c\n\x01");
  EXPECT_EQ(j.begin().key(), "schema_version");  // members in the documented order
}

TEST(NetReportJson, AbsentValuesAreNullAndFieldsTyped) {
  const Json j = Json::parse(render_json(sample(), "T"));
  EXPECT_EQ(j["schema_version"].get<double>(), kJsonSchemaVersion);
  const Json& host = j["iperf"][0];
  EXPECT_EQ(host["config"].get<std::string>(), "host");
  EXPECT_TRUE(host["per_gb"].is_null());
  EXPECT_EQ(host["dir"].get<std::string>(), "g2h");
  EXPECT_TRUE(j["rr"][0]["p50_ratio_to_host"].is_number());
  EXPECT_TRUE(j["micro"].empty());
  EXPECT_TRUE(j["failures"][0]["streams"].is_number());
}

TEST(NetReportJson, RetriesPerCellAndEachRetriedRunWithItsEarlierAttempts) {
  const Json j = Json::parse(render_json(aggregate(test::parse(test::kSampleAttempts)), "T"));
  ASSERT_EQ(j["iperf"].size(), 2u);
  EXPECT_EQ(j["iperf"][0]["runs_ok"].get<double>(), 2);
  EXPECT_EQ(j["iperf"][0]["runs_failed"].get<double>(), 0);
  EXPECT_EQ(j["iperf"][0]["retries"].get<double>(), 1);
  EXPECT_EQ(j["iperf"][1]["runs_failed"].get<double>(), 1);
  EXPECT_EQ(j["iperf"][1]["retries"].get<double>(), 1);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0]["reason"].get<std::string>(), "iperf3_timeout");
  ASSERT_EQ(j["retried"].size(), 2u);
  const Json& ok = j["retried"][0];
  EXPECT_EQ(ok["config"].get<std::string>(), "host");
  EXPECT_EQ(ok["rep"].get<double>(), 1);
  EXPECT_EQ(ok["attempt"].get<double>(), 2);
  EXPECT_EQ(ok["outcome"].get<std::string>(), "ok");
  EXPECT_TRUE(ok["reason"].is_null());
  EXPECT_EQ(ok["source"].get<std::string>(), "raw:2");
  EXPECT_EQ(ok["earlier"], Json::parse(R"([{"attempt":1,"reason":"iperf3_failed","source":"raw:1"}])"));
  const Json& failed = j["retried"][1];
  EXPECT_EQ(failed["outcome"].get<std::string>(), "failed");
  EXPECT_EQ(failed["reason"].get<std::string>(), "iperf3_timeout");
  EXPECT_EQ(failed["earlier"][0]["reason"].get<std::string>(), "iperf3_failed");
  // Before "claims", as documented.
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys.end() - std::find(keys.begin(), keys.end(), "retried"), 2);
  // Runs each tried once give neither, as before retries were recorded.
  const Json once = Json::parse(render_json(sample(), "T"));
  EXPECT_FALSE(once.contains("retried"));
  for (const Json& c : once["iperf"]) EXPECT_FALSE(c.contains("retries"));
}

TEST(NetReportJson, PpsCellsAndTheirFailures) {
  const Json j = Json::parse(render_json(aggregate(test::parse(std::string(test::kSampleRuns) + test::kSamplePps)), "T"));
  ASSERT_EQ(j["pps"].size(), 3u);
  const Json& v = j["pps"][1];
  EXPECT_EQ(v["config"].get<std::string>(), "vhost-irqfd");
  EXPECT_EQ(v["payload"].get<double>(), 64);
  EXPECT_EQ(v["dir"].get<std::string>(), "g2h");
  EXPECT_EQ(v["median_pps"].get<double>(), 20000);
  EXPECT_EQ(v["median_loss_pct"].get<double>(), 12.5);
  EXPECT_EQ(v["sent"].get<double>(), 90000);
  EXPECT_EQ(v["received"].get<double>(), 80000);
  EXPECT_EQ(v["per_mpkt"]["vcpu_exits"].get<double>(), 20000);
  EXPECT_EQ(v["per_mpkt"]["guest_irqs"].get<double>(), 10000);
  EXPECT_TRUE(j["pps"][0]["per_mpkt"].is_null());
  EXPECT_TRUE(j["pps"][2]["median_pps"].is_null());
  const Json& f = j["failures"][1];
  EXPECT_EQ(f["kind"].get<std::string>(), "pps");
  EXPECT_EQ(f["payload"].get<double>(), 1472);
  EXPECT_TRUE(f["streams"].is_null());
  EXPECT_TRUE(j["failures"][0]["payload"].is_null());
  EXPECT_TRUE(Json::parse(render_json(sample(), "T"))["pps"].empty());
}

TEST(NetReportGnuplot, PacketRatesGetAPanelOfTheirOwn) {
  const GnuplotFiles g = render_gnuplot(aggregate(test::parse(std::string(test::kSampleRuns) + test::kSamplePps)), "T");
  const std::vector<std::string> data = lines(g.pps_data);
  ASSERT_EQ(data.size(), 4u);
  EXPECT_EQ(data[1], "# host vhost-irqfd user-trap");
  EXPECT_EQ(data[2], "\"g2h 64 B\" 110000.0000 100000.0000 120000.0000 20000.0000 15000.0000 25000.0000 - - -");
  EXPECT_EQ(data[3], "\"h2g 1472 B\" - - - - - - - - -");
  EXPECT_NE(g.script.find("set multiplot layout 3,1 title 'T'\n"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("pps_data = here . '/pps.dat'\n"), std::string::npos);
  EXPECT_NE(g.script.find("plot pps_data index 0 using 2:3:4:xtic(1) title 'host', \\\n     '' index 0 using 5:6:7 title "
                          "'vhost-irqfd', \\\n     '' index 0 using 8:9:10 title 'user-trap (1 of 1 runs failed)'\n"),
            std::string::npos)
      << g.script;
  // Packet rate between throughput and the VMM-work panel.
  EXPECT_LT(g.script.find("plot data index 0"), g.script.find("plot pps_data"));
  EXPECT_LT(g.script.find("plot pps_data"), g.script.find("plot data index 1"));
  // Without packet rates, two panels.
  EXPECT_NE(render_gnuplot(sample(), "T").script.find("set multiplot layout 2,1"), std::string::npos);
}

TEST(NetReportGnuplot, DataHasOneRowPerGroupAndThreeColumnsPerConfig) {
  const Report r = aggregate(test::parse(
      R"({"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":10000000000})" "\n"
      R"({"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":2,"bytes":1,"seconds":1,"bps":12000000000})" "\n"
      R"({"kind":"iperf","config":"vhost-irqfd","mtu":9000,"dir":"h2g","streams":4,"rep":1,"bytes":1,"seconds":1,"bps":5000000000})" "\n"
      R"({"kind":"rr","config":"latency-only","mtu":1500,"rep":1,"failed":"x"})" "\n"));
  const GnuplotFiles g = render_gnuplot(r, "It's a title");
  const std::vector<std::string> data = lines(g.data);
  // Block 0, two blank lines, block 1 (no counters in these runs: header only).
  ASSERT_EQ(data.size(), 7u) << g.data;
  EXPECT_EQ(data[1], "# host vhost-irqfd");
  EXPECT_EQ(data[2], "\"g2h 1x 1500\" 11.0000 10.0000 12.0000 - - -");
  EXPECT_EQ(data[3], "\"h2g 4x 9000\" - - - 5.0000 5.0000 5.0000");
  EXPECT_EQ(data[4], "");
  EXPECT_EQ(data[5], "");
  EXPECT_NE(g.script.find("set multiplot layout 2,1 title 'It''s a title'"), std::string::npos);
  EXPECT_NE(g.script.find("median of n = 1-2 runs per bar"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("plot data index 0 using 2:3:4:xtic(1) title 'host', \\\n"
                          "     '' index 0 using 5:6:7 title 'vhost-irqfd'\n"),
            std::string::npos)
      << g.script;
  EXPECT_NE(g.script.find("no VMM counters in the raw data"), std::string::npos);
  EXPECT_EQ(g.script.find("latency-only"), std::string::npos);
  EXPECT_NE(g.script.find("set output here . '/throughput.png'"), std::string::npos);
}

TEST(NetReportGnuplot, SecondPanelHasEachModesCountersPerGbAndTheLegendCountsFailures) {
  const Report r = aggregate(test::parse(
      R"({"kind":"iperf","config":"vhost-irqfd","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":2000000000,"seconds":1,)"
      R"("bps":1e9,"counters":{"vcpu_exits":4000,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":2000}})" "\n"
      R"({"kind":"iperf","config":"vhost-irqfd","mtu":1500,"dir":"h2g","streams":1,"rep":1,"bytes":1000000000,"seconds":1,)"
      R"("bps":1e9,"counters":{"vcpu_exits":500,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":250}})" "\n"
      R"({"kind":"iperf","config":"vhost-relay","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":1000000000,"seconds":1,)"
      R"("bps":1e9,"counters":{"vcpu_exits":0,"wakeups":900,"injected":0,"relayed":900,"trapped":0,"polled":0,"guest_irqs":900}})" "\n"
      R"({"kind":"iperf","config":"vhost-relay","mtu":1500,"dir":"g2h","streams":1,"rep":2,"failed":"iperf3_failed"})" "\n"));
  const GnuplotFiles g = render_gnuplot(r, "T");
  const std::vector<std::string> data = lines(g.data);
  // vhost-irqfd: (4000 + 500) exits over 3 GB; vhost-relay: 900 relayed over 1 GB.
  ASSERT_GE(data.size(), 2u);
  EXPECT_EQ(data[data.size() - 2], "\"vhost-irqfd\" 1500.0 0.0");
  EXPECT_EQ(data[data.size() - 1], "\"vhost-relay\" 0.0 900.0");
  EXPECT_NE(g.script.find("plot data index 1 using 2:xtic(1) title 'vCPU exits/GB' lc rgb"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("title 'vhost-relay (1 of 2 runs failed)'"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("title 'vhost-irqfd'"), std::string::npos);
}

TEST(NetReportGnuplot, NoIperfRunsStillGivesAScript) {
  const GnuplotFiles g = render_gnuplot(Report{}, "T");
  EXPECT_NE(g.script.find("no iperf runs"), std::string::npos);
  EXPECT_EQ(g.script.find("using"), std::string::npos);
}

TEST(NetReportText, DiskRowsAndFailures) {
  const std::string t = render_text(aggregate(test::parse(std::string(test::kSampleRuns) + test::kSampleFio)), "T");
  EXPECT_NE(t.find("Disk: fio, guest on its virtio-blk disk or a file in its virtio-fs shared folder"), std::string::npos) << t;
  // MB/s 16.4, IO/s 4000, x host 0.040, per Mreq exits wake-ups VMM irqs
  // guest irqs, per GB exits wake-ups guest irqs.
  EXPECT_EQ(row(t, "blk-io_uring-mirror"),
            "blk-io_uring-mirror randread 4k 32 16.4 4000 0.0 1 0.040 0 500000 250000 300000 0 100000 60000");
  EXPECT_EQ(row(t, "host randread"), "host randread 4k 32 409.6 100000 40.0 2 1.000 - - - - - - -");
  EXPECT_EQ(row(t, "blk-io_uring-trap"), "blk-io_uring-trap read 1M 1 - - - 0 +1f - - - - - - - -");
  EXPECT_NE(t.find("fio config=blk-io_uring-trap rw=read bs=1048576 depth=1 rep=1: fio_failed"), std::string::npos);
  EXPECT_EQ(render_text(sample(), "T").find("Disk: fio"), std::string::npos);
}

TEST(NetReportJson, FioCellsPerMreqAndPerGb) {
  const Json j = Json::parse(render_json(aggregate(test::parse(std::string(test::kSampleRuns) + test::kSampleFio)), "T"));
  ASSERT_EQ(j["fio"].size(), 3u);
  const Json& v = j["fio"][2];
  EXPECT_EQ(v["config"].get<std::string>(), "blk-io_uring-mirror");
  EXPECT_EQ(v["rw"].get<std::string>(), "randread");
  EXPECT_EQ(v["bs"].get<double>(), 4096);
  EXPECT_EQ(v["depth"].get<double>(), 32);
  EXPECT_EQ(v["median_iops"].get<double>(), 4000);
  EXPECT_EQ(v["median_mbps"].get<double>(), 16.384);
  EXPECT_EQ(v["ratio_to_host"].get<double>(), 0.04);
  EXPECT_EQ(v["ios"].get<double>(), 4000);
  EXPECT_EQ(v["per_mreq"]["vcpu_exits"].get<double>(), 0);
  EXPECT_EQ(v["per_mreq"]["wakeups"].get<double>(), 500000);
  EXPECT_EQ(v["per_gb"]["guest_irqs"].get<double>(), 60000);
  EXPECT_TRUE(j["fio"][1]["per_mreq"].is_null());
  const Json& f = j["failures"][1];
  EXPECT_EQ(f["kind"].get<std::string>(), "fio");
  EXPECT_EQ(f["rw"].get<std::string>(), "read");
  EXPECT_EQ(f["bs"].get<double>(), 1048576);
  EXPECT_TRUE(Json::parse(render_json(sample(), "T"))["fio"].empty());
}

TEST(NetReportGnuplot, DiskCellsGetAPanelOfGuestsOverTheHost) {
  const GnuplotFiles g = render_gnuplot(aggregate(test::parse(std::string(test::kSampleRuns) + test::kSampleFio)), "T");
  const std::vector<std::string> data = lines(g.fio_data);
  ASSERT_EQ(data.size(), 8u);
  EXPECT_EQ(data[1], "# blk-io_uring-mirror blk-io_uring-trap");
  EXPECT_EQ(data[2], "\"read 1M q1\" - - - - - -");
  EXPECT_EQ(data[3], "\"randread 4k q32\" 0.0400 0.0400 0.0400 - - -");
  // The second block: the counters per million requests of the configs
  // with counters (the trap's one run failed: none). 4000 requests, 0
  // exits, 2000 wake-ups, 1200 guest interrupts.
  EXPECT_EQ(data[4], "");
  EXPECT_EQ(data[5], "");
  EXPECT_EQ(data[6], "# net_report disk counters: config, vCPU exits, VMM wake-ups, guest interrupts per million "
                     "requests (all its fio runs)");
  EXPECT_EQ(data[7], "\"blk-io_uring-mirror\" 0.0 500000.0 300000.0");
  EXPECT_NE(g.script.find("set multiplot layout 4,1 title 'T'\n"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("fio_data = here . '/fio.dat'\n"), std::string::npos);
  EXPECT_LT(g.script.find("plot fio_data index 0"), g.script.find("plot fio_data index 1"));
  EXPECT_LT(g.script.find("plot fio_data index 1"), g.script.find("plot data index 1"));
}

// Disk cells without VMM counters (the host's alone, or runs that all
// failed) draw no counters panel and write no second block.
TEST(NetReportGnuplot, DiskCellsWithoutCountersDrawNoCountersPanel) {
  const std::string no_counters =
      R"({"kind":"fio","config":"blk-io_uring-mirror","rw":"randread","bs":4096,"depth":32,"rep":1,"bytes":20000000,)"
      R"("ios":4000,"seconds":1,"iops":4000,"bw_bps":16384000})" "\n";
  const GnuplotFiles g = render_gnuplot(aggregate(test::parse(std::string(test::kSampleRuns) + no_counters)), "T");
  EXPECT_EQ(lines(g.fio_data).size(), 3u) << g.fio_data;
  EXPECT_EQ(g.script.find("fio_data index 1"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("set multiplot layout 3,1 title 'T'\n"), std::string::npos) << g.script;
}

// Without a host fio cell (make check's matrix) the panel draws IO/s:
// a ratio to nothing left gnuplot no valid point and failed the chart.
TEST(NetReportGnuplot, DiskCellsWithoutTheHostDrawIops) {
  const std::string guest_only =
      R"({"kind":"fio","config":"blk-io_uring-mirror","rw":"randread","bs":4096,"depth":32,"rep":1,"bytes":20000000,)"
      R"("ios":4000,"seconds":1,"iops":4000,"bw_bps":16384000,"counters":{"vcpu_exits":0,"wakeups":2000,"injected":1000,)"
      R"("relayed":0,"trapped":0,"polled":0,"guest_irqs":1200}})" "\n";
  const GnuplotFiles g = render_gnuplot(aggregate(test::parse(std::string(test::kSampleRuns) + guest_only)), "T");
  const std::vector<std::string> data = lines(g.fio_data);
  ASSERT_EQ(data.size(), 7u);
  EXPECT_EQ(data[0], "# net_report disk IO/s: group, then median min max for each config:");
  EXPECT_EQ(data[2], "\"randread 4k q32\" 4000.0000 4000.0000 4000.0000");
  EXPECT_NE(g.script.find("set ylabel 'guest IO/s'\n"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("(no host run)"), std::string::npos);
}

Report with_vsock() { return aggregate(test::parse(std::string(test::kSampleRuns) + test::kSampleVsock)); }

// kSampleVsock's figures: Gbit/s, spread, n, x host, then exits, wake-ups,
// VMM irqs and guest irqs per GB; after the disk table; the outside
// counters of the cell that has them; its failure.
TEST(NetReportText, VsockRowsWithTheirRatioToTheHost) {
  const std::string t = render_text(aggregate(test::parse(std::string(test::kSampleRuns) + test::kSampleFio +
                                                          test::kSampleVsock)),
                                    "T");
  const size_t at = t.find("\nvsock: host <-> guest over AF_VSOCK, receiver Gbit/s, median over completed runs (n; +Nf = "
                           "N failed)\n");
  ASSERT_NE(at, std::string::npos) << t;
  EXPECT_LT(t.find("\nDisk: fio"), at);
  const std::string v = t.substr(at, t.find("Counters read from outside") - at);
  EXPECT_EQ(row(v, "config dir"), "config dir median % n host /GB /GB /GB /GB");
  EXPECT_EQ(row(v, "host g2h"), "host g2h 50.00 40.0 2 1.00 - - - -");
  EXPECT_EQ(row(v, "vsock-mirror g2h"), "vsock-mirror g2h 12.50 40.0 2 0.25 20.0 0 0 2000");
  EXPECT_EQ(row(v, "host h2g"), "host h2g 30.00 0.0 1 1.00 - - - -");
  EXPECT_EQ(row(v, "vsock-mirror h2g"), "vsock-mirror h2g 12.00 0.0 1 +1f 0.40 0 0 0 200");
  // Cells of each direction together, a blank line between directions.
  EXPECT_NE(v.find(" 2000\n\nhost "), std::string::npos) << v;
  const size_t outside = t.find("\nvsock, per GB received\n");
  ASSERT_NE(outside, std::string::npos) << t;
  const std::string o = t.substr(outside);
  EXPECT_EQ(row(o, "config dir exits"), "config dir exits to user in kernel wake-ups switches ms irqs % core");
  EXPECT_EQ(row(o, "vsock-mirror g2h"), "vsock-mirror g2h 200 0 0 1000 0.800 6.4 2000 1.0");
  EXPECT_EQ(row(o, "vsock-mirror h2g"), "(no row vsock-mirror h2g)");
  EXPECT_EQ(row(t, "vsock config="), "vsock config=vsock-mirror dir=h2g rep=2: vsock_stream_failed (raw:23)");
  for (const std::string& l : lines(v)) EXPECT_LT(l.size(), 130u) << l;  // (the disk table is wider)
  EXPECT_EQ(render_text(sample(), "T").find("vsock"), std::string::npos);
}

TEST(NetReportJson, VsockCellsWithTheirRatioToTheHost) {
  const Json j = Json::parse(render_json(with_vsock(), "T"));
  ASSERT_EQ(j["vsock"].size(), 4u);
  const Json& host = j["vsock"][0];
  EXPECT_EQ(host["config"].get<std::string>(), "host");
  EXPECT_EQ(host["median_gbps"].get<double>(), 50);
  EXPECT_EQ(host["ratio_to_host"].get<double>(), 1);
  EXPECT_TRUE(host["per_gb"].is_null());
  EXPECT_TRUE(host["outside_per_gb"].is_null());
  const Json& v = j["vsock"][1];
  std::vector<std::string> keys;
  for (const auto& [k, x] : v.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"config", "mtu", "dir", "runs_ok", "runs_failed", "median_gbps", "min_gbps",
                                            "max_gbps", "spread_pct", "ratio_to_host", "bytes", "per_gb",
                                            "outside_per_gb", "vmm_cpu_core_pct"}));
  EXPECT_EQ(v["config"].get<std::string>(), "vsock-mirror");
  EXPECT_TRUE(v["mtu"].is_null());
  EXPECT_EQ(v["dir"].get<std::string>(), "g2h");
  EXPECT_EQ(v["runs_ok"].get<double>(), 2);
  EXPECT_EQ(v["median_gbps"].get<double>(), 12.5);
  EXPECT_EQ(v["min_gbps"].get<double>(), 10);
  EXPECT_EQ(v["max_gbps"].get<double>(), 15);
  EXPECT_DOUBLE_EQ(v["spread_pct"].get<double>(), 40);
  EXPECT_EQ(v["ratio_to_host"].get<double>(), 0.25);
  EXPECT_EQ(v["bytes"].get<double>(), 6.25e9);
  EXPECT_DOUBLE_EQ(v["per_gb"]["vcpu_exits"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(v["per_gb"]["guest_irqs"].get<double>(), 2000);
  EXPECT_EQ(v["per_gb"]["vmm_irqs"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(v["outside_per_gb"]["kvm_exits"].get<double>(), 200);
  EXPECT_EQ(v["outside_per_gb"].size(), 7u);
  EXPECT_DOUBLE_EQ(v["vmm_cpu_core_pct"].get<double>(), 1);
  const Json& h2g = j["vsock"][3];
  EXPECT_EQ(h2g["dir"].get<std::string>(), "h2g");
  EXPECT_EQ(h2g["median_gbps"].get<double>(), 12);
  EXPECT_EQ(h2g["runs_failed"].get<double>(), 1);
  EXPECT_EQ(h2g["ratio_to_host"].get<double>(), 0.4);
  EXPECT_TRUE(h2g["outside_per_gb"].is_null());
  EXPECT_TRUE(h2g["vmm_cpu_core_pct"].is_null());
  const Json& f = j["failures"][1];
  EXPECT_EQ(f["kind"].get<std::string>(), "vsock");
  EXPECT_EQ(f["dir"].get<std::string>(), "h2g");
  EXPECT_TRUE(f["mtu"].is_null());
  // Present and empty without vsock runs, right after fio.
  const Json plain = Json::parse(render_json(sample(), "T"));
  ASSERT_TRUE(plain.contains("vsock"));
  EXPECT_TRUE(plain["vsock"].is_array());
  EXPECT_TRUE(plain["vsock"].empty());
  std::vector<std::string> top;
  for (const auto& [k, x] : plain.items()) top.push_back(k);
  EXPECT_EQ(std::find(top.begin(), top.end(), "vsock") - std::find(top.begin(), top.end(), "fio"), 1);
}

// A guest's vsock cells get a panel, host bars beside the guest's, from
// the last block of throughput.dat; the host's loopback alone gets none,
// and leaves the chart and its data as they were.
TEST(NetReportGnuplot, VsockCellsOfAGuestGetAPanel) {
  const GnuplotFiles g = render_gnuplot(with_vsock(), "T");
  const std::vector<std::string> data = lines(g.data);
  ASSERT_GE(data.size(), 4u);
  EXPECT_EQ(data[data.size() - 4], "# net_report vsock Gbit/s: group, then median min max for each config:");
  EXPECT_EQ(data[data.size() - 3], "# host vsock-mirror");
  EXPECT_EQ(data[data.size() - 2], "\"g2h\" 50.0000 40.0000 60.0000 12.5000 10.0000 15.0000");
  EXPECT_EQ(data[data.size() - 1], "\"h2g\" 30.0000 30.0000 30.0000 12.0000 12.0000 12.0000");
  EXPECT_NE(g.script.find("set multiplot layout 3,1 title 'T'\n"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("set title 'vsock: Gbit/s per direction"), std::string::npos) << g.script;
  EXPECT_NE(g.script.find("median of n = 1-2 runs per bar"), std::string::npos) << g.script;
  // Blocks with data before it: the iperf groups and the modes' counters.
  EXPECT_NE(g.script.find("plot data index 2 using 2:3:4:xtic(1) title 'host', \\\n"
                          "     '' index 2 using 5:6:7 title 'vsock-mirror (1 of 4 runs failed)'\n"),
            std::string::npos)
      << g.script;
  EXPECT_LT(g.script.find("plot data index 2"), g.script.find("plot data index 1"));  // before the VMM work
  // Its bars have error bars whatever panel came before it (the disk's
  // counters leave the histograms clustered, which takes one column).
  const size_t vsock_panel = g.script.find("# Panel: vsock.");
  ASSERT_NE(vsock_panel, std::string::npos);
  EXPECT_LT(g.script.find("set style histogram errorbars", vsock_panel), g.script.find("plot data index 2"));
  // Without iperf runs, the vsock block is the first with data.
  const GnuplotFiles only = render_gnuplot(aggregate(test::parse(test::kSampleVsock)), "T");
  EXPECT_NE(only.script.find("plot data index 0 using 2:3:4:xtic(1) title 'host', \\\n"
                             "     '' index 0 using 5:6:7 title 'vsock-mirror (1 of 4 runs failed)'\n"),
            std::string::npos)
      << only.script;
  EXPECT_NE(only.script.find("no iperf runs in the raw data"), std::string::npos);
  // The host alone: no panel, the same files as without vsock.
  const std::string host_only = R"({"kind":"vsock","config":"host","dir":"g2h","rep":1,"bytes":1,"seconds":1,"bps":8})";
  const GnuplotFiles h = render_gnuplot(aggregate(test::parse(std::string(test::kSampleRuns) + host_only)), "T");
  const GnuplotFiles none = render_gnuplot(sample(), "T");
  EXPECT_EQ(h.script, none.script);
  EXPECT_EQ(h.data, none.data);
  EXPECT_EQ(none.script.find("vsock"), std::string::npos);
  EXPECT_EQ(none.data.find("vsock"), std::string::npos);
}

Report with_peer() {
  return aggregate(test::parse(std::string(test::kSampleRuns) + test::kSamplePps + test::kSamplePeer));
}

// qemu-pci's column beside the host's and user-trap's; kSamplePeer's
// comment works the figures out.
TEST(NetReportText, RatiosToThePeerVmm) {
  const std::string t = render_text(with_peer(), "T");
  EXPECT_EQ(row(t, "Gbit/s spread"), "Gbit/s spread x x user- x qemu- exits wake-ups VMM irqs guest irqs") << t;
  EXPECT_EQ(row(t, "config MTU dir streams median"), "config MTU dir streams median % n host trap pci /GB /GB /GB /GB");
  EXPECT_EQ(row(t, "host 1500 g2h"), "host 1500 g2h 1 11.00 18.2 3 1.00 4.40 1.38 - - - -");
  EXPECT_EQ(row(t, "vhost-irqfd-mirror 1500 g2h"), "vhost-irqfd-mirror 1500 g2h 1 12.00 0.0 1 1.09 4.80 1.50 100 200 0 3000");
  EXPECT_EQ(row(t, "qemu-pci 1500 g2h 1 8.00"), "qemu-pci 1500 g2h 1 8.00 50.0 2 0.73 3.20 - - - - -");
  EXPECT_EQ(row(t, "qemu-mmio 1500 g2h 1 4.00"), "qemu-mmio 1500 g2h 1 4.00 0.0 1 0.36 1.60 0.50 - - - -");
  // Latency: p50 and p99 against qemu-pci's.
  EXPECT_EQ(row(t, "config MTU median"), "config MTU median us us us n host qemu-pci qemu-pci");
  EXPECT_EQ(row(t, "vhost-irqfd 1500 10000"), "vhost-irqfd 1500 10000 100.0 120.0 200.0 1 2.50 1.25 0.50");
  EXPECT_EQ(row(t, "qemu-pci 1500 12500"), "qemu-pci 1500 12500 80.0 100.0 400.0 1 2.00 - -");
  EXPECT_EQ(row(t, "qemu-mmio 1500 8000"), "qemu-mmio 1500 8000 120.0 150.0 600.0 1 3.00 1.50 1.50");
  // Packet rate.
  EXPECT_EQ(row(t, "vhost-irqfd 1500 64"), "vhost-irqfd 1500 64 g2h 20000 50.0 12.5 2 0.18 0.50 20000 20000 0 10000");
  EXPECT_EQ(row(t, "qemu-mmio 1500 64 g2h 30000"), "qemu-mmio 1500 64 g2h 30000 0.0 0.0 2 0.27 0.75 - - - -");
  EXPECT_EQ(row(t, "user-trap 1500 1472"), "user-trap 1500 1472 h2g - - - 0 +1f - - - - - -");
  for (const std::string& l : lines(t)) EXPECT_LT(l.size(), 130u) << l;
  // Without a qemu-pci cell the tables keep their columns.
  const std::string plain = render_text(sample(), "T");
  EXPECT_EQ(plain.find("qemu-pci"), std::string::npos);
  EXPECT_EQ(plain.find("Counters read from outside"), std::string::npos);
}

TEST(NetReportText, CountersReadFromOutsideTheVmm) {
  const std::string t = render_text(with_peer(), "T");
  const size_t at = t.find("Counters read from outside the VMM");
  ASSERT_NE(at, std::string::npos) << t;
  const std::string o = t.substr(at, t.find("Failed runs") - at);
  EXPECT_NE(o.find("\niperf3, per GB received\n"), std::string::npos) << o;
  EXPECT_NE(o.find("\nudp_pps, per million datagrams received\n"), std::string::npos) << o;
  EXPECT_EQ(o.find("fio, per million requests"), std::string::npos) << o;  // no fio cells
  EXPECT_EQ(row(o, "KVM MMIO exits"), "KVM MMIO exits MMIO exits halt VMM ctxt VMM CPU guest VMM CPU");
  EXPECT_EQ(row(o, "config MTU dir streams"),
            "config MTU dir streams exits to user in kernel wake-ups switches ms irqs % core");
  EXPECT_EQ(row(o, "vhost-irqfd-mirror"), "vhost-irqfd-mirror 1500 g2h 1 1000 0 500 200 100 0 3000 0.0");
  EXPECT_EQ(row(o, "qemu-pci 1500 g2h"), "qemu-pci 1500 g2h 1 5000 200 - 1000 100 400 2000 40.0");  // kernel: null in rep 2
  // Written before vmm_cpu_ms: its two columns are "-".
  EXPECT_EQ(row(o, "qemu-mmio 1500 g2h"), "qemu-mmio 1500 g2h 1 200000 150000 0 1000 - - 3000 -");
  EXPECT_EQ(row(o, "config MTU payload dir"),
            "config MTU payload dir exits to user in kernel wake-ups switches ms irqs % core");
  EXPECT_EQ(row(o, "qemu-pci 1500 64"), "qemu-pci 1500 64 g2h 100000 5000 25000 50000 2500 12500 12500 50.0");
  // Each table's lines (headers, rule, rows) are as wide as each other:
  // every column right-aligned to the last.
  for (const char* unit : {"\niperf3, per GB received\n\n", "\nudp_pps, per million datagrams received\n\n"}) {
    const size_t from = o.find(unit) + std::string(unit).size();
    const std::vector<std::string> table = lines(o.substr(from, o.find("\n\n", from) - from));
    ASSERT_GE(table.size(), 4u) << unit;
    for (const std::string& l : table) EXPECT_EQ(l.size(), table[0].size()) << unit << l;
    EXPECT_EQ(table[2], std::string(table[0].size(), '-'));
  }
  // Cells without outside counters have no row: host, vhost-irqfd, and
  // qemu-mmio's packet rate (one run without them).
  EXPECT_EQ(row(o, "host"), "(no row host)");
  EXPECT_EQ(row(o, "vhost-irqfd "), "(no row vhost-irqfd )");
  EXPECT_EQ(row(o, "qemu-mmio 1500 64"), "(no row qemu-mmio 1500 64)");
  // Before the microbenchmarks and the failures.
  EXPECT_LT(t.find("Packet rate:"), at);
}

TEST(NetReportText, CountersReadFromOutsideForFioPerMillionRequests) {
  const std::string t = render_text(aggregate(test::parse(test::kFioOutside)), "T");
  EXPECT_NE(t.find("\nfio, per million requests\n"), std::string::npos) << t;
  EXPECT_EQ(row(t, "config rw bs depth exits"),
            "config rw bs depth exits to user in kernel wake-ups switches ms irqs % core");
  EXPECT_EQ(row(t, "blk-io_uring-mirror randread 4k 32 100000"),
            "blk-io_uring-mirror randread 4k 32 100000 0 50000 500000 - 87500 300000 35.0");
}

TEST(NetReportJson, PeerRatiosAndOutsideRates) {
  const Json j = Json::parse(render_json(with_peer(), "T"));
  ASSERT_EQ(j["iperf"].size(), 6u);
  const Json& pci = j["iperf"][4];
  EXPECT_EQ(pci["config"].get<std::string>(), "qemu-pci");
  EXPECT_TRUE(pci["ratio_to_peer"].is_null());
  EXPECT_TRUE(pci["per_gb"].is_null());
  ASSERT_TRUE(pci["outside_per_gb"].is_object());
  EXPECT_EQ(pci["outside_per_gb"].size(), 7u);  // every name, null where unreadable
  EXPECT_EQ(pci["outside_per_gb"]["kvm_exits"].get<double>(), 5000);
  EXPECT_TRUE(pci["outside_per_gb"]["kvm_mmio_exit_kernel"].is_null());
  EXPECT_EQ(pci["outside_per_gb"].at("vmm_cpu_ms").get<double>(), 400);
  EXPECT_EQ(pci["outside_per_gb"]["guest_irqs"].get<double>(), 2000);
  std::vector<std::string> keys;  // kinds.h order
  for (const auto& [k, v] : pci["outside_per_gb"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"kvm_exits", "kvm_mmio_exit_user", "kvm_mmio_exit_kernel", "kvm_halt_wakeup",
                                            "vmm_ctxt_switches", "vmm_cpu_ms", "guest_irqs"}));
  EXPECT_EQ(pci.at("vmm_cpu_core_pct").get<double>(), 40);
  const Json& mmio = j["iperf"][5];
  EXPECT_EQ(mmio["config"].get<std::string>(), "qemu-mmio");
  EXPECT_EQ(mmio["ratio_to_peer"].get<double>(), 0.5);
  EXPECT_EQ(mmio["outside_per_gb"]["kvm_mmio_exit_kernel"].get<double>(), 0);
  EXPECT_TRUE(mmio["outside_per_gb"]["vmm_ctxt_switches"].is_null());
  ASSERT_TRUE(mmio["outside_per_gb"].contains("vmm_cpu_ms"));  // a record of six: null, not omitted
  EXPECT_TRUE(mmio["outside_per_gb"].at("vmm_cpu_ms").is_null());
  ASSERT_TRUE(mmio.contains("vmm_cpu_core_pct"));
  EXPECT_TRUE(mmio.at("vmm_cpu_core_pct").is_null());
  EXPECT_EQ(j["iperf"][0]["ratio_to_peer"].get<double>(), 1.375);
  EXPECT_TRUE(j["iperf"][0]["outside_per_gb"].is_null());
  EXPECT_EQ(j["iperf"][2]["per_gb"]["vcpu_exits"].get<double>(), 100);
  EXPECT_EQ(j["iperf"][2]["outside_per_gb"]["kvm_exits"].get<double>(), 1000);
  EXPECT_EQ(j["iperf"][2].at("vmm_cpu_core_pct").get<double>(), 0);
  EXPECT_TRUE(j["iperf"][0].at("vmm_cpu_core_pct").is_null());  // host
  EXPECT_FALSE(j["rr"][0].contains("vmm_cpu_core_pct"));  // rr carries no counters
  // rr: p50 and p99.
  const Json& rr = j["rr"][1];
  EXPECT_EQ(rr["config"].get<std::string>(), "vhost-irqfd");
  EXPECT_EQ(rr["p50_ratio_to_peer"].get<double>(), 1.25);
  EXPECT_EQ(rr["p99_ratio_to_peer"].get<double>(), 0.5);
  EXPECT_TRUE(j["rr"][2]["p50_ratio_to_peer"].is_null());
  // pps.
  const Json& ppci = j["pps"][2];
  EXPECT_EQ(ppci["config"].get<std::string>(), "qemu-pci");
  EXPECT_EQ(ppci["outside_per_mpkt"]["kvm_exits"].get<double>(), 100000);
  EXPECT_EQ(ppci["outside_per_mpkt"]["guest_irqs"].get<double>(), 12500);
  EXPECT_EQ(ppci["outside_per_mpkt"].at("vmm_cpu_ms").get<double>(), 12500);
  EXPECT_EQ(ppci.at("vmm_cpu_core_pct").get<double>(), 50);
  EXPECT_TRUE(j["pps"][3].at("vmm_cpu_core_pct").is_null());
  EXPECT_EQ(j["pps"][1]["ratio_to_peer"].get<double>(), 0.5);
  EXPECT_TRUE(j["pps"][3]["outside_per_mpkt"].is_null());  // a qemu-mmio run without them
  // Without a peer: null, not omitted.
  const Json plain = Json::parse(render_json(sample(), "T"));
  EXPECT_TRUE(plain["iperf"][1].contains("ratio_to_peer"));
  EXPECT_TRUE(plain["iperf"][1]["ratio_to_peer"].is_null());
  EXPECT_TRUE(plain["iperf"][1]["outside_per_gb"].is_null());
  ASSERT_TRUE(plain["iperf"][1].contains("vmm_cpu_core_pct"));
  EXPECT_TRUE(plain["iperf"][1].at("vmm_cpu_core_pct").is_null());
  EXPECT_TRUE(plain["rr"][1]["p99_ratio_to_peer"].is_null());
}

TEST(NetReportJson, FioOutsidePerMreqAndPerGb) {
  const Json j = Json::parse(render_json(aggregate(test::parse(test::kFioOutside)), "T"));
  const Json& c = j["fio"][0];
  EXPECT_EQ(c["outside_per_mreq"]["kvm_exits"].get<double>(), 100000);
  EXPECT_TRUE(c["outside_per_mreq"]["vmm_ctxt_switches"].is_null());
  EXPECT_EQ(c["outside_per_gb"]["kvm_exits"].get<double>(), 20000);
  EXPECT_EQ(c["outside_per_gb"]["guest_irqs"].get<double>(), 60000);
  EXPECT_EQ(c["outside_per_mreq"].at("vmm_cpu_ms").get<double>(), 87500);
  EXPECT_EQ(c["outside_per_gb"].at("vmm_cpu_ms").get<double>(), 17500);
  EXPECT_EQ(c.at("vmm_cpu_core_pct").get<double>(), 35);
  EXPECT_TRUE(c["ratio_to_peer"].is_null());
  EXPECT_TRUE(c["per_mreq"].is_null());
}

// The peer's configs are further bars after kvmmio's, in browns of their
// own; the KVM exits read from outside get a panel of their own.
TEST(NetReportGnuplot, PeerConfigsAndKvmExitsFromOutside) {
  const GnuplotFiles g = render_gnuplot(with_peer(), "T");
  const std::vector<std::string> data = lines(g.data);
  ASSERT_GE(data.size(), 3u);
  EXPECT_EQ(data[1], "# host vhost-irqfd vhost-irqfd-mirror user-trap qemu-pci qemu-mmio");
  EXPECT_EQ(data[2], "\"g2h 1x 1500\" 11.0000 10.0000 12.0000 8.7500 8.0000 9.5000 12.0000 12.0000 12.0000 "
                     "2.5000 2.0000 3.0000 8.0000 6.0000 10.0000 4.0000 4.0000 4.0000");
  // Block 2: KVM exits per GB from outside, weighted by bytes.
  ASSERT_GE(data.size(), 4u);
  EXPECT_EQ(data[data.size() - 4], "# net_report outside: config, KVM exits per GB read from outside the VMM (its iperf runs)");
  EXPECT_EQ(data[data.size() - 3], "\"vhost-irqfd-mirror\" 1000.0");
  EXPECT_EQ(data[data.size() - 2], "\"qemu-pci\" 5000.0");
  EXPECT_EQ(data[data.size() - 1], "\"qemu-mmio\" 200000.0");
  EXPECT_NE(g.script.find("'' index 0 using 14:15:16 title 'qemu-pci' lc rgb '#8b4513', \\\n"
                          "     '' index 0 using 17:18:19 title 'qemu-mmio' lc rgb '#d2a679'\n"),
            std::string::npos)
      << g.script;
  EXPECT_NE(g.script.find("set multiplot layout 4,1"), std::string::npos);  // + packet rate, + outside
  EXPECT_NE(g.script.find("set title 'KVM exits per GB (outside)"), std::string::npos);
  EXPECT_NE(g.script.find("plot data index 2 using 2:xtic(1) title 'KVM exits/GB'"), std::string::npos) << g.script;
  EXPECT_LT(g.script.find("plot data index 1"), g.script.find("plot data index 2"));
  EXPECT_EQ(lines(g.pps_data)[1], "# host vhost-irqfd user-trap qemu-pci qemu-mmio");
  // Without kvmmio counters the outside block is gnuplot's index 1 (blocks
  // without data rows are not counted); without outside counters no panel.
  const GnuplotFiles peer_only = render_gnuplot(
      aggregate(test::parse(iperf_line_outside("qemu-pci") + iperf_line_outside("qemu-mmio"))), "T");
  EXPECT_NE(peer_only.script.find("plot data index 1 using 2:xtic(1) title 'KVM exits/GB'"), std::string::npos)
      << peer_only.script;
  EXPECT_NE(peer_only.script.find("set multiplot layout 3,1"), std::string::npos);
  EXPECT_NE(peer_only.script.find("plot [0:1][0:1] NaN notitle"), std::string::npos);
  EXPECT_TRUE(lines(peer_only.data).back() == "\"qemu-mmio\" 1000000.0") << peer_only.data;
  EXPECT_EQ(render_gnuplot(sample(), "T").script.find("KVM exits per GB"), std::string::npos);
}

}  // namespace
}  // namespace kvmmio::report
