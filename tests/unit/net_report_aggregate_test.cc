// SPDX-License-Identifier: BSD-2-Clause
// net_report's arithmetic and grouping: medians, spread, baselines, per-GB
// counters, failed runs, config order. Expected numbers are worked out by
// hand in the comments.
#include <gtest/gtest.h>

#include <tuple>

#include "bench/report/read_runs.h"
#include "bench/report/report.h"
#include "bench/report/stats.h"
#include "tests/unit/net_report_test_data.h"

namespace kvmmio::report {
namespace {

using test::iperf_line;
using test::parse;

// The iperf cell of `config` (the first, by the report's order).
Cell cell(const Report& r, const std::string& config) {
  for (const Cell& c : r.of_kind("iperf"))
    if (c.config == config) return c;
  throw std::runtime_error("no cell " + config);
}

double gbps(const Cell& c) { return *c.median("bps", 1e9); }

TEST(NetReportStats, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({}), std::nullopt);
  EXPECT_EQ(median({4}), 4);
  EXPECT_EQ(median({9, 1, 5}), 5);
  EXPECT_EQ(median({9, 1, 5, 2}), 3.5);  // (2 + 5) / 2
}

TEST(NetReportStats, SpreadRatioPerUnit) {
  EXPECT_EQ(spread_pct(8, 12, 10), 40);
  EXPECT_EQ(spread_pct(0, 0, 0), std::nullopt);
  EXPECT_EQ(spread_pct(std::nullopt, 1, 1), std::nullopt);
  EXPECT_EQ(ratio(3, 4), 0.75);
  EXPECT_EQ(ratio(3, 0), std::nullopt);
  EXPECT_EQ(ratio(3, std::nullopt), std::nullopt);
  EXPECT_EQ(per_unit(500, 2'000'000'000, 1e9L), 250);
  EXPECT_EQ(per_unit(1, 0, 1e9L), std::nullopt);
}

TEST(NetReportAggregate, SampleCellsMediansAndSpread) {
  const Report r = aggregate(parse(test::kSampleRuns));
  ASSERT_EQ(r.of_kind("iperf").size(), 3u);
  const Cell host = cell(r, "host");
  EXPECT_EQ(host.runs_ok, 3u);
  EXPECT_DOUBLE_EQ(gbps(host), 11);
  EXPECT_DOUBLE_EQ(*host.values.at("bps").min, 10e9);
  EXPECT_DOUBLE_EQ(*host.values.at("bps").max, 12e9);
  EXPECT_DOUBLE_EQ(*host.values.at("bps").spread_pct, 200.0 / 11);  // (12 - 10) / 11 * 100
  EXPECT_EQ(host.sums.at("bytes"), 20'625'000'000.0);
  EXPECT_DOUBLE_EQ(gbps(cell(r, "vhost-irqfd")), 8.75);  // (8 + 9.5) / 2
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
      R"({"kind":"iperf","config":"host","mtu":9000,"dir":"g2h","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":8000000000})" "\n"
      R"({"kind":"iperf","config":"user-trap","mtu":1500,"dir":"h2g","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":1000000000})" "\n"
      R"({"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":2,"rep":1,"bytes":1,"seconds":1,"bps":1000000000})" "\n"));
  const Cell v = cell(r, "vhost-irqfd");
  EXPECT_EQ(v.ratio_to_host, std::nullopt);
  EXPECT_EQ(v.ratio_to_user_trap, std::nullopt);
  EXPECT_EQ(r.of_kind("iperf").size(), 4u);
}

TEST(NetReportAggregate, PerGbSumsCountersOverBytes) {
  const Report r = aggregate(parse(test::kSampleRuns));
  // vhost-irqfd: 2000 exits and 50000 guest irqs over 1e10 bytes.
  const Cell v = cell(r, "vhost-irqfd");
  EXPECT_DOUBLE_EQ(*v.rate("vcpu_exits"), 200);
  EXPECT_DOUBLE_EQ(*v.rate("guest_irqs"), 5000);
  EXPECT_DOUBLE_EQ(*v.rate("vmm_irqs"), 0);
  // user-trap, ok runs only (2e9 bytes): exits 1e6, wakeups 4000, injected
  // 8000, relayed 4000, trapped 6e5, guest irqs 10000.
  const Cell u = cell(r, "user-trap");
  EXPECT_DOUBLE_EQ(*u.rate("vcpu_exits"), 500000);
  EXPECT_DOUBLE_EQ(*u.rate("wakeups"), 2000);
  EXPECT_DOUBLE_EQ(*u.rate("injected"), 4000);
  EXPECT_DOUBLE_EQ(*u.rate("relayed"), 2000);
  EXPECT_DOUBLE_EQ(*u.rate("vmm_irqs"), 6000);
  EXPECT_DOUBLE_EQ(*u.rate("trapped"), 300000);
  EXPECT_DOUBLE_EQ(*u.rate("polled"), 0);
  EXPECT_DOUBLE_EQ(*u.rate("guest_irqs"), 5000);
  EXPECT_EQ(cell(r, "host").rates, std::nullopt);
}

TEST(NetReportAggregate, FailedRunsAreCountedListedAndLeftOutOfMedians) {
  const Report r = aggregate(parse(test::kSampleRuns));
  const Cell u = cell(r, "user-trap");
  EXPECT_EQ(u.runs_ok, 2u);
  EXPECT_EQ(u.runs_failed, 1u);
  EXPECT_DOUBLE_EQ(gbps(u), 2.5);  // (2 + 3) / 2, not the median of three
  EXPECT_EQ(u.sums.at("bytes"), 2'000'000'000.0);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].kind, "iperf");
  EXPECT_EQ(r.failures[0].config, "user-trap");
  EXPECT_EQ(r.failures[0].rep, 2u);
  EXPECT_EQ(r.failures[0].failed, "iperf3_timeout");
  EXPECT_EQ(r.failures[0].source.str(), "raw:9");
}

TEST(NetReportAggregate, ACellWhoseRunsAllFailedHasNoMedian) {
  const Report r = aggregate(parse(
      iperf_line("host", 1, 10) +
      R"({"kind":"iperf","config":"vhost-irqfd","mtu":1500,"dir":"g2h","streams":1,"rep":1,"failed":"guest_hung"})" "\n"
      R"({"kind":"rr","config":"host","mtu":1500,"rep":1,"failed":"refused"})" "\n"));
  const Cell v = cell(r, "vhost-irqfd");
  EXPECT_EQ(v.runs_ok, 0u);
  EXPECT_EQ(v.median("bps"), std::nullopt);
  EXPECT_EQ(v.values.count("bps"), 0u);
  EXPECT_EQ(v.ratio_to_host, std::nullopt);
  EXPECT_EQ(v.rates, std::nullopt);
  EXPECT_EQ(r.of_kind("rr")[0].median("p50_us"), std::nullopt);
  EXPECT_EQ(r.of_kind("rr")[0].runs_failed, 1u);
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[1].kind, "rr");
  EXPECT_EQ(r.failures[1].params.dir, std::nullopt);
}

TEST(NetReportAggregate, PerGbIsAbsentIfAnyRunLacksCounters) {
  const Report r = aggregate(parse(iperf_line("vm", 1, 1, test::kCounters) + iperf_line("vm", 2, 1)));
  EXPECT_EQ(cell(r, "vm").rates, std::nullopt);
  EXPECT_TRUE(cell(aggregate(parse(iperf_line("vm", 1, 1, test::kCounters))), "vm").rates);
}

TEST(NetReportAggregate, PpsCellsMediansLossRatioAndPerMillionPackets) {
  const Report r = aggregate(parse(std::string(test::kSampleRuns) + test::kSamplePps));
  const std::vector<Cell> pps = r.of_kind("pps");
  ASSERT_EQ(pps.size(), 3u);  // 64 g2h host and vhost-irqfd, then 1472 h2g user-trap
  const Cell& host = pps[0];
  EXPECT_EQ(host.config, "host");
  EXPECT_EQ(host.runs_ok, 2u);
  EXPECT_DOUBLE_EQ(*host.median("pps"), 110000);
  EXPECT_DOUBLE_EQ(*host.values.at("pps").min, 100000);
  EXPECT_DOUBLE_EQ(*host.values.at("pps").max, 120000);
  EXPECT_DOUBLE_EQ(*host.values.at("pps").spread_pct, 20000.0 / 110000 * 100);
  EXPECT_DOUBLE_EQ(*host.median("loss_pct"), 0);
  EXPECT_DOUBLE_EQ(*host.ratio_to_host, 1);
  EXPECT_EQ(host.rates, std::nullopt);
  const Cell& v = pps[1];
  EXPECT_EQ(v.config, "vhost-irqfd");
  EXPECT_DOUBLE_EQ(*v.median("pps"), 20000);
  EXPECT_DOUBLE_EQ(*v.median("loss_pct"), 12.5);
  EXPECT_DOUBLE_EQ(*v.ratio_to_host, 20000.0 / 110000);
  EXPECT_EQ(v.sums.at("sent"), 90000);
  EXPECT_EQ(v.sums.at("received"), 80000);
  ASSERT_TRUE(v.rates);
  EXPECT_DOUBLE_EQ(*v.rate("vcpu_exits"), 20000);
  EXPECT_DOUBLE_EQ(*v.rate("wakeups"), 20000);
  EXPECT_DOUBLE_EQ(*v.rate("vmm_irqs"), 0);
  EXPECT_DOUBLE_EQ(*v.rate("guest_irqs"), 10000);
  const Cell& u = pps[2];
  EXPECT_EQ(u.params.payload, 1472u);
  EXPECT_EQ(u.params.dir, "h2g");
  EXPECT_EQ(u.runs_failed, 1u);
  EXPECT_EQ(u.median("pps"), std::nullopt);
  EXPECT_EQ(u.ratio_to_host, std::nullopt);
  ASSERT_EQ(r.failures.size(), 2u);  // the sample's iperf failure, then this one
  EXPECT_EQ(r.failures[1].kind, "pps");
  EXPECT_EQ(r.failures[1].params.payload, 1472u);
  EXPECT_EQ(r.failures[1].params.dir, "h2g");
  EXPECT_EQ(r.failures[1].params.streams, std::nullopt);
}

TEST(NetReportAggregate, KnownConfigsFirstThenOthersInFirstSeenOrder) {
  const Report r = aggregate(parse(iperf_line("zeta", 1, 1) + iperf_line("user-trap", 1, 1) +
                                   iperf_line("alpha", 1, 1) + iperf_line("host", 1, 1) +
                                   R"({"kind":"rr","config":"rr-only","mtu":1500,"rep":1,"failed":"x"})" "\n"));
  const std::vector<Cell> iperf = r.of_kind("iperf");
  ASSERT_EQ(iperf.size(), 4u);
  EXPECT_EQ(iperf[0].config, "host");
  EXPECT_EQ(iperf[1].config, "user-trap");
  EXPECT_EQ(iperf[2].config, "zeta");
  EXPECT_EQ(iperf[3].config, "alpha");
  EXPECT_EQ(r.configs, (std::vector<std::string>{"host", "user-trap", "zeta", "alpha", "rr-only"}));
}

TEST(NetReportAggregate, CellsAreGroupedByMtuThenDirectionThenStreams) {
  auto line = [](unsigned mtu, const char* dir, unsigned streams) {
    return R"({"kind":"iperf","config":"host","mtu":)" + std::to_string(mtu) + R"(,"dir":")" + dir +
           R"(","streams":)" + std::to_string(streams) + R"(,"rep":1,"bytes":1,"seconds":1,"bps":1})" "\n";
  };
  const Report r = aggregate(parse(line(9000, "g2h", 1) + line(1500, "h2g", 1) + line(1500, "g2h", 4) +
                                   line(1500, "g2h", 1)));
  const std::vector<Cell> iperf = r.of_kind("iperf");
  ASSERT_EQ(iperf.size(), 4u);
  EXPECT_EQ(iperf[0].params.streams, 1u);
  EXPECT_EQ(iperf[1].params.streams, 4u);
  EXPECT_EQ(iperf[2].params.dir, "h2g");
  EXPECT_EQ(iperf[3].params.mtu, 9000u);
}

