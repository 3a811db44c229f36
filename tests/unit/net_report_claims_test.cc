// SPDX-License-Identifier: BSD-2-Clause
// judge_claims(): the mirror against qemu-pci and against each of kvmmio's
// other modes, cell by cell; when a verdict is clear; when a claim holds, is
// not shown or does not hold; the mirror's wake-ups; and the claims in the
// text and JSON reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/report/claims.h"
#include "bench/report/render_json.h"
#include "bench/report/render_text.h"
#include "tests/unit/net_report_test_data.h"

namespace kvmmio::report {
namespace {

// `config`'s udp_pps run at MTU 1500, 1e6 datagrams, none lost.
std::string pps_line(const std::string& config, unsigned payload, const std::string& dir, unsigned rep, double pps,
                     const std::string& extra = "") {
  return R"({"kind":"pps","config":")" + config + R"(","mtu":1500,"payload":)" + std::to_string(payload) +
         R"(,"dir":")" + dir + R"(","rep":)" + std::to_string(rep) + R"(,"sent":1000000,"received":1000000,)" +
         R"("lost":0,"seconds":1,"pps":)" + std::to_string(pps) + extra + "}\n";
}

// `config`'s tcp_rr run at MTU 1500.
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

// `config`'s iperf3 run at MTU 1500, 1 stream, in `dir`.
std::string iperf_dir_line(const std::string& config, const std::string& dir, unsigned rep, double gbps) {
  return R"({"kind":"iperf","config":")" + config + R"(","mtu":1500,"dir":")" + dir + R"(","streams":1,"rep":)" +
         std::to_string(rep) + R"(,"bytes":1000,"seconds":1,"bps":)" + std::to_string(gbps * 1e9) + "}\n";
}

// A config's runs in every cell both claims name, one value per run: iperf3
// g2h (Gbit/s), tcp_rr (p50 and p99 alike, us) and 64 B both ways (pkt/s).
struct Figures {
  std::vector<double> gbps, us, pps;
};

std::string runs_of(const std::string& config, const Figures& f) {
  std::string s;
  for (unsigned i = 0; i < f.gbps.size(); ++i) s += test::iperf_line(config, i + 1, f.gbps[i]);
  for (unsigned i = 0; i < f.us.size(); ++i) s += rr_line(config, i + 1, f.us[i], f.us[i]);
  for (unsigned i = 0; i < f.pps.size(); ++i)
    s += pps_line(config, 64, "g2h", i + 1, f.pps[i]) + pps_line(config, 64, "h2g", i + 1, f.pps[i]);
  return s;
}

// The mirror clearly ahead, 3 runs each, of qemu-pci and of two other
// modes, in every cell: both claims hold.
std::string clearly_ahead() {
  return runs_of("vhost-irqfd-mirror", {{10, 11, 12}, {50, 52, 54}, {50000, 51000, 52000}}) +
         runs_of("qemu-pci", {{7, 8, 9}, {60, 62, 64}, {40000, 41000, 42000}}) +
         runs_of("vhost-relay", {{6, 7, 8}, {70, 72, 74}, {30000, 31000, 32000}}) +
         runs_of("user-ioeventfd", {{5, 6, 7}, {80, 82, 84}, {20000, 21000, 22000}});
}

std::vector<std::string> rivals_of(const Claim& c) {
  std::vector<std::string> out;
  for (const Verdict& v : c.verdicts) out.push_back(v.cell + " / " + v.rival);
  return out;
}

TEST(NetReportClaims, TheMirrorAgainstQemuPciCellByCell) {
  const Claims c = claims_of(three_runs());
  ASSERT_EQ(c.peer.verdicts.size(), 5u);
  EXPECT_TRUE(c.peer.missing.empty());
  const Verdict& iperf = c.peer.verdicts[0];
  EXPECT_EQ(iperf.cell, "iperf3 g2h 1x MTU 1500");
  EXPECT_EQ(iperf.rival, "qemu-pci");
  EXPECT_DOUBLE_EQ(iperf.mirror.median, 11);
  EXPECT_DOUBLE_EQ(iperf.mirror.min, 10);
  EXPECT_DOUBLE_EQ(iperf.mirror.max, 12);
  EXPECT_EQ(iperf.mirror.runs, 3u);
  EXPECT_DOUBLE_EQ(iperf.other.median, 8);
  EXPECT_DOUBLE_EQ(iperf.other.min, 7);
  EXPECT_DOUBLE_EQ(iperf.other.max, 9);
  EXPECT_EQ(iperf.other.runs, 3u);
  EXPECT_TRUE(iperf.ahead);
  EXPECT_TRUE(iperf.clear());
  // Latency: lower is better.
  EXPECT_EQ(c.peer.verdicts[1].cell, "tcp_rr p50 MTU 1500");
  EXPECT_FALSE(c.peer.verdicts[1].ahead);  // 110 against 105
  EXPECT_FALSE(c.peer.verdicts[1].clear());  // 100-120 inside 90-130
  EXPECT_EQ(why_not_clear(c.peer.verdicts[1]), "ranges overlap");
  EXPECT_EQ(c.peer.verdicts[2].cell, "tcp_rr p99 MTU 1500");
  EXPECT_TRUE(c.peer.verdicts[2].ahead);
  EXPECT_TRUE(c.peer.verdicts[2].clear());
  EXPECT_EQ(c.peer.verdicts[3].cell, "udp 64 B g2h MTU 1500");
  EXPECT_TRUE(c.peer.verdicts[3].ahead);
  // Equal medians count as at the rival's: ahead, and not clear.
  EXPECT_EQ(c.peer.verdicts[4].cell, "udp 64 B h2g MTU 1500");
  EXPECT_TRUE(c.peer.verdicts[4].ahead);
  EXPECT_FALSE(c.peer.verdicts[4].clear());
  EXPECT_EQ(ahead_count(c.peer.verdicts), 4u);
  // Behind in p50, but not clearly: the run does not show the claim, nor
  // refute it.
  EXPECT_EQ(c.peer.outcome(), Outcome::kNotShown);
}

TEST(NetReportClaims, TheMirrorAgainstEachOfKvmmiosOtherModes) {
  const Claims c = claims_of(three_runs());
  // Each cell against each other kvmmio mode with network cells (not
  // qemu-pci, not the host), in config order; user-trap has no tcp_rr and
  // neither other mode has 64 B h2g: missing, named.
  EXPECT_EQ(rivals_of(c.modes), (std::vector<std::string>{"tcp_rr p99 MTU 1500 / vhost-relay",
                                                          "udp 64 B g2h MTU 1500 / vhost-relay",
                                                          "udp 64 B g2h MTU 1500 / user-trap"}));
  EXPECT_TRUE(c.modes.verdicts[0].ahead);
  EXPECT_FALSE(c.modes.verdicts[1].ahead);  // 50000 against the relay's 60000
  EXPECT_TRUE(c.modes.verdicts[1].clear());
  EXPECT_TRUE(c.modes.verdicts[2].ahead);
  ASSERT_EQ(c.modes.missing.size(), 3u);
  EXPECT_EQ(c.modes.missing[0].cell, "tcp_rr p99 MTU 1500");
  EXPECT_EQ(c.modes.missing[0].rival, "user-trap");
  EXPECT_EQ(c.modes.missing[0].without, std::vector<std::string>{"user-trap"});
  EXPECT_EQ(c.modes.missing[1].cell, "udp 64 B h2g MTU 1500");
  EXPECT_EQ(c.modes.missing[1].rival, "vhost-relay");
  EXPECT_EQ(c.modes.missing[2].rival, "user-trap");
  // Clearly behind the relay at 64 B g2h: refuted, whatever is missing.
  EXPECT_EQ(c.modes.outcome(), Outcome::kDoesNotHold);
  // Wake-ups: 2 per run of 1e6 packets, six runs.
  ASSERT_TRUE(c.mirror_wakeups);
  EXPECT_DOUBLE_EQ(*c.mirror_wakeups, 12);
  ASSERT_TRUE(c.mirror_ctxt_switches);
  EXPECT_DOUBLE_EQ(*c.mirror_ctxt_switches, 0);
}

TEST(NetReportClaims, HoldsWhenEveryCellIsClearlyAheadOfEveryRival) {
  const Claims c = claims_of(clearly_ahead());
  EXPECT_EQ(c.peer.verdicts.size(), 5u);  // iperf3, p50, p99, 64 B each way
  EXPECT_TRUE(c.peer.missing.empty());
  EXPECT_EQ(c.peer.outcome(), Outcome::kHolds);
  EXPECT_EQ(c.modes.verdicts.size(), 6u);  // p99, 64 B each way; two rivals each
  EXPECT_TRUE(c.modes.missing.empty());
  EXPECT_EQ(c.modes.outcome(), Outcome::kHolds);
  for (const Verdict& v : c.peer.verdicts) EXPECT_TRUE(v.ahead && v.clear()) << v.cell;
}

TEST(NetReportClaims, ACellMissingOnOneSideIsNamedNotDropped) {
  // The mirror measured iperf3 h2g; qemu-pci did not.
  const Claims absent = claims_of(clearly_ahead() + iperf_dir_line("vhost-irqfd-mirror", "h2g", 1, 12) +
                                  iperf_dir_line("vhost-irqfd-mirror", "h2g", 2, 12) +
                                  iperf_dir_line("vhost-irqfd-mirror", "h2g", 3, 12));
  EXPECT_EQ(absent.peer.verdicts.size(), 5u);
  ASSERT_EQ(absent.peer.missing.size(), 1u);
  EXPECT_EQ(absent.peer.missing[0].cell, "iperf3 h2g 1x MTU 1500");
  EXPECT_EQ(absent.peer.missing[0].rival, "qemu-pci");
  EXPECT_EQ(absent.peer.missing[0].without, std::vector<std::string>{"qemu-pci"});
  EXPECT_EQ(absent.peer.outcome(), Outcome::kNotShown);
  EXPECT_EQ(absent.modes.outcome(), Outcome::kHolds);  // the modes claim names no iperf3 cell

  // qemu-pci's tcp_rr runs all failed: no median, so both percentiles are
  // missing; and a cell only the peer has is missing on the mirror's side.
  const Claims failed =
      claims_of(clearly_ahead() + R"({"kind":"rr","config":"qemu-pci","mtu":9000,"rep":1,"failed":"tcp_rr_failed"})"
                                  "\n" +
                iperf_dir_line("qemu-pci", "h2g", 1, 8));
  ASSERT_EQ(failed.peer.missing.size(), 3u);
  EXPECT_EQ(failed.peer.missing[0].cell, "iperf3 h2g 1x MTU 1500");
  EXPECT_EQ(failed.peer.missing[0].without, std::vector<std::string>{"vhost-irqfd-mirror"});
  EXPECT_EQ(failed.peer.missing[1].cell, "tcp_rr p50 MTU 9000");
  EXPECT_EQ(failed.peer.missing[1].without, (std::vector<std::string>{"vhost-irqfd-mirror", "qemu-pci"}));
  EXPECT_EQ(failed.peer.missing[2].cell, "tcp_rr p99 MTU 9000");
  EXPECT_EQ(failed.peer.outcome(), Outcome::kNotShown);
}

TEST(NetReportClaims, ThreeRunsAgainstTwoIsNotClear) {
  const std::string mirror = test::iperf_line("vhost-irqfd-mirror", 1, 10) +
                             test::iperf_line("vhost-irqfd-mirror", 2, 11) +
                             test::iperf_line("vhost-irqfd-mirror", 3, 12);
  const std::string two = test::iperf_line("qemu-pci", 1, 7) + test::iperf_line("qemu-pci", 2, 8);
  const Claims c = claims_of(mirror + two);
  ASSERT_EQ(c.peer.verdicts.size(), 1u);
  EXPECT_TRUE(c.peer.verdicts[0].ahead);
  EXPECT_TRUE(c.peer.verdicts[0].apart);
  EXPECT_FALSE(c.peer.verdicts[0].clear());
  EXPECT_EQ(why_not_clear(c.peer.verdicts[0]), "fewer than 3 runs");
  EXPECT_EQ(c.peer.outcome(), Outcome::kNotShown);
  // The third run makes it clear.
  const Claims three = claims_of(mirror + two + test::iperf_line("qemu-pci", 3, 9));
  EXPECT_TRUE(three.peer.verdicts[0].clear());
  EXPECT_EQ(three.peer.outcome(), Outcome::kHolds);
}

TEST(NetReportClaims, LatencyClearlyHigherDoesNotHold) {
  // Lower latency is better: the mirror's 80-84 us against qemu-pci's 60-64.
  const Claims behind = claims_of(runs_of("vhost-irqfd-mirror", {{}, {80, 82, 84}, {}}) +
                                  runs_of("qemu-pci", {{}, {60, 62, 64}, {}}));
  ASSERT_EQ(behind.peer.verdicts.size(), 2u);
  for (const Verdict& v : behind.peer.verdicts) {
    EXPECT_FALSE(v.ahead) << v.cell;
    EXPECT_TRUE(v.clear()) << v.cell;
  }
  EXPECT_EQ(behind.peer.outcome(), Outcome::kDoesNotHold);
  // The other way round it holds.
  const Claims ahead = claims_of(runs_of("vhost-irqfd-mirror", {{}, {60, 62, 64}, {}}) +
                                 runs_of("qemu-pci", {{}, {80, 82, 84}, {}}));
  EXPECT_EQ(ahead.peer.outcome(), Outcome::kHolds);
}

TEST(NetReportClaims, EveryRivalNotOnlyTheBest) {
  // The relay is the best other mode and clearly behind the mirror, but
  // user-ioeventfd's one fast run reaches into the mirror's range.
  const std::string raw = runs_of("vhost-irqfd-mirror", {{}, {}, {50000, 51000, 52000}}) +
                          runs_of("vhost-relay", {{}, {}, {40000, 41000, 42000}}) +
                          runs_of("user-ioeventfd", {{}, {}, {10000, 11000, 50500}});
  const Claims c = claims_of(raw);
  ASSERT_EQ(c.modes.verdicts.size(), 4u);
  EXPECT_TRUE(c.modes.verdicts[0].clear());  // 64 B g2h against the relay
  EXPECT_EQ(c.modes.verdicts[1].rival, "user-ioeventfd");
  EXPECT_TRUE(c.modes.verdicts[1].ahead);
  EXPECT_FALSE(c.modes.verdicts[1].clear());
  EXPECT_EQ(c.modes.outcome(), Outcome::kNotShown);
  // Two runs of the slowest mode keep the claim from holding as well.
  const Claims two = claims_of(runs_of("vhost-irqfd-mirror", {{}, {}, {50000, 51000, 52000}}) +
                               runs_of("vhost-relay", {{}, {}, {40000, 41000, 42000}}) +
                               runs_of("user-ioeventfd", {{}, {}, {10000, 11000}}));
  EXPECT_EQ(two.modes.outcome(), Outcome::kNotShown);
}

TEST(NetReportClaims, GuestToGuestIsItsOwnMeasurement) {
  // Guest-to-guest tcp_rr (config g2g-MODE, no direction) at the same MTU
  // as the host-guest cells, far faster: never a rival, never a baseline.
  std::string g2g;
  for (unsigned rep = 1; rep <= 3; ++rep)
    g2g += rr_line("g2g-vhost-relay", rep, 5, 5) + rr_line("g2g-vhost-irqfd-mirror", rep, 6, 6) +
           rr_line("host", rep, 40, 40);
  const Report r = aggregate(test::parse(clearly_ahead() + g2g));
  const Claims c = judge_claims(r);
  for (const Verdict& v : c.modes.verdicts) EXPECT_FALSE(guest_to_guest(v.rival)) << v.rival;
  EXPECT_TRUE(c.modes.missing.empty());
  EXPECT_EQ(c.modes.outcome(), Outcome::kHolds);
  EXPECT_EQ(c.peer.outcome(), Outcome::kHolds);
  // The cells themselves: a g2g tcp_rr cell is not the host-guest one, and
  // has no host or qemu-pci ratio.
  const std::vector<Cell> rr = r.of_kind("rr");
  const auto find = [&](const std::string& config) {
    return *std::find_if(rr.begin(), rr.end(), [&](const Cell& x) { return x.config == config; });
  };
  const Cell& relay = find("vhost-relay");
  const Cell& relay_g2g = find("g2g-vhost-relay");
  EXPECT_FALSE(relay_g2g.same_measurement(relay));
  EXPECT_TRUE(relay_g2g.same_measurement(find("g2g-vhost-irqfd-mirror")));
  EXPECT_TRUE(relay.ratio_to_host.has_value());
  EXPECT_FALSE(relay_g2g.ratio_to_host.has_value());
  EXPECT_FALSE(relay_g2g.ratio_to_peer.has_value());
}

TEST(NetReportClaims, OneRunEachIsNeverClear) {
  const Claims c = claims_of(test::iperf_line("vhost-irqfd-mirror", 1, 12) + test::iperf_line("qemu-pci", 1, 6));
  ASSERT_EQ(c.peer.verdicts.size(), 1u);
  EXPECT_TRUE(c.peer.verdicts[0].ahead);
  EXPECT_FALSE(c.peer.verdicts[0].clear());
  EXPECT_EQ(c.peer.outcome(), Outcome::kNotShown);
  EXPECT_FALSE(c.modes.judged());
  EXPECT_FALSE(c.mirror_wakeups);
}

TEST(NetReportClaims, NoMirrorOrNoRivalJudgesNothing) {
  EXPECT_FALSE(claims_of(test::kSampleRuns).peer.judged());
  const Claims c = claims_of(test::iperf_line("qemu-pci", 1, 6) + test::iperf_line("vhost-irqfd", 1, 6));
  EXPECT_FALSE(c.peer.judged());
  EXPECT_FALSE(c.modes.judged());
}

TEST(NetReportClaims, InTheTextAndJsonReports) {
  const Report r = aggregate(test::parse(three_runs()));
  const std::string t = render_text(r, "T");
  // Clear: iperf3 and p99 apart, and 64 B g2h (50000 every run against
  // 40000): 3 of 5; none clearly behind, p50 not clear: not shown.
  EXPECT_NE(t.find("vhost-irqfd-mirror at or ahead of qemu-pci in every cell:\n"
                   "  NOT SHOWN: ahead in 4 of 5 verdicts; 3 of the verdicts clear; 0 missing\n"),
            std::string::npos)
      << t;
  // Every verdict with both ranges and run counts.
  EXPECT_NE(t.find("iperf3 g2h 1x MTU 1500  11.00 Gbit/s  10.00..12.00  3"), std::string::npos) << t;
  EXPECT_NE(t.find("3      8.00    7.00..9.00  3   1.38  ahead, clear"), std::string::npos) << t;
  EXPECT_NE(t.find("ahead, ranges overlap"), std::string::npos) << t;
  EXPECT_NE(t.find("  DOES NOT HOLD: ahead in 2 of 3 verdicts; 3 of the verdicts clear; 3 missing\n"
                   "  missing: tcp_rr p99 MTU 1500 against user-trap (no median: user-trap)\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("BEHIND, clear"), std::string::npos) << t;
  EXPECT_NE(t.find("12 wake-ups"), std::string::npos) << t;
  std::istringstream in(t);
  for (std::string l; std::getline(in, l);) EXPECT_LT(l.size(), 130u) << l;

  const auto doc = nlohmann::json::parse(render_json(r, "T"));
  const auto& claims = doc.at("claims");
  EXPECT_EQ(claims.at("config"), "vhost-irqfd-mirror");
  const auto& peer = claims.at("peer");
  EXPECT_EQ(peer.at("outcome"), "not shown");
  EXPECT_EQ(peer.at("holds"), false);
  EXPECT_EQ(peer.at("ahead"), 4);
  EXPECT_EQ(peer.at("clear"), 3);
  EXPECT_EQ(peer.at("cells").size(), 5u);
  const auto& iperf = peer.at("cells")[0];
  EXPECT_EQ(iperf.at("clear"), true);
  EXPECT_EQ(iperf.at("mirror_min"), 10);
  EXPECT_EQ(iperf.at("mirror_max"), 12);
  EXPECT_EQ(iperf.at("mirror_runs"), 3);
  EXPECT_EQ(iperf.at("rival_min"), 7);
  EXPECT_EQ(iperf.at("rival_max"), 9);
  EXPECT_EQ(iperf.at("rival_runs"), 3);
  EXPECT_TRUE(peer.at("missing").empty());
  ASSERT_EQ(peer.at("not_clear").size(), 2u);
  EXPECT_EQ(peer.at("not_clear")[0],
            (nlohmann::json{{"cell", "tcp_rr p50 MTU 1500"}, {"rival", "qemu-pci"}, {"why", "ranges overlap"}}));
  const auto& modes = claims.at("modes");
  EXPECT_EQ(modes.at("outcome"), "does not hold");
  EXPECT_EQ(modes.at("holds"), false);
  EXPECT_EQ(modes.at("cells")[1].at("rival"), "vhost-relay");
  ASSERT_EQ(modes.at("missing").size(), 3u);
  EXPECT_EQ(modes.at("missing")[0], (nlohmann::json{{"cell", "tcp_rr p99 MTU 1500"},
                                                    {"rival", "user-trap"},
                                                    {"without", {"user-trap"}}}));
  EXPECT_EQ(claims.at("mirror_pps_wakeups"), 12);
  EXPECT_EQ(claims.at("mirror_pps_ctxt_switches"), 0);
  // A claim that holds says so in both.
  const Report holds = aggregate(test::parse(clearly_ahead()));
  EXPECT_NE(render_text(holds, "T").find("  HOLDS: ahead in 5 of 5 verdicts; 5 of the verdicts clear; 0 missing\n"),
            std::string::npos);
  const auto held = nlohmann::json::parse(render_json(holds, "T")).at("claims").at("peer");
  EXPECT_EQ(held.at("outcome"), "holds");
  EXPECT_EQ(held.at("holds"), true);
  // Without the mirror: nulls, and no section in the text.
  const Report plain = aggregate(test::parse(test::kSampleRuns));
  EXPECT_TRUE(nlohmann::json::parse(render_json(plain, "T")).at("claims").at("peer").is_null());
  EXPECT_EQ(render_text(plain, "T").find("claims in this run"), std::string::npos);
}

}  // namespace
}  // namespace kvmmio::report
