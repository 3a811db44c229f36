// SPDX-License-Identifier: BSD-2-Clause
// judge_claims(): the mirror against qemu-pci and against kvmmio's other
// modes, cell by cell; when a verdict is clear; the mirror's wake-ups; and
// the claims in the text and JSON reports.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/report/claims.h"
#include "bench/report/render_json.h"
#include "bench/report/render_text.h"
#include "tests/unit/net_report_test_data.h"

namespace kvmmio::report {
namespace {

std::string pps_line(const std::string& config, unsigned payload, const std::string& dir, unsigned rep, double pps,
                     const std::string& extra = "") {
  return R"({"kind":"pps","config":")" + config + R"(","mtu":1500,"payload":)" + std::to_string(payload) +
         R"(,"dir":")" + dir + R"(","rep":)" + std::to_string(rep) + R"(,"sent":1000000,"received":1000000,)" +
         R"("lost":0,"seconds":1,"pps":)" + std::to_string(pps) + extra + "}\n";
}

std::string rr_line(const std::string& config, unsigned rep, double p50, double p99) {
  return R"({"kind":"rr","config":")" + config + R"(","mtu":1500,"rep":)" + std::to_string(rep) +
         R"(,"transactions":1000,"seconds":1,"tps":1000,"p50_us":)" + std::to_string(p50) + R"(,"p90_us":1,"p99_us":)" +
         std::to_string(p99) + "}\n";
}

// Three runs each. iperf g2h: the mirror 10-12 Gbit/s, qemu-pci 7-9
// (apart: clear). rr: the mirror p50 100-120 us against 90-130 (behind by
// the medians, ranges overlapping), p99 200 against 300 (ahead, clear).
// pps 64 B g2h: the mirror 50000, the relay 60000 (best other mode),
// user-trap 1000, qemu-pci 40000; 64 B h2g: only the mirror and qemu-pci.
// The mirror's pps runs: 2 wake-ups each over 1e6 packets, 0 context
// switches outside.
std::string three_runs() {
  std::string s;
  const char* wake = R"(,"counters":{"vcpu_exits":1,"wakeups":2,"injected":0,"relayed":0,"trapped":0,"polled":0,)"
                     R"("guest_irqs":9},"outside":{"kvm_exits":1,"kvm_mmio_exit_user":0,"kvm_mmio_exit_kernel":1,)"
                     R"("kvm_halt_wakeup":1,"vmm_ctxt_switches":0,"vmm_cpu_ms":0,"guest_irqs":9})";
  const double mirror_gbps[] = {10, 11, 12}, peer_gbps[] = {7, 8, 9};
  const double mirror_p50[] = {100, 110, 120}, peer_p50[] = {90, 105, 130};
  for (unsigned rep = 1; rep <= 3; ++rep) {
    s += test::iperf_line("vhost-irqfd-mirror", rep, mirror_gbps[rep - 1]);
    s += test::iperf_line("qemu-pci", rep, peer_gbps[rep - 1]);
    s += rr_line("vhost-irqfd-mirror", rep, mirror_p50[rep - 1], 200);
    s += rr_line("qemu-pci", rep, peer_p50[rep - 1], 300);
    s += rr_line("vhost-relay", rep, 100, 250);
    s += pps_line("vhost-irqfd-mirror", 64, "g2h", rep, 50000, wake);
    s += pps_line("vhost-relay", 64, "g2h", rep, 60000);
    s += pps_line("user-trap", 64, "g2h", rep, 1000);
    s += pps_line("qemu-pci", 64, "g2h", rep, 40000);
    s += pps_line("vhost-irqfd-mirror", 64, "h2g", rep, 30000, wake);
    s += pps_line("qemu-pci", 64, "h2g", rep, 30000);
    s += pps_line("host", 64, "h2g", rep, 90000);
  }
  return s;
}

Claims claims_of(const std::string& raw) { return judge_claims(aggregate(test::parse(raw))); }

TEST(NetReportClaims, TheMirrorAgainstQemuPciCellByCell) {
  const Claims c = claims_of(three_runs());
  ASSERT_EQ(c.peer.size(), 5u);
  EXPECT_EQ(c.peer[0].cell, "iperf3 g2h 1x MTU 1500");
  EXPECT_EQ(c.peer[0].rival, "qemu-pci");
  EXPECT_DOUBLE_EQ(c.peer[0].mirror, 11);
  EXPECT_DOUBLE_EQ(c.peer[0].rival_median, 8);
  EXPECT_TRUE(c.peer[0].ahead);
  EXPECT_TRUE(c.peer[0].clear);
  // Latency: lower is better.
  EXPECT_EQ(c.peer[1].cell, "tcp_rr p50 MTU 1500");
  EXPECT_FALSE(c.peer[1].ahead);  // 110 against 105
  EXPECT_FALSE(c.peer[1].clear);  // 100-120 inside 90-130
  EXPECT_EQ(c.peer[2].cell, "tcp_rr p99 MTU 1500");
  EXPECT_TRUE(c.peer[2].ahead);
  EXPECT_TRUE(c.peer[2].clear);
  EXPECT_EQ(c.peer[3].cell, "udp 64 B g2h MTU 1500");
  EXPECT_TRUE(c.peer[3].ahead);
  // Equal medians count as at the rival's: ahead, and not clear.
  EXPECT_EQ(c.peer[4].cell, "udp 64 B h2g MTU 1500");
  EXPECT_TRUE(c.peer[4].ahead);
  EXPECT_FALSE(c.peer[4].clear);
  EXPECT_EQ(ahead_count(c.peer), 4u);
}

TEST(NetReportClaims, TheMirrorAgainstTheBestOfKvmmiosOtherModes) {
  const Claims c = claims_of(three_runs());
  ASSERT_EQ(c.modes.size(), 2u);
  // tcp_rr p99: vhost-relay's 250 is the best other; qemu-pci and the host
  // are not kvmmio modes.
  EXPECT_EQ(c.modes[0].cell, "tcp_rr p99 MTU 1500");
  EXPECT_EQ(c.modes[0].rival, "vhost-relay");
  EXPECT_TRUE(c.modes[0].ahead);
  // 64 B g2h: the relay (60000), not user-trap, not qemu-pci.
  EXPECT_EQ(c.modes[1].cell, "udp 64 B g2h MTU 1500");
  EXPECT_EQ(c.modes[1].rival, "vhost-relay");
  EXPECT_FALSE(c.modes[1].ahead);
  EXPECT_TRUE(c.modes[1].clear);
  // 64 B h2g has no other kvmmio mode (the host's 90000 is not one).
  // Wake-ups: 2 per run of 1e6 packets, six runs.
  ASSERT_TRUE(c.mirror_wakeups);
  EXPECT_DOUBLE_EQ(*c.mirror_wakeups, 12);
  ASSERT_TRUE(c.mirror_ctxt_switches);
  EXPECT_DOUBLE_EQ(*c.mirror_ctxt_switches, 0);
}

TEST(NetReportClaims, OneRunEachIsNeverClear) {
  const Claims c = claims_of(test::iperf_line("vhost-irqfd-mirror", 1, 12) + test::iperf_line("qemu-pci", 1, 6));
  ASSERT_EQ(c.peer.size(), 1u);
  EXPECT_TRUE(c.peer[0].ahead);
  EXPECT_FALSE(c.peer[0].clear);
  EXPECT_TRUE(c.modes.empty());
  EXPECT_FALSE(c.mirror_wakeups);
}

TEST(NetReportClaims, NoMirrorOrNoRivalJudgesNothing) {
  EXPECT_TRUE(claims_of(test::kSampleRuns).peer.empty());
  const Claims c = claims_of(test::iperf_line("qemu-pci", 1, 6) + test::iperf_line("vhost-irqfd", 1, 6));
  EXPECT_TRUE(c.peer.empty());
  EXPECT_TRUE(c.modes.empty());
}

TEST(NetReportClaims, InTheTextAndJsonReports) {
  const Report r = aggregate(test::parse(three_runs()));
  const std::string t = render_text(r, "T");
  // Clear: iperf3 and p99 apart, and 64 B g2h (50000 every run against
  // 40000): 3 of 5; against the relay both (p99 and 64 B g2h).
  EXPECT_NE(t.find("vhost-irqfd-mirror at or ahead of qemu-pci in every cell:\n"
                   "  does not hold: ahead in 4 of 5 cells; 3 of the verdicts clear\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  does not hold: ahead in 1 of 2 cells; 2 of the verdicts clear\n"), std::string::npos) << t;
  EXPECT_NE(t.find("BEHIND, clear"), std::string::npos) << t;
  EXPECT_NE(t.find("12 wake-ups"), std::string::npos) << t;
  std::istringstream in(t);
  for (std::string l; std::getline(in, l);) EXPECT_LT(l.size(), 130u) << l;

  const auto doc = nlohmann::json::parse(render_json(r, "T"));
  const auto& claims = doc.at("claims");
  EXPECT_EQ(claims.at("config"), "vhost-irqfd-mirror");
  EXPECT_EQ(claims.at("peer").at("holds"), false);
  EXPECT_EQ(claims.at("peer").at("ahead"), 4);
  EXPECT_EQ(claims.at("peer").at("clear"), 3);
  EXPECT_EQ(claims.at("peer").at("cells").size(), 5u);
  EXPECT_EQ(claims.at("peer").at("cells")[0].at("clear"), true);
  EXPECT_EQ(claims.at("modes").at("cells")[1].at("rival"), "vhost-relay");
  EXPECT_EQ(claims.at("mirror_pps_wakeups"), 12);
  EXPECT_EQ(claims.at("mirror_pps_ctxt_switches"), 0);
  // Without the mirror: nulls, and no section in the text.
  const Report plain = aggregate(test::parse(test::kSampleRuns));
  EXPECT_TRUE(nlohmann::json::parse(render_json(plain, "T")).at("claims").at("peer").is_null());
  EXPECT_EQ(render_text(plain, "T").find("claims in this run"), std::string::npos);
}

}  // namespace
}  // namespace kvmmio::report