// Guest-to-guest cells (net-compare.sh's g2g-MODE configs) follow the
// host-guest ones at their MTU, a2b before b2a, and have no host ratio:
// the host baseline has no guest-to-guest cell.
TEST(NetReportAggregate, GuestToGuestCellsFollowTheHostGuestOnes) {
  auto line = [](const char* config, const char* dir) {
    return std::string(R"({"kind":"iperf","config":")") + config + R"(","mtu":1500,"dir":")" + dir +
           R"(","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":1})" "\n";
  };
  const Report r = aggregate(parse(line("g2g-vhost-irqfd-mirror", "b2a") + line("g2g-vhost-irqfd-mirror", "a2b") +
                                   line("host", "h2g") + line("host", "g2h")));
  const std::vector<Cell> iperf = r.of_kind("iperf");
  ASSERT_EQ(iperf.size(), 4u);
  EXPECT_EQ(iperf[0].params.dir, "g2h");
  EXPECT_EQ(iperf[1].params.dir, "h2g");
  EXPECT_EQ(iperf[2].params.dir, "a2b");
  EXPECT_EQ(iperf[3].params.dir, "b2a");
  EXPECT_EQ(iperf[2].config, "g2g-vhost-irqfd-mirror");
  EXPECT_FALSE(iperf[2].ratio_to_host.has_value());
}

