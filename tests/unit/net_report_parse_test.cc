// SPDX-License-Identifier: BSD-2-Clause
// net_report's raw-file reader: valid JSON-lines records of each kind, and
// each kind of bad input refused with its file and line.
#include <gtest/gtest.h>

#include <fstream>

#include "bench/report/report.h"
#include "tests/unit/net_report_test_data.h"
#include "tests/vmm/test_files.h"

namespace kvmmio::report {
namespace {

using test::kCounters;
using test::parse;
using test::parse_error;

constexpr const char* kIperf =
    R"({"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":1,"seconds":1,"bps":8})";

TEST(NetReportParse, IperfRunWithCounters) {
  const RawData d = parse(
      R"({"kind":"iperf","config":"vhost-irqfd","mtu":9000,"dir":"h2g","streams":4,"rep":2,"bytes":123,)"
      R"("seconds":5.5,"bps":1.5e9)" + std::string(kCounters) + "}\n");
  ASSERT_EQ(d.runs.size(), 1u);
  const auto& r = d.runs[0];
  EXPECT_EQ(r.kind, "iperf");
  EXPECT_EQ(r.config, "vhost-irqfd");
  EXPECT_EQ(r.params.mtu, 9000u);
  EXPECT_EQ(r.params.dir, "h2g");
  EXPECT_EQ(r.params.streams, 4u);
  EXPECT_EQ(r.params.payload, std::nullopt);
  EXPECT_EQ(r.rep, 2u);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.values.at("bytes"), 123);
  EXPECT_DOUBLE_EQ(r.values.at("seconds"), 5.5);
  EXPECT_DOUBLE_EQ(r.values.at("bps"), 1.5e9);
  ASSERT_TRUE(r.counters);
  EXPECT_EQ(r.counters->at("vcpu_exits"), 1);
  EXPECT_EQ(r.counters->at("wakeups"), 2);
  EXPECT_EQ(r.counters->at("injected"), 3);
  EXPECT_EQ(r.counters->at("relayed"), 4);
  EXPECT_EQ(r.counters->at("trapped"), 5);
  EXPECT_EQ(r.counters->at("polled"), 6);
  EXPECT_EQ(r.counters->at("guest_irqs"), 7);
  EXPECT_EQ(r.source.str(), "raw:1");
}

TEST(NetReportParse, HostRunHasNoCountersAndUnknownConfigsAreAccepted) {
  const RawData d = parse(std::string(kIperf) + "\n" + test::iperf_line("my-new-mode", 1, 1));
  ASSERT_EQ(d.runs.size(), 2u);
  EXPECT_FALSE(d.runs[0].counters);
  EXPECT_EQ(d.runs[1].config, "my-new-mode");
}

TEST(NetReportParse, FailedRunsNeedNoMeasurementsNorUnreachedParameters) {
  const RawData d = parse(
      R"({"kind":"iperf","config":"user-trap","mtu":1500,"dir":"g2h","streams":1,"rep":1,"failed":"no_route"})" "\n"
      R"({"kind":"rr","config":"host","mtu":1500,"rep":1,"failed":"timeout","tps":3})" "\n"
      R"({"kind":"iperf","config":"vhost-relay","failed":"guest_did_not_boot"})" "\n");
  ASSERT_EQ(d.runs.size(), 3u);
  EXPECT_EQ(d.runs[0].failed, "no_route");
  EXPECT_EQ(d.runs[1].failed, "timeout");
  EXPECT_TRUE(d.runs[1].values.empty());  // a failed run's measurements are not used
  EXPECT_EQ(d.runs[2].params.mtu, std::nullopt);
  EXPECT_EQ(d.runs[2].rep, 0u);
  // Such a run is listed as failed but belongs to no cell.
  const Report r = aggregate(d);
  EXPECT_EQ(r.failures.size(), 3u);
  EXPECT_EQ(r.cells.size(), 2u);
}

TEST(NetReportParse, RrRun) {
  const RawData d = parse(R"({"kind":"rr","config":"host","mtu":9000,"rep":3,"transactions":1000,"seconds":5,)"
                          R"("tps":200,"p50_us":40.5,"p90_us":50,"p99_us":99.25})");
  ASSERT_EQ(d.runs.size(), 1u);
  EXPECT_EQ(d.runs[0].params.mtu, 9000u);
  EXPECT_EQ(d.runs[0].values.at("transactions"), 1000);
  EXPECT_DOUBLE_EQ(d.runs[0].values.at("tps"), 200);
  EXPECT_DOUBLE_EQ(d.runs[0].values.at("p50_us"), 40.5);
  EXPECT_DOUBLE_EQ(d.runs[0].values.at("p99_us"), 99.25);
}

TEST(NetReportParse, PpsRunGetsItsLossPercentage) {
  const RawData d = parse(
      R"({"kind":"pps","config":"user-trap","mtu":1500,"payload":64,"dir":"h2g","rep":2,"sent":10,"received":7,)"
      R"("lost":3,"seconds":2.5,"pps":2.8)" + std::string(kCounters) + "}\n" +
      R"({"kind":"pps","config":"host","mtu":1500,"payload":1472,"dir":"g2h","rep":1,"sent":0,"received":0,)"
      R"("lost":0,"seconds":1,"pps":0})");
  ASSERT_EQ(d.runs.size(), 2u);
  const auto& r = d.runs[0];
  EXPECT_EQ(r.params.payload, 64u);
  EXPECT_EQ(r.params.dir, "h2g");
  EXPECT_DOUBLE_EQ(r.values.at("loss_pct"), 30);
  EXPECT_EQ(r.counters->at("trapped"), 5);
  EXPECT_EQ(d.runs[1].values.count("loss_pct"), 0u);  // nothing sent: no loss to speak of
}

// The driver's AF_VSOCK runs: a direction and the receiver's bytes,
// seconds and bits per second; a guest's with both sets of counters, the
// host's loopback with neither.
TEST(NetReportParse, VsockRunWithCountersAndOutside) {
  const RawData d = parse(
      R"({"kind":"vsock","config":"host","dir":"g2h","rep":1,"bytes":123456789,"seconds":2.001,"bps":493580000})" "\n"
      R"({"kind":"vsock","config":"vsock-mirror","dir":"h2g","rep":1,"bytes":98765432,"seconds":2.0,"bps":395061728,)"
      R"("counters":{"vcpu_exits":0,"wakeups":0,"injected":0,"relayed":0,"trapped":0,"polled":0,"guest_irqs":812},)"
      R"("outside":{"kvm_exits":12,"kvm_mmio_exit_user":0,"kvm_mmio_exit_kernel":0,"kvm_halt_wakeup":40,)"
      R"("vmm_ctxt_switches":2,"vmm_cpu_ms":0,"guest_irqs":812}})" "\n"
      R"({"kind":"vsock","config":"vsock-mirror","dir":"g2h","rep":2,"attempt":1,"outcome":"failed","failed":"no_cid"})");
  ASSERT_EQ(d.runs.size(), 3u);
  const auto& host = d.runs[0];
  EXPECT_EQ(host.kind, "vsock");
  EXPECT_EQ(host.config, "host");
  EXPECT_EQ(host.params.dir, "g2h");
  EXPECT_EQ(host.params.mtu, std::nullopt);
  EXPECT_EQ(host.params.streams, std::nullopt);
  EXPECT_EQ(host.values.at("bytes"), 123456789);
  EXPECT_DOUBLE_EQ(host.values.at("seconds"), 2.001);
  EXPECT_EQ(host.values.at("bps"), 493580000);
  EXPECT_FALSE(host.counters);
  EXPECT_FALSE(host.outside);
  const auto& guest = d.runs[1];
  EXPECT_EQ(guest.config, "vsock-mirror");
  EXPECT_EQ(guest.params.dir, "h2g");
  EXPECT_EQ(guest.values.at("bps"), 395061728);
  ASSERT_TRUE(guest.counters);
  EXPECT_EQ(guest.counters->at("guest_irqs"), 812);
  ASSERT_TRUE(guest.outside);
  EXPECT_EQ(guest.outside->at("kvm_exits"), 12);
  EXPECT_EQ(guest.outside->at("kvm_halt_wakeup"), 40);
  EXPECT_EQ(guest.outside->at("vmm_cpu_ms"), 0);
  const auto& failed = d.runs[2];
  EXPECT_EQ(failed.failed, "no_cid");
  EXPECT_EQ(failed.attempt, 1u);
  EXPECT_TRUE(failed.values.empty());
  EXPECT_EQ(failed.source.str(), "raw:3");
}

TEST(NetReportParse, MetaMembersAreCopiedAsTextAndMayRepeatWithTheSameValue) {
  const RawData d = parse(R"({"kind":"meta","gic":"3","seconds":5})" "\n"
                          R"({"kind":"meta","machine":"ampere altra","gic":"3"})" "\n");
  ASSERT_EQ(d.meta.size(), 3u);
  EXPECT_EQ(d.meta[0].key, "gic");
  EXPECT_EQ(d.meta[1].value, "5");
  EXPECT_EQ(d.meta[2].key, "machine");
  EXPECT_EQ(d.meta[2].value, "ampere altra");
}

TEST(NetReportParse, BlankLinesAreSkippedButCounted) {
  EXPECT_EQ(parse_error("\n   \n\r\n{\"kind\":\"bogus\"}\n"),
            "raw:4: unknown kind \"bogus\" (expected meta, micro, iperf, rr, pps, fio or vsock)");
  EXPECT_EQ(parse("\n  \n").runs.size(), 0u);
}

// Each bad case, as the second line so the line number is checked.
struct Malformed {
  std::string line;
  const char* message;
};

class NetReportParseMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(NetReportParseMalformed, NamesTheLine) {
  EXPECT_EQ(parse_error(std::string(kIperf) + "\n" + GetParam().line + "\n"), std::string("raw:2: ") + GetParam().message);
}

// kIperf with `member` (e.g. "bps":1) replacing the member of the same name,
// or left out when `member` is just a name.
std::string iperf_with(const std::string& name, const std::string& value = "") {
  std::string s = kIperf;
  const size_t at = s.find("\"" + name + "\":");
  const size_t end = s.find_first_of(",}", at);
  if (value.empty()) return s.erase(at - 1, end - at + 1);  // with the comma before it
  return s.replace(at, end - at, "\"" + name + "\":" + value);
}

INSTANTIATE_TEST_SUITE_P(
    NetReportParse, NetReportParseMalformed,
    ::testing::Values(
        Malformed{"iperf config=host mtu=1500", "not JSON"},
        Malformed{R"({"kind":"iperf","config":"host")", "not JSON"},
        Malformed{"[1,2]", "not a JSON object"},
        Malformed{R"({"config":"host"})", "\"kind\" missing"},
        Malformed{R"({"kind":3})", "\"kind\" is not a non-empty string"},
        Malformed{R"({"kind":"iperfs","config":"host"})",
                  "unknown kind \"iperfs\" (expected meta, micro, iperf, rr, pps, fio or vsock)"},
        Malformed{iperf_with("bytes"), "\"bytes\" missing"},
        Malformed{iperf_with("config"), "\"config\" missing"},
        Malformed{iperf_with("config", "\"\""), "\"config\" is not a non-empty string"},
        Malformed{iperf_with("mtu"), "\"mtu\" missing"},
        Malformed{iperf_with("rep"), "\"rep\" missing"},
        Malformed{R"({"kind":"rr","config":"host","mtu":1500,"rep":1,"transactions":1,"seconds":1,"tps":1,)"
                  R"("p50_us":1,"p90_us":1})",
                  "\"p99_us\" missing"},
        Malformed{R"({"kind":"micro","file":"x.json"})", "\"platform\" missing"},
        Malformed{iperf_with("bps", "\"fast\""), "\"bps\" is not a number from 0 to 2^53"},
        Malformed{iperf_with("seconds", "-1"), "\"seconds\" is not a number from 0 to 2^53"},
        Malformed{iperf_with("bytes", "1e300"), "\"bytes\" is not a number from 0 to 2^53"},
        Malformed{iperf_with("mtu", "99999999999"), "\"mtu\" is not a whole number from 1 to 4294967295"},
        Malformed{iperf_with("mtu", "1500.5"), "\"mtu\" is not a whole number from 1 to 4294967295"},
        Malformed{iperf_with("streams", "0"), "\"streams\" is not a whole number from 1 to 4294967295"},
        Malformed{iperf_with("dir", "\"both\""), "\"dir\" is \"both\", not g2h, h2g, a2b or b2a"},
        Malformed{iperf_with("bps", "8,\"wakeup\":3"), "unknown member \"wakeup\""},
        Malformed{iperf_with("bps", "8,\"counters\":{\"vcpu_exits\":1}"),
                  "\"counters\" has no \"wakeups\" (give all seven counters or none)"},
        Malformed{iperf_with("bps", "8,\"counters\":[1]"), "\"counters\" is not an object"},
        Malformed{R"({"kind":"rr","config":"host","mtu":1500,"rep":1,"failed":"x","counters":{}})",
                  "unknown member \"counters\""},
        Malformed{kIperf, "iperf run already given at raw:1"},
        // "attempt" and "outcome" (kIperf at rep 2 here, to be another run).
        Malformed{iperf_with("rep", "2,\"attempt\":2"), "\"attempt\" without \"outcome\""},
        Malformed{iperf_with("rep", "2,\"outcome\":\"ok\""), "\"outcome\" without \"attempt\""},
        Malformed{iperf_with("rep", "2,\"attempt\":0,\"outcome\":\"ok\""),
                  "\"attempt\" is not a whole number from 1 to 4294967295"},
        Malformed{iperf_with("rep", "2,\"attempt\":1,\"outcome\":\"retried\""),
                  "\"outcome\" is \"retried\", not ok or failed"},
        Malformed{iperf_with("rep", "2,\"attempt\":1,\"outcome\":\"failed\""),
                  "\"outcome\" is \"failed\" but \"failed\" gives no reason"},
        Malformed{R"({"kind":"rr","config":"host","mtu":1500,"rep":1,"attempt":1,"outcome":"ok","failed":"x"})",
                  "\"outcome\" is \"ok\" but the record has \"failed\""},
        // kIperf is attempt 1 of its run, and it did not fail.
        Malformed{iperf_with("rep", "1,\"attempt\":1,\"outcome\":\"ok\""),
                  "attempt 1 of this iperf run already given at raw:1"},
        Malformed{iperf_with("rep", "1,\"attempt\":2,\"outcome\":\"ok\""),
                  "attempt 2 of a run whose attempt 1 at raw:1 did not fail (only the last attempt may succeed)"},
        Malformed{R"({"kind":"meta","gic":[3]})", "meta \"gic\" is not a string or number"},
        Malformed{R"({"kind":"pps","config":"host","mtu":1500,"payload":64,"dir":"g2h","rep":1,"received":1,)"
                  R"("lost":0,"seconds":1,"pps":1})",
                  "\"sent\" missing"},
        Malformed{R"({"kind":"pps","config":"host","mtu":1500,"payload":64,"dir":"g2h","rep":1,"sent":5,)"
                  R"("received":3,"lost":1,"seconds":1,"pps":3})",
                  "received + lost is not sent"},
        Malformed{R"({"kind":"fio","config":"host","rw":"trim","bs":4096,"depth":1,"rep":1,"bytes":1,"ios":1,)"
                  R"("seconds":1,"iops":1,"bw_bps":1})",
                  "\"rw\" is \"trim\", not read, write, randread or randwrite"},
        Malformed{R"({"kind":"fio","config":"host","rw":"read","bs":0,"depth":1,"rep":1,"bytes":1,"ios":1,)"
                  R"("seconds":1,"iops":1,"bw_bps":1})",
                  "\"bs\" is not a whole number from 1 to 4294967295"},
        Malformed{R"({"kind":"fio","config":"host","rw":"read","bs":4096,"rep":1,"bytes":1,"ios":1,)"
                  R"("seconds":1,"iops":1,"bw_bps":1})",
                  "\"depth\" missing"},
        Malformed{R"({"kind":"fio","config":"host","rw":"read","bs":4096,"depth":1,"rep":1,"bytes":1,"ios":1,)"
                  R"("seconds":1,"iops":1})",
                  "\"bw_bps\" missing"},
        Malformed{R"({"kind":"vsock","config":"host","dir":"g2h","rep":1,"bytes":1,"seconds":1})", "\"bps\" missing"},
        Malformed{R"({"kind":"vsock","config":"host","rep":1,"bytes":1,"seconds":1,"bps":8})", "\"dir\" missing"},
        // Its one parameter is the direction: an MTU is a misplaced member.
        Malformed{R"({"kind":"vsock","config":"host","mtu":1500,"dir":"g2h","rep":1,"bytes":1,"seconds":1,"bps":8})",
                  "unknown member \"mtu\""},
        Malformed{R"({"kind":"vsock","config":"host","dir":"g2h","rep":1,"bytes":1,"seconds":1,"bps":"8"})",
                  "\"bps\" is not a number from 0 to 2^53"}));

// bench/outside-counters.sh's deltas: numbers, or null where unreadable,
// which stays apart from 0; with the guest's interrupt count all seven or
// none.
TEST(NetReportParse, OutsideCountersKeepNullApartFromZero) {
  const std::string outside = R"(,"outside":{"kvm_exits":12,"kvm_mmio_exit_user":0,"kvm_mmio_exit_kernel":null,)"
                              R"("kvm_halt_wakeup":3,"vmm_ctxt_switches":null,"vmm_cpu_ms":250,"guest_irqs":7})";
  const RawData d = parse(iperf_with("bps", "8" + outside));
  ASSERT_EQ(d.runs.size(), 1u);
  ASSERT_TRUE(d.runs[0].outside);
  const auto& o = *d.runs[0].outside;
  EXPECT_EQ(o.size(), 7u);
  EXPECT_EQ(o.at("kvm_exits"), 12);
  EXPECT_EQ(o.at("kvm_mmio_exit_user"), 0);
  EXPECT_EQ(o.at("kvm_mmio_exit_kernel"), std::nullopt);
  EXPECT_EQ(o.at("kvm_halt_wakeup"), 3);
  EXPECT_EQ(o.at("vmm_ctxt_switches"), std::nullopt);
  EXPECT_EQ(o.at("vmm_cpu_ms"), 250);
  EXPECT_EQ(o.at("guest_irqs"), 7);
  EXPECT_FALSE(d.runs[0].counters);  // a peer VMM's run: outside counters only
  EXPECT_FALSE(parse(kIperf).runs[0].outside);
  // vmm_cpu_ms null and vmm_cpu_ms 0 stay apart too.
  const auto cpu = [](const std::string& v) {
    const std::string key = R"("vmm_cpu_ms":7)";
    std::string o = test::kOutside;
    o.replace(o.find(key), key.size(), R"("vmm_cpu_ms":)" + v);
    return parse(iperf_with("bps", "8" + o)).runs[0].outside->at("vmm_cpu_ms");
  };
  EXPECT_EQ(cpu("null"), std::nullopt);
  EXPECT_EQ(cpu("0"), 0);
}

// Raw files written before vmm_cpu_ms have six outside counters: still
// read, vmm_cpu_ms then null (unreadable), the others as given.
TEST(NetReportParse, OutsideCountersWithoutVmmCpuMsFromOlderFiles) {
  const RawData d = parse(iperf_with("bps", std::string("8") + test::kOutsideSix));
  ASSERT_TRUE(d.runs[0].outside);
  const auto& o = *d.runs[0].outside;
  EXPECT_EQ(o.size(), 7u);
  ASSERT_TRUE(o.count("vmm_cpu_ms"));
  EXPECT_EQ(o.at("vmm_cpu_ms"), std::nullopt);
  EXPECT_EQ(o.at("vmm_ctxt_switches"), 5);
  EXPECT_EQ(o.at("guest_irqs"), 6);
  EXPECT_EQ(parse(iperf_with("bps", std::string("8") + test::kOutside)).runs[0].outside->at("vmm_cpu_ms"), 7);
}

TEST(NetReportParse, OutsideCountersMissingOneOrMistypedAreRefused) {
  const std::string give = " (give all seven, null where unreadable; only vmm_cpu_ms, added later, may be left out)";
  EXPECT_EQ(parse_error(iperf_with("bps", R"(8,"outside":{"kvm_exits":1,"kvm_mmio_exit_user":2,)"
                                          R"("kvm_mmio_exit_kernel":3,"kvm_halt_wakeup":4,"vmm_cpu_ms":7,"guest_irqs":6})")),
            "raw:1: \"outside\" has no \"vmm_ctxt_switches\"" + give);
  // The six of bench/outside-counters.sh alone are not enough.
  EXPECT_EQ(parse_error(iperf_with("bps", R"(8,"outside":{"kvm_exits":1,"kvm_mmio_exit_user":2,)"
                                          R"("kvm_mmio_exit_kernel":3,"kvm_halt_wakeup":4,"vmm_ctxt_switches":5,)"
                                          R"("vmm_cpu_ms":7})")),
            "raw:1: \"outside\" has no \"guest_irqs\"" + give);
  EXPECT_EQ(parse_error(iperf_with("bps", R"(8,"outside":{"kvm_exits":-1,"kvm_mmio_exit_user":2,)"
                                          R"("kvm_mmio_exit_kernel":3,"kvm_halt_wakeup":4,"vmm_ctxt_switches":5,)"
                                          R"("guest_irqs":6})")),
            "raw:1: \"kvm_exits\" is not a number from 0 to 2^53");
  EXPECT_EQ(parse_error(iperf_with("bps", R"(8,"outside":{"kvm_exits":1,"kvm_mmio_exit_user":2,)"
                                          R"("kvm_mmio_exit_kernel":3,"kvm_halt_wakeup":4,"vmm_ctxt_switches":5,)"
                                          R"("vmm_cpu_ms":-1,"guest_irqs":6})")),
            "raw:1: \"vmm_cpu_ms\" is not a number from 0 to 2^53");
  EXPECT_EQ(parse_error(iperf_with("bps", R"(8,"outside":{})")), "raw:1: \"outside\" has no \"kvm_exits\"" + give);
  const std::string extra = std::string(test::kOutside).insert(std::string(test::kOutside).size() - 1, R"(,"irqs":1)");
  EXPECT_EQ(parse_error(iperf_with("bps", "8" + extra)), "raw:1: unknown member \"irqs\"");
  EXPECT_TRUE(parse(iperf_with("bps", std::string("8") + test::kOutside)).runs[0].outside);
  EXPECT_EQ(parse_error(iperf_with("bps", R"(8,"outside":[1])")), "raw:1: \"outside\" is not an object");
}

TEST(NetReportParse, CountersWithAnUnknownNameAreRefused) {
  const std::string counters = R"(,"counters":{"vcpu_exits":1,"wakeups":2,"injected":3,"relayed":4,"trapped":5,)"
                               R"("polled":6,"guest_irqs":7,"exits":1})";
  EXPECT_EQ(parse_error(iperf_with("bps", "8" + counters)), "raw:1: unknown member \"exits\"");
}

TEST(NetReportParse, ContradictingMetaNamesBothLines) {
  EXPECT_EQ(parse_error(R"({"kind":"meta","gic":"3"})" "\n\n" R"({"kind":"meta","gic":"2"})" "\n"),
            "raw:3: meta gic=2 contradicts gic=3 at raw:1");
}

// A raw file is one boot's runs: the same repeat of a cell in another file
// is another boot's run, and both count; a file given twice (the same
// records, whatever its blank lines) is refused, never pooled with itself.
TEST(NetReportParse, RunsOfTwoBootsPoolAndAFileGivenTwiceIsRefused) {
  RawData d;
  parse_runs(kIperf, "boot1.jsonl", ".", d);
  parse_runs(iperf_with("bps", "2e9"), "boot2.jsonl", ".", d);
  ASSERT_EQ(d.runs.size(), 2u);
  EXPECT_EQ(d.runs[0].rep, d.runs[1].rep);
  EXPECT_NE(run_identity(d.runs[0]), run_identity(d.runs[1]));
  try {
    parse_runs(std::string("\n") + kIperf + "\n", "again.jsonl", ".", d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "again.jsonl: the same records as boot1.jsonl: one file given twice? (each raw file is one "
                 "boot's runs, and runs of different files pool)");
  }
  // Within one file the same run twice is still refused.
  EXPECT_EQ(parse_error(std::string(kIperf) + "\n" + kIperf), "raw:2: iperf run already given at raw:1");
}

TEST(NetReportParse, EveryAttemptOfARetriedRunIsARecord) {
  const RawData d = parse(test::kSampleAttempts);
  ASSERT_EQ(d.runs.size(), 6u);
  EXPECT_EQ(d.runs[0].attempt, 1u);
  EXPECT_EQ(d.runs[0].failed, "iperf3_failed");
  EXPECT_EQ(d.runs[1].attempt, 2u);
  EXPECT_EQ(d.runs[1].failed, std::nullopt);
  EXPECT_EQ(d.runs[1].values.at("bps"), 10e9);
  EXPECT_EQ(d.runs[2].attempt, 1u);  // no "attempt": tried once
}

// One record per attempt: the same attempt twice is the same record given
// twice, in one file or across files.
TEST(NetReportParse, AnAttemptGivenTwiceIsRefused) {
  const std::string failed1 =
      R"({"kind":"pps","config":"host","mtu":1500,"payload":64,"dir":"g2h","rep":1,"attempt":1,"outcome":"failed","failed":"udp_pps_failed"})";
  EXPECT_EQ(parse_error(failed1 + "\n" + failed1 + "\n"), "raw:2: attempt 1 of this pps run already given at raw:1");
  RawData d;
  parse_runs(failed1, "a.jsonl", ".", d);
  try {
    parse_runs(failed1, "b.jsonl", ".", d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "b.jsonl: the same records as a.jsonl: one file given twice? (each raw file is one boot's "
                 "runs, and runs of different files pool)");
  }
}

// A run is tried again only after it failed, so only its highest attempt
// may be ok, whichever order the records come in.
TEST(NetReportParse, AnOkAttemptBelowTheHighestIsRefused) {
  const std::string ok1 = iperf_with("rep", "1,\"attempt\":1,\"outcome\":\"ok\"");
  const std::string failed2 = R"({"kind":"iperf","config":"host","mtu":1500,"dir":"g2h","streams":1,"rep":1,)"
                              R"("attempt":2,"outcome":"failed","failed":"iperf3_failed"})";
  const std::string ok3 = iperf_with("rep", "1,\"attempt\":3,\"outcome\":\"ok\"");
  EXPECT_EQ(parse_error(ok1 + "\n" + failed2 + "\n"),
            "raw:2: attempt 2 of a run whose attempt 1 at raw:1 did not fail (only the last attempt may succeed)");
  EXPECT_EQ(parse_error(failed2 + "\n" + ok1 + "\n"),
            "raw:2: attempt 1 did not fail, but the run has attempt 2 at raw:1 (only the last attempt may succeed)");
  EXPECT_EQ(parse_error(ok3 + "\n" + ok1 + "\n"),
            "raw:2: attempt 1 did not fail, but the run has attempt 3 at raw:1 (only the last attempt may succeed)");
  // Failed attempts below an ok one, in any order, are a retried run.
  EXPECT_EQ(parse_error(ok3 + "\n" + failed2 + "\n"), "no error");
}

TEST(NetReportParse, MicroFileIsReadRelativeToTheRawFile) {
  vmm::test::TempDir dir;
  std::ofstream(dir.file("micro.json")) << test::kMicroJson;
  const RawData d = parse(test::kSampleMicroLine, dir.file(""));
  ASSERT_EQ(d.micro.size(), 1u);
  const MicroResult& m = d.micro[0];
  EXPECT_EQ(m.platform, "host-x86_64");
  EXPECT_EQ(m.arch, "x86_64");
  EXPECT_EQ(m.stores, 2000);
  EXPECT_EQ(m.repeats, 3);
  ASSERT_EQ(m.us.size(), 6u);
  EXPECT_EQ(m.us[2].first, "mmio_exit");
  EXPECT_DOUBLE_EQ(m.us[2].second, 10);
  // An absolute path is taken as it is.
  EXPECT_EQ(parse(R"({"kind":"micro","platform":"p","file":")" + dir.file("micro.json") + "\"}", "/nonexistent")
                .micro.size(),
            1u);
}

