// SPDX-License-Identifier: BSD-2-Clause
// net_report's arithmetic and grouping: medians, spread, baselines, per-GB
// counters, failed runs, config order. Expected numbers are worked out by
// hand in the comments.
#include <gtest/gtest.h>

#include "bench/report/report.h"
#include "bench/report/stats.h"
#include "tests/unit/net_report_test_data.h"

namespace kvmmio::report {
namespace {

using test::parse;

const IperfCell& cell(const Report& r, const std::string& config) {
  for (const IperfCell& c : r.iperf)
    if (c.config == config) return c;
  throw std::runtime_error("no cell " + config);
}

std::string iperf_line(const std::string& config, unsigned rep, double gbps, const std::string& extra = "") {
  return "iperf config=" + config + " mtu=1500 dir=g2h streams=1 rep=" + std::to_string(rep) +
         " bytes=1000 seconds=1 bps=" + std::to_string(gbps * 1e9) + extra + "\n";
}

TEST(NetReportStats, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({}), std::nullopt);
  EXPECT_EQ(median({4}), 4);
  EXPECT_EQ(median({9, 1, 5}), 5);
  EXPECT_EQ(median({9, 1, 5, 2}), 3.5);  // (2 + 5) / 2
}

TEST(NetReportStats, SpreadRatioPerGb) {
  EXPECT_EQ(spread_pct(8, 12, 10), 40);
  EXPECT_EQ(spread_pct(0, 0, 0), std::nullopt);
  EXPECT_EQ(spread_pct(std::nullopt, 1, 1), std::nullopt);
  EXPECT_EQ(ratio(3, 4), 0.75);
  EXPECT_EQ(ratio(3, 0), std::nullopt);
  EXPECT_EQ(ratio(3, std::nullopt), std::nullopt);
  EXPECT_EQ(per_gb(500, 2'000'000'000), 250);
  EXPECT_EQ(per_gb(1, 0), std::nullopt);
}

TEST(NetReportAggregate, SampleCellsMediansAndSpread) {
  const Report r = aggregate(parse(test::kSampleRuns));
  ASSERT_EQ(r.iperf.size(), 3u);
  const IperfCell& host = cell(r, "host");
  EXPECT_EQ(host.runs_ok, 3u);
  EXPECT_DOUBLE_EQ(*host.median_gbps, 11);
  EXPECT_DOUBLE_EQ(*host.min_gbps, 10);
  EXPECT_DOUBLE_EQ(*host.max_gbps, 12);
  EXPECT_DOUBLE_EQ(*host.spread_pct, 200.0 / 11);  // (12 - 10) / 11 * 100
  EXPECT_EQ(host.bytes, 20'625'000'000u);
  EXPECT_DOUBLE_EQ(*cell(r, "vhost-irqfd").median_gbps, 8.75);  // (8 + 9.5) / 2
}

TEST(NetReportAggregate, RatiosToHostAndUserTrap) {
  const Report r = aggregate(parse(test::kSampleRuns));
  EXPECT_DOUBLE_EQ(*cell(r, "host").ratio_to_host, 1);
  EXPECT_DOUBLE_EQ(*cell(r, "host").ratio_to_user_trap, 4.4);  // 11 / 2.5
  EXPECT_DOUBLE_EQ(*cell(r, "vhost-irqfd").ratio_to_host, 8.75 / 11);
  EXPECT_DOUBLE_EQ(*cell(r, "vhost-irqfd").ratio_to_user_trap, 3.5);  // 8.75 / 2.5
  EXPECT_DOUBLE_EQ(*cell(r, "user-trap").ratio_to_host, 2.5 / 11);
}

TEST(NetReportAggregate, RatiosAreAbsentWithoutABaselineOfTheSameKey) {
  // The host ran at MTU 9000 only and in the other direction: no baseline.
  const Report r = aggregate(parse(
      iperf_line("vhost-irqfd", 1, 5) +
      "iperf config=host mtu=9000 dir=g2h streams=1 rep=1 bytes=1 seconds=1 bps=8e9\n"
      "iperf config=user-trap mtu=1500 dir=h2g streams=1 rep=1 bytes=1 seconds=1 bps=1e9\n"
      "iperf config=user-trap mtu=1500 dir=g2h streams=2 rep=1 bytes=1 seconds=1 bps=1e9\n"));
  const IperfCell& v = cell(r, "vhost-irqfd");
  EXPECT_EQ(v.ratio_to_host, std::nullopt);
  EXPECT_EQ(v.ratio_to_user_trap, std::nullopt);
  EXPECT_EQ(r.iperf.size(), 4u);
}

TEST(NetReportAggregate, PerGbSumsCountersOverBytes) {
  const Report r = aggregate(parse(test::kSampleRuns));
  // vhost-irqfd: 2000 exits and 50000 guest irqs over 1e10 bytes.
  const PerGb& v = *cell(r, "vhost-irqfd").per_gb;
  EXPECT_DOUBLE_EQ(v.vcpu_exits, 200);
  EXPECT_DOUBLE_EQ(v.guest_irqs, 5000);
  EXPECT_DOUBLE_EQ(v.vmm_irqs, 0);
  // user-trap, ok runs only (2e9 bytes): exits 1e6, wakeups 4000, injected
  // 8000, relayed 4000, trapped 6e5, guest irqs 10000.
  const PerGb& u = *cell(r, "user-trap").per_gb;
  EXPECT_DOUBLE_EQ(u.vcpu_exits, 500000);
  EXPECT_DOUBLE_EQ(u.wakeups, 2000);
  EXPECT_DOUBLE_EQ(u.injected, 4000);
  EXPECT_DOUBLE_EQ(u.relayed, 2000);
  EXPECT_DOUBLE_EQ(u.vmm_irqs, 6000);
  EXPECT_DOUBLE_EQ(u.trapped, 300000);
  EXPECT_DOUBLE_EQ(u.polled, 0);
  EXPECT_DOUBLE_EQ(u.guest_irqs, 5000);
  EXPECT_EQ(cell(r, "host").per_gb, std::nullopt);
}

TEST(NetReportAggregate, FailedRunsAreCountedListedAndLeftOutOfMedians) {
  const Report r = aggregate(parse(test::kSampleRuns));
  const IperfCell& u = cell(r, "user-trap");
  EXPECT_EQ(u.runs_ok, 2u);
  EXPECT_EQ(u.runs_failed, 1u);
  EXPECT_DOUBLE_EQ(*u.median_gbps, 2.5);  // (2 + 3) / 2, not the median of three
  EXPECT_EQ(u.bytes, 2'000'000'000u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].kind, "iperf");
  EXPECT_EQ(r.failures[0].config, "user-trap");
  EXPECT_EQ(r.failures[0].rep, 2u);
  EXPECT_EQ(r.failures[0].reason, "iperf3_timeout");
  EXPECT_EQ(r.failures[0].source.str(), "raw:10");
}

TEST(NetReportAggregate, ACellWhoseRunsAllFailedHasNoMedian) {
  const Report r = aggregate(parse(
      iperf_line("host", 1, 10) +
      "iperf config=vhost-irqfd mtu=1500 dir=g2h streams=1 rep=1 failed=guest_hung\n"
      "rr config=host mtu=1500 rep=1 failed=refused\n"));
  const IperfCell& v = cell(r, "vhost-irqfd");
  EXPECT_EQ(v.runs_ok, 0u);
  EXPECT_EQ(v.median_gbps, std::nullopt);
  EXPECT_EQ(v.spread_pct, std::nullopt);
  EXPECT_EQ(v.ratio_to_host, std::nullopt);
  EXPECT_EQ(v.per_gb, std::nullopt);
  EXPECT_EQ(r.rr[0].median_p50_us, std::nullopt);
  EXPECT_EQ(r.rr[0].runs_failed, 1u);
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[1].kind, "rr");
  EXPECT_EQ(r.failures[1].dir, std::nullopt);
}

TEST(NetReportAggregate, PerGbIsAbsentIfAnyRunLacksCounters) {
  const std::string counters = " vcpu_exits=1 wakeups=0 injected=0 relayed=0 trapped=0 polled=0 guest_irqs=0";
  const Report r = aggregate(parse(iperf_line("vm", 1, 1, counters) + iperf_line("vm", 2, 1)));
  EXPECT_EQ(cell(r, "vm").per_gb, std::nullopt);
}

TEST(NetReportAggregate, KnownConfigsFirstThenOthersInFirstSeenOrder) {
  const Report r = aggregate(parse(iperf_line("zeta", 1, 1) + iperf_line("user-trap", 1, 1) +
                                   iperf_line("alpha", 1, 1) + iperf_line("host", 1, 1) +
                                   "rr config=rr-only mtu=1500 rep=1 failed=x\n"));
  ASSERT_EQ(r.iperf.size(), 4u);
  EXPECT_EQ(r.iperf[0].config, "host");
  EXPECT_EQ(r.iperf[1].config, "user-trap");
  EXPECT_EQ(r.iperf[2].config, "zeta");
  EXPECT_EQ(r.iperf[3].config, "alpha");
  EXPECT_EQ(r.configs, (std::vector<std::string>{"host", "user-trap", "zeta", "alpha", "rr-only"}));
}

TEST(NetReportAggregate, CellsAreGroupedByMtuThenDirectionThenStreams) {
  auto line = [](unsigned mtu, const char* dir, unsigned streams) {
    return "iperf config=host mtu=" + std::to_string(mtu) + " dir=" + dir + " streams=" + std::to_string(streams) +
           " rep=1 bytes=1 seconds=1 bps=1\n";
  };
  const Report r = aggregate(parse(line(9000, "g2h", 1) + line(1500, "h2g", 1) + line(1500, "g2h", 4) +
                                   line(1500, "g2h", 1)));
  ASSERT_EQ(r.iperf.size(), 4u);
  EXPECT_EQ(r.iperf[0].streams, 1u);
  EXPECT_EQ(r.iperf[1].streams, 4u);
  EXPECT_EQ(r.iperf[2].dir, Direction::kHostToGuest);
  EXPECT_EQ(r.iperf[3].mtu, 9000u);
}

TEST(NetReportAggregate, LatencyCellsAndP50RatioToHost) {
  const Report r = aggregate(parse(
      "rr config=vhost-irqfd mtu=1500 rep=1 transactions=1 seconds=1 tps=10 p50_us=90 p90_us=1 p99_us=300\n"
      "rr config=vhost-irqfd mtu=1500 rep=2 transactions=1 seconds=1 tps=30 p50_us=110 p90_us=1 p99_us=100\n"
      "rr config=host mtu=1500 rep=1 transactions=1 seconds=1 tps=50 p50_us=40 p90_us=1 p99_us=60\n"
      "rr config=host mtu=9000 rep=1 transactions=1 seconds=1 tps=50 p50_us=40 p90_us=1 p99_us=60\n"
      "rr config=user-trap mtu=9000 rep=1 failed=x\n"));
  ASSERT_EQ(r.rr.size(), 4u);
  EXPECT_EQ(r.rr[0].config, "host");
  const RrCell& v = r.rr[1];
  EXPECT_EQ(v.config, "vhost-irqfd");
  EXPECT_EQ(v.runs_ok, 2u);
  EXPECT_DOUBLE_EQ(*v.median_tps, 20);
  EXPECT_DOUBLE_EQ(*v.median_p50_us, 100);
  EXPECT_DOUBLE_EQ(*v.median_p99_us, 200);
  EXPECT_DOUBLE_EQ(*v.p50_ratio_to_host, 2.5);  // 100 / 40
  EXPECT_EQ(r.rr[3].p50_ratio_to_host, std::nullopt);  // user-trap at 9000: all failed
}

TEST(NetReportAggregate, MicroRatios) {
  RawData raw;
  MicroResult m;
  m.platform = "arm64-gicv3";
  m.us = {{"ioeventfd", 2}, {"mmio_exit", 7}, {"irqfd", 20}, {"irq_line_relay", 25}};
  raw.micro.push_back(m);
  m.platform = "partial";
  m.us = {{"ioeventfd", 0}, {"mmio_exit", 7}};
  raw.micro.push_back(m);
  const Report r = aggregate(raw);
  ASSERT_EQ(r.micro.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.micro[0].mmio_exit_per_ioeventfd, 3.5);
  EXPECT_DOUBLE_EQ(*r.micro[0].irq_line_relay_per_irqfd, 1.25);
  EXPECT_EQ(r.micro[1].mmio_exit_per_ioeventfd, std::nullopt);  // division by zero
  EXPECT_EQ(r.micro[1].irq_line_relay_per_irqfd, std::nullopt);  // not measured
}

}  // namespace
}  // namespace kvmmio::report