TEST(NetReportAggregate, LatencyCellsAndP50RatioToHost) {
  const Report r = aggregate(parse(
      R"({"kind":"rr","config":"vhost-irqfd","mtu":1500,"rep":1,"transactions":1,"seconds":1,"tps":10,"p50_us":90,"p90_us":1,"p99_us":300})" "\n"
      R"({"kind":"rr","config":"vhost-irqfd","mtu":1500,"rep":2,"transactions":1,"seconds":1,"tps":30,"p50_us":110,"p90_us":1,"p99_us":100})" "\n"
      R"({"kind":"rr","config":"host","mtu":1500,"rep":1,"transactions":1,"seconds":1,"tps":50,"p50_us":40,"p90_us":1,"p99_us":60})" "\n"
      R"({"kind":"rr","config":"host","mtu":9000,"rep":1,"transactions":1,"seconds":1,"tps":50,"p50_us":40,"p90_us":1,"p99_us":60})" "\n"
      R"({"kind":"rr","config":"user-trap","mtu":9000,"rep":1,"failed":"x"})" "\n"));
  const std::vector<Cell> rr = r.of_kind("rr");
  ASSERT_EQ(rr.size(), 4u);
  EXPECT_EQ(rr[0].config, "host");
  const Cell& v = rr[1];
  EXPECT_EQ(v.config, "vhost-irqfd");
  EXPECT_EQ(v.runs_ok, 2u);
  EXPECT_DOUBLE_EQ(*v.median("tps"), 20);
  EXPECT_DOUBLE_EQ(*v.median("p50_us"), 100);
  EXPECT_DOUBLE_EQ(*v.median("p99_us"), 200);
  EXPECT_DOUBLE_EQ(*v.ratio_to_host, 2.5);  // p50: 100 / 40
  EXPECT_EQ(rr[3].ratio_to_host, std::nullopt);  // user-trap at 9000: all failed
}

// A cell's completed, failed and retried runs.
std::tuple<unsigned, unsigned, unsigned> counts(const Cell& c) { return {c.runs_ok, c.runs_failed, c.retries}; }