TEST(NetReportParse, MicroFileErrorsNameTheRecordAndTheFile) {
  vmm::test::TempDir dir;
  const std::string base = dir.file("");
  const std::string path = dir.file("m.json");
  const std::string record = R"({"kind":"micro","platform":"p","file":"m.json"})" "\n";
  auto micro_error = [&](const std::string& json) {
    std::ofstream(path) << json;
    return parse_error(record, base);
  };
  EXPECT_EQ(parse_error(R"({"kind":"micro","platform":"p","file":"none.json"})", base),
            "raw:1: cannot read " + dir.file("none.json"));
  EXPECT_EQ(micro_error(R"({"arch":"x86_64","us":{"ioeventfd":"fast"}})"),
            "raw:1: " + path + ": \"us\".\"ioeventfd\" is not a number");
  EXPECT_EQ(micro_error(R"({"us":{"ioeventfd":1}})"), "raw:1: " + path + ": no \"arch\" member");
  EXPECT_EQ(micro_error(R"({"arch":"x86_64"})"), "raw:1: " + path + ": no \"us\" member");
  EXPECT_EQ(micro_error(R"({"arch":"x86_64","stores":[1],"us":{"a":1}})"),
            "raw:1: " + path + ": \"stores\" is not a number");
  const std::string truncated = micro_error(R"({"arch":"x86_64","us":{"a":1})");
  EXPECT_EQ(truncated.rfind("raw:1: " + path + ": not JSON: ", 0), 0u) << truncated;
  EXPECT_NE(truncated.find("line 1, column 30"), std::string::npos) << truncated;
  EXPECT_EQ(micro_error("[1]"), "raw:1: " + path + ": expected a JSON object");

  std::ofstream(path) << test::kMicroJson;
  EXPECT_EQ(parse_error(record + record, base), "raw:2: micro platform p already given at raw:1");
}

TEST(NetReportParse, UnreadableRawFileIsAnInputError) {
  RawData d;
  try {
    read_runs_file("/nonexistent/raw.jsonl", d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/raw.jsonl: cannot read the raw file");
  }
}

}  // namespace
}  // namespace kvmmio::report