// A run is judged by its last attempt: one that a retry made good is a
// completed run, in the medians, and shows only as a retry.
// Two boots' raw files, each with repeats 1 and 2 of a cell: four runs,
// and the median is over all of them (2, 4, 6, 8 Gbit/s: 5).
TEST(NetReportAggregate, RepeatsOfTwoBootsPoolInTheirCell) {
  RawData d;
  parse_runs(iperf_line("host", 1, 2) + iperf_line("host", 2, 4), "boot1.jsonl", ".", d);
  parse_runs(iperf_line("host", 1, 6) + iperf_line("host", 2, 8), "boot2.jsonl", ".", d);
  const Cell host = cell(aggregate(d), "host");
  EXPECT_EQ(counts(host), std::make_tuple(4u, 0u, 0u));
  EXPECT_DOUBLE_EQ(gbps(host), 5);
}

TEST(NetReportAggregate, ARetriedRunThatPassedCountsAsPassedWithItsRetryShown) {
  const Report r = aggregate(parse(test::kSampleAttempts));
  const Cell host = cell(r, "host");
  EXPECT_EQ(counts(host), std::make_tuple(2u, 0u, 1u));
  EXPECT_DOUBLE_EQ(gbps(host), 11);  // (10 + 12) / 2
  for (const auto& f : r.failures) EXPECT_NE(f.config, "host") << f.source.str();
  ASSERT_EQ(r.retried.size(), 2u);
  const Retried& t = r.retried[0];
  EXPECT_EQ(t.run.config, "host");
  EXPECT_EQ(t.run.rep, 1u);
  EXPECT_EQ(t.run.attempt, 2u);
  EXPECT_EQ(t.run.failed, std::nullopt);
  ASSERT_EQ(t.earlier.size(), 1u);
  EXPECT_EQ(t.earlier[0].failed, "iperf3_failed");
  EXPECT_EQ(t.earlier[0].source.str(), "raw:1");
}

// Failed at every attempt: one failed run, whose last reason is in the
// failures and whose earlier one is in its retry.
TEST(NetReportAggregate, ARunFailedTwiceCountsAsFailedOnceWithBothReasons) {
  const Report r = aggregate(parse(test::kSampleAttempts));
  const Cell trap = cell(r, "user-trap");
  EXPECT_EQ(counts(trap), std::make_tuple(1u, 1u, 1u));
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].failed, "iperf3_timeout");
  EXPECT_EQ(r.failures[0].source.str(), "raw:5");
  ASSERT_EQ(r.retried.size(), 2u);
  EXPECT_EQ(r.retried[1].run.source.str(), "raw:5");
  ASSERT_EQ(r.retried[1].earlier.size(), 1u);
  EXPECT_EQ(r.retried[1].earlier[0].failed, "iperf3_failed");
  EXPECT_EQ(r.retried[1].earlier[0].source.str(), "raw:4");
}

// The highest attempt judges the run wherever its record is, and the
// earlier ones are listed by attempt.
TEST(NetReportAggregate, TheHighestAttemptJudgesWhateverTheOrder) {
  const std::string id = R"({"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,)";
  const Report r = aggregate(parse(id + R"("attempt":3,"outcome":"ok","bytes":1,"seconds":1,"bps":1e9})" "\n" + id +
                                   R"("attempt":2,"outcome":"failed","failed":"b"})" "\n" + id +
                                   R"("attempt":1,"outcome":"failed","failed":"a"})" "\n"));
  const Cell host = cell(r, "host");
  EXPECT_EQ(counts(host), std::make_tuple(1u, 0u, 1u));
  EXPECT_TRUE(r.failures.empty());
  ASSERT_EQ(r.retried.size(), 1u);
  ASSERT_EQ(r.retried[0].earlier.size(), 2u);
  EXPECT_EQ(r.retried[0].earlier[0].failed, "a");
  EXPECT_EQ(r.retried[0].earlier[1].failed, "b");
}

TEST(NetReportAggregate, RunsTriedOnceHaveNoRetries) {
  const Report r = aggregate(parse(test::kSampleRuns));
  for (const Cell& c : r.cells) EXPECT_EQ(c.retries, 0u) << c.config;
  EXPECT_TRUE(r.retried.empty());
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

// fio: IO/s against the host's for the same rw, bs and depth; counters per
// million requests and per GB (kSampleFio's comment works them out).
TEST(NetReportAggregate, FioCellsPerMillionRequestsAndPerGb) {
  const Report r = aggregate(parse(std::string(test::kSampleRuns) + test::kSampleFio));
  const std::vector<Cell> fio = r.of_kind("fio");
  ASSERT_EQ(fio.size(), 3u);
  // 1 MiB first, then 4 KiB; the host before the guests.
  EXPECT_EQ(fio[0].config, "blk-io_uring-trap");
  EXPECT_EQ(fio[0].runs_failed, 1u);
  EXPECT_EQ(fio[1].config, "host");
  EXPECT_DOUBLE_EQ(*fio[1].median("iops"), 100000);
  EXPECT_FALSE(fio[1].rates);
  const Cell& g = fio[2];
  EXPECT_EQ(g.config, "blk-io_uring-mirror");
  EXPECT_EQ(*g.params.rw, "randread");
  EXPECT_EQ(*g.params.bs, 4096u);
  EXPECT_EQ(*g.params.depth, 32u);
  EXPECT_DOUBLE_EQ(*g.ratio_to_host, 0.04);
  EXPECT_EQ(*g.rate("vcpu_exits"), 0);
  EXPECT_DOUBLE_EQ(*g.rate("wakeups"), 500000);
  EXPECT_DOUBLE_EQ(*g.rate("guest_irqs"), 300000);
  EXPECT_DOUBLE_EQ(*g.rate("vmm_irqs"), 250000);
  EXPECT_EQ(*g.rate2("vcpu_exits"), 0);
  EXPECT_DOUBLE_EQ(*g.rate2("wakeups"), 100000);
  EXPECT_DOUBLE_EQ(*g.rate2("guest_irqs"), 60000);
  // The other kinds have no second denominator.
  EXPECT_FALSE(cell(r, "vhost-irqfd").rates2);
}

// kSampleVsock's comment works the figures out. Each guest cell is set
// against the host's vsock loopback in its own direction, never against
// the other direction's or an iperf host cell.
TEST(NetReportAggregate, VsockCellsRatioToTheHostOfTheSameDirAndPerGb) {
  const Report r = aggregate(parse(std::string(test::kSampleRuns) + test::kSampleVsock));
  const std::vector<Cell> v = r.of_kind("vsock");
  ASSERT_EQ(v.size(), 4u);
  // g2h before h2g; the host before the guest; after every other kind.
  EXPECT_EQ(r.cells.back().kind, "vsock");
  EXPECT_EQ(v[0].config, "host");
  EXPECT_EQ(*v[0].params.dir, "g2h");
  EXPECT_DOUBLE_EQ(*v[0].median("bps", 1e9), 50);
  EXPECT_DOUBLE_EQ(*v[0].ratio_to_host, 1);
  EXPECT_FALSE(v[0].rates);
  EXPECT_FALSE(v[0].outside_rates);
  const Cell& g2h = v[1];
  EXPECT_EQ(g2h.config, "vsock-mirror");
  EXPECT_EQ(*g2h.params.dir, "g2h");
  EXPECT_EQ(g2h.params.mtu, std::nullopt);
  EXPECT_EQ(g2h.runs_ok, 2u);
  EXPECT_DOUBLE_EQ(*g2h.median("bps", 1e9), 12.5);
  EXPECT_DOUBLE_EQ(*g2h.range("bps").min, 10e9);
  EXPECT_DOUBLE_EQ(*g2h.range("bps").max, 15e9);
  EXPECT_DOUBLE_EQ(*g2h.range("bps").spread_pct, 40);
  EXPECT_DOUBLE_EQ(*g2h.ratio_to_host, 0.25);  // 12.5 / 50
  EXPECT_EQ(g2h.ratio_to_user_trap, std::nullopt);  // user-trap ran no vsock
  EXPECT_EQ(g2h.sum("bytes"), 6.25e9);
  EXPECT_DOUBLE_EQ(*g2h.rate("vcpu_exits"), 20);
  EXPECT_DOUBLE_EQ(*g2h.rate("guest_irqs"), 2000);
  EXPECT_EQ(*g2h.rate("vmm_irqs"), 0);
  EXPECT_FALSE(g2h.rates2);  // one denominator, as iperf
  EXPECT_DOUBLE_EQ(*g2h.outside_rate("kvm_exits"), 200);
  EXPECT_DOUBLE_EQ(*g2h.outside_rate("kvm_halt_wakeup"), 1000);
  EXPECT_DOUBLE_EQ(*g2h.outside_rate("vmm_ctxt_switches"), 0.8);
  EXPECT_DOUBLE_EQ(*g2h.outside_rate("vmm_cpu_ms"), 6.4);
  EXPECT_DOUBLE_EQ(*g2h.vmm_cpu_core_pct, 1);  // 40 ms over 4 s
  EXPECT_EQ(v[2].config, "host");
  EXPECT_EQ(*v[2].params.dir, "h2g");
  const Cell& h2g = v[3];
  EXPECT_EQ(h2g.config, "vsock-mirror");
  EXPECT_EQ(h2g.runs_ok, 1u);
  EXPECT_EQ(h2g.runs_failed, 1u);
  EXPECT_DOUBLE_EQ(*h2g.ratio_to_host, 0.4);  // 12 / 30, not 12 / 50
  EXPECT_DOUBLE_EQ(*h2g.rate("guest_irqs"), 200);
  EXPECT_FALSE(h2g.outside_rates);  // its run has no "outside"
  // The iperf cells keep their own baseline.
  EXPECT_DOUBLE_EQ(*cell(r, "vhost-irqfd").ratio_to_host, 8.75 / 11);
  // The failure is listed after the other kinds'.
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0].kind, "iperf");
  EXPECT_EQ(r.failures[1].kind, "vsock");
  EXPECT_EQ(r.failures[1].failed, "vsock_stream_failed");
  // A guest direction without a host cell has no ratio.
  const Report alone = aggregate(parse(
      R"({"kind":"vsock","config":"vsock-mirror","dir":"g2h","rep":1,"bytes":1,"seconds":1,"bps":8})" "\n"
      R"({"kind":"vsock","config":"host","dir":"h2g","rep":1,"bytes":1,"seconds":1,"bps":8})" "\n"));
  ASSERT_EQ(alone.cells.size(), 2u);
  EXPECT_EQ(alone.cells[0].config, "vsock-mirror");
  EXPECT_EQ(alone.cells[0].ratio_to_host, std::nullopt);
}

// The peer VMM: qemu-pci and qemu-mmio follow kvmmio's guest modes and
// precede unknown configs; guest-to-guest configs still sort after the
// host-guest cells.
TEST(NetReportAggregate, PeerConfigsFollowKvmmiosGuestModes) {
  auto g2g = [](const char* config, const char* dir) {
    return std::string(R"({"kind":"iperf","config":")") + config + R"(","mtu":1500,"dir":")" + dir +
           R"(","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":1})" "\n";
  };
  const Report r = aggregate(parse(iperf_line("zeta", 1, 1) + iperf_line("qemu-mmio", 1, 1) +
                                   g2g("g2g-vhost-irqfd", "a2b") + iperf_line("user-trap", 1, 1) +
                                   iperf_line("qemu-pci", 1, 1) + iperf_line("vhost-irqfd-mirror-poll", 1, 1) +
                                   iperf_line("host", 1, 1)));
  EXPECT_EQ(r.configs, (std::vector<std::string>{"host", "vhost-irqfd-mirror-poll", "user-trap", "qemu-pci",
                                                 "qemu-mmio", "zeta", "g2g-vhost-irqfd"}));
  const std::vector<Cell> iperf = r.of_kind("iperf");
  ASSERT_EQ(iperf.size(), 7u);
  EXPECT_EQ(iperf[3].config, "qemu-pci");
  EXPECT_EQ(iperf[4].config, "qemu-mmio");
  EXPECT_EQ(iperf[5].config, "zeta");
  EXPECT_EQ(iperf[6].config, "g2g-vhost-irqfd");
  EXPECT_FALSE(iperf[6].ratio_to_peer.has_value());  // a2b: qemu-pci has no such cell
}

TEST(NetReportAggregate, RatiosToThePeerVmm) {
  const Report r = aggregate(parse(std::string(test::kSampleRuns) + test::kSamplePps + test::kSamplePeer));
  EXPECT_EQ(cell(r, "qemu-pci").ratio_to_peer, std::nullopt);  // not against itself
  EXPECT_DOUBLE_EQ(gbps(cell(r, "qemu-pci")), 8);
  EXPECT_DOUBLE_EQ(*cell(r, "qemu-pci").ratio_to_host, 8.0 / 11);
  EXPECT_DOUBLE_EQ(*cell(r, "qemu-mmio").ratio_to_peer, 0.5);
  EXPECT_DOUBLE_EQ(*cell(r, "vhost-irqfd-mirror").ratio_to_peer, 1.5);
  EXPECT_DOUBLE_EQ(*cell(r, "vhost-irqfd").ratio_to_peer, 1.09375);
  EXPECT_DOUBLE_EQ(*cell(r, "host").ratio_to_peer, 1.375);
  EXPECT_DOUBLE_EQ(*cell(r, "user-trap").ratio_to_peer, 0.3125);
  EXPECT_EQ(cell(r, "host").p99_ratio_to_peer, std::nullopt);  // rr only
  // rr: p50 and p99 against qemu-pci's.
  const std::vector<Cell> rr = r.of_kind("rr");
  ASSERT_EQ(rr.size(), 4u);
  EXPECT_EQ(rr[0].config, "host");
  EXPECT_DOUBLE_EQ(*rr[0].ratio_to_peer, 0.5);
  EXPECT_DOUBLE_EQ(*rr[0].p99_ratio_to_peer, 0.2);
  EXPECT_EQ(rr[1].config, "vhost-irqfd");
  EXPECT_DOUBLE_EQ(*rr[1].ratio_to_peer, 1.25);
  EXPECT_DOUBLE_EQ(*rr[1].p99_ratio_to_peer, 0.5);
  EXPECT_EQ(rr[2].config, "qemu-pci");
  EXPECT_EQ(rr[2].ratio_to_peer, std::nullopt);
  EXPECT_EQ(rr[2].p99_ratio_to_peer, std::nullopt);
  EXPECT_EQ(rr[3].config, "qemu-mmio");
  EXPECT_DOUBLE_EQ(*rr[3].ratio_to_peer, 1.5);
  EXPECT_DOUBLE_EQ(*rr[3].p99_ratio_to_peer, 1.5);
  // pps: same MTU, payload and dir only.
  const std::vector<Cell> pps = r.of_kind("pps");
  ASSERT_EQ(pps.size(), 5u);
  EXPECT_EQ(pps[1].config, "vhost-irqfd");
  EXPECT_DOUBLE_EQ(*pps[1].ratio_to_peer, 0.5);
  EXPECT_EQ(pps[3].config, "qemu-mmio");
  EXPECT_DOUBLE_EQ(*pps[3].ratio_to_peer, 0.75);
  EXPECT_EQ(pps[4].config, "user-trap");
  EXPECT_EQ(pps[4].ratio_to_peer, std::nullopt);  // 1472 B h2g: no qemu-pci cell
  // Without a qemu-pci cell, no ratio at all.
  EXPECT_EQ(cell(aggregate(parse(test::kSampleRuns)), "vhost-irqfd").ratio_to_peer, std::nullopt);
}

TEST(NetReportAggregate, OutsideCountersPerGbLeaveOutTheUnreadable) {
  const Report r = aggregate(parse(std::string(test::kSampleRuns) + test::kSamplePps + test::kSamplePeer));
  const Cell pci = cell(r, "qemu-pci");
  ASSERT_TRUE(pci.outside_rates);
  EXPECT_EQ(pci.outside_rates->size(), 6u);  // kvm_mmio_exit_kernel null in rep 2
  EXPECT_EQ(pci.outside_rates->count("kvm_mmio_exit_kernel"), 0u);
  EXPECT_EQ(pci.outside_rate("kvm_mmio_exit_kernel"), std::nullopt);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("kvm_exits"), 5000);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("kvm_mmio_exit_user"), 200);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("kvm_halt_wakeup"), 1000);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("vmm_ctxt_switches"), 100);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("vmm_cpu_ms"), 400);  // 4000 ms over 1e10 bytes
  EXPECT_DOUBLE_EQ(*pci.outside_rate("guest_irqs"), 2000);
  EXPECT_EQ(pci.rates, std::nullopt);  // QEMU: no kvmmio counters
  EXPECT_EQ(pci.outside_rates2, std::nullopt);  // iperf has one denominator
  const Cell mmio = cell(r, "qemu-mmio");
  EXPECT_DOUBLE_EQ(*mmio.outside_rate("kvm_exits"), 200000);
  EXPECT_DOUBLE_EQ(*mmio.outside_rate("kvm_mmio_exit_user"), 150000);
  EXPECT_EQ(*mmio.outside_rate("kvm_mmio_exit_kernel"), 0);  // read as 0: kept
  EXPECT_EQ(mmio.outside_rate("vmm_ctxt_switches"), std::nullopt);
  EXPECT_EQ(mmio.outside_rate("vmm_cpu_ms"), std::nullopt);  // a raw record of six, from before it
  EXPECT_DOUBLE_EQ(*mmio.outside_rate("guest_irqs"), 3000);
  // kvmmio with both: its own counters and the outside ones, apart.
  const Cell mirror = cell(r, "vhost-irqfd-mirror");
  EXPECT_DOUBLE_EQ(*mirror.rate("vcpu_exits"), 100);
  EXPECT_DOUBLE_EQ(*mirror.outside_rate("kvm_exits"), 1000);
  EXPECT_EQ(*mirror.outside_rate("kvm_mmio_exit_user"), 0);
  EXPECT_DOUBLE_EQ(*mirror.outside_rate("kvm_mmio_exit_kernel"), 500);
  EXPECT_DOUBLE_EQ(*mirror.outside_rate("kvm_halt_wakeup"), 200);
  EXPECT_DOUBLE_EQ(*mirror.outside_rate("vmm_ctxt_switches"), 100);
  EXPECT_EQ(*mirror.outside_rate("vmm_cpu_ms"), 0);  // read as 0: kept
  EXPECT_DOUBLE_EQ(*mirror.outside_rate("guest_irqs"), 3000);
  EXPECT_EQ(cell(r, "vhost-irqfd").outside_rates, std::nullopt);  // its runs carry none
  EXPECT_EQ(cell(r, "host").outside_rates, std::nullopt);
}

TEST(NetReportAggregate, OutsideCountersPerMillionPacketsAndUnsetIfARunLacksThem) {
  const Report r = aggregate(parse(std::string(test::kSampleRuns) + test::kSamplePps + test::kSamplePeer));
  const std::vector<Cell> pps = r.of_kind("pps");
  ASSERT_EQ(pps.size(), 5u);
  const Cell& pci = pps[2];
  EXPECT_EQ(pci.config, "qemu-pci");
  ASSERT_TRUE(pci.outside_rates);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("kvm_exits"), 100000);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("kvm_mmio_exit_user"), 5000);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("kvm_mmio_exit_kernel"), 25000);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("kvm_halt_wakeup"), 50000);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("vmm_ctxt_switches"), 2500);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("vmm_cpu_ms"), 12500);
  EXPECT_DOUBLE_EQ(*pci.outside_rate("guest_irqs"), 12500);
  EXPECT_EQ(pps[3].config, "qemu-mmio");
  EXPECT_EQ(pps[3].outside_rates, std::nullopt);  // rep 2 has no "outside"
  EXPECT_EQ(pps[3].outside_rate("kvm_exits"), std::nullopt);
  // A failed run without "outside" does not unset it; a zero amount does.
  const Report f = aggregate(parse(iperf_line("vm", 1, 1, test::kOutside) +
                                   R"({"kind":"iperf","config":"vm","mtu":1500,"dir":"g2h","streams":1,"rep":2,"failed":"x"})" "\n"));
  EXPECT_DOUBLE_EQ(*cell(f, "vm").outside_rate("kvm_exits"), 1e6);  // 1 over 1000 bytes
  EXPECT_DOUBLE_EQ(*cell(f, "vm").outside_rate("guest_irqs"), 6e6);
  const Report zero = aggregate(parse(
      R"({"kind":"iperf","config":"vm","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":0,"seconds":1,"bps":0)" +
      std::string(test::kOutside) + "}\n"));
  EXPECT_EQ(cell(zero, "vm").outside_rates, std::nullopt);
}

// fio: per million requests, and per GB as rates2 is.
TEST(NetReportAggregate, OutsideCountersOfFioPerMillionRequestsAndPerGb) {
  const Report r = aggregate(parse(test::kFioOutside));
  const Cell c = r.of_kind("fio").at(0);
  EXPECT_DOUBLE_EQ(*c.outside_rate("kvm_exits"), 100000);
  EXPECT_DOUBLE_EQ(*c.outside_rate("kvm_halt_wakeup"), 500000);
  EXPECT_DOUBLE_EQ(*c.outside_rate("guest_irqs"), 300000);
  EXPECT_EQ(c.outside_rate("vmm_ctxt_switches"), std::nullopt);
  EXPECT_DOUBLE_EQ(*c.outside_rate("vmm_cpu_ms"), 87500);  // 350 ms over 4000 requests
  EXPECT_DOUBLE_EQ(*c.outside_rate2("kvm_exits"), 20000);
  EXPECT_DOUBLE_EQ(*c.outside_rate2("kvm_mmio_exit_kernel"), 10000);
  EXPECT_DOUBLE_EQ(*c.outside_rate2("guest_irqs"), 60000);
  EXPECT_EQ(c.outside_rate2("vmm_ctxt_switches"), std::nullopt);
  EXPECT_DOUBLE_EQ(*c.outside_rate2("vmm_cpu_ms"), 17500);  // over 0.02 GB
  EXPECT_EQ(c.rates, std::nullopt);
}

// The VMM's CPU as a percentage of one core: its vmm_cpu_ms summed over
// the completed runs / their seconds summed, of every kind with outside
// counters (kSamplePeer's and kFioOutside's comments work them out).
TEST(NetReportAggregate, VmmCpuAsPercentOfOneCore) {
  const Report r = aggregate(parse(std::string(test::kSampleRuns) + test::kSamplePps + test::kSamplePeer));
  EXPECT_DOUBLE_EQ(*cell(r, "qemu-pci").vmm_cpu_core_pct, 40);  // (1500 + 2500) ms over 10 s
  EXPECT_EQ(*cell(r, "vhost-irqfd-mirror").vmm_cpu_core_pct, 0);
  EXPECT_EQ(cell(r, "qemu-mmio").vmm_cpu_core_pct, std::nullopt);  // six counters: no vmm_cpu_ms
  EXPECT_EQ(cell(r, "vhost-irqfd").vmm_cpu_core_pct, std::nullopt);  // no "outside"
  EXPECT_EQ(cell(r, "host").vmm_cpu_core_pct, std::nullopt);
  const std::vector<Cell> pps = r.of_kind("pps");
  EXPECT_EQ(pps[2].config, "qemu-pci");
  EXPECT_DOUBLE_EQ(*pps[2].vmm_cpu_core_pct, 50);  // 1000 ms over 2 s
  EXPECT_EQ(pps[3].vmm_cpu_core_pct, std::nullopt);  // a run without "outside"
  EXPECT_DOUBLE_EQ(*aggregate(parse(test::kFioOutside)).of_kind("fio").at(0).vmm_cpu_core_pct, 35);
  for (const Cell& c : r.of_kind("rr")) EXPECT_EQ(c.vmm_cpu_core_pct, std::nullopt) << c.config;

  // Sums, not a mean of ratios: 100 ms over 1 s and 900 ms over 3 s are
  // 1000 ms over 4 s, 25% (a mean of the runs' 10% and 30% would be 20%).
  const auto run = [](unsigned rep, int seconds, const std::string& cpu) {
    return R"({"kind":"iperf","config":"vm","mtu":1500,"dir":"g2h","streams":1,"rep":)" + std::to_string(rep) +
           R"(,"bytes":1000,"seconds":)" + std::to_string(seconds) +
           R"(,"bps":8000,"outside":{"kvm_exits":1,"kvm_mmio_exit_user":2,"kvm_mmio_exit_kernel":3,)"
           R"("kvm_halt_wakeup":4,"vmm_ctxt_switches":5,"vmm_cpu_ms":)" + cpu + R"(,"guest_irqs":6}})" "\n";
  };
  EXPECT_DOUBLE_EQ(*cell(aggregate(parse(run(1, 1, "100") + run(2, 3, "900"))), "vm").vmm_cpu_core_pct, 25);
  // Unset when one completed run lacks it (null, or a record of six), or
  // when the seconds add up to 0; a failed run does not count.
  EXPECT_EQ(cell(aggregate(parse(run(1, 1, "100") + run(2, 3, "null"))), "vm").vmm_cpu_core_pct, std::nullopt);
  EXPECT_EQ(cell(aggregate(parse(run(1, 1, "100") + iperf_line("vm", 2, 1, test::kOutsideSix))), "vm").vmm_cpu_core_pct,
            std::nullopt);
  EXPECT_EQ(cell(aggregate(parse(run(1, 0, "100"))), "vm").vmm_cpu_core_pct, std::nullopt);
  EXPECT_DOUBLE_EQ(
      *cell(aggregate(parse(run(1, 2, "500") +
                            R"({"kind":"iperf","config":"vm","mtu":1500,"dir":"g2h","streams":1,"rep":2,"failed":"x"})" "\n")),
            "vm")
           .vmm_cpu_core_pct,
      25);
}

}  // namespace
}  // namespace kvmmio::report
