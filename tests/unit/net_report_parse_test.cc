// SPDX-License-Identifier: BSD-2-Clause
// net_report's raw-file parser: valid records of each kind, and each kind of
// malformed input refused with its file and line.
#include <gtest/gtest.h>

#include "tests/unit/net_report_test_data.h"
#include "tests/vmm/test_files.h"

namespace kvmmio::report {
namespace {

using test::parse;
using test::parse_error;

TEST(NetReportParse, IperfRunWithCounters) {
  const RawData d = parse(
      "iperf config=vhost-irqfd mtu=9000 dir=h2g streams=4 rep=2 bytes=123 seconds=5.5 bps=1.5e9 "
      "vcpu_exits=1 wakeups=2 injected=3 relayed=4 trapped=5 polled=6 guest_irqs=7\n");
  ASSERT_EQ(d.iperf.size(), 1u);
  const IperfRun& r = d.iperf[0];
  EXPECT_EQ(r.config, "vhost-irqfd");
  EXPECT_EQ(r.mtu, 9000u);
  EXPECT_EQ(r.dir, Direction::kHostToGuest);
  EXPECT_EQ(r.streams, 4u);
  EXPECT_EQ(r.rep, 2u);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.bytes, 123u);
  EXPECT_DOUBLE_EQ(r.seconds, 5.5);
  EXPECT_DOUBLE_EQ(r.bps, 1.5e9);
  ASSERT_TRUE(r.counters);
  EXPECT_EQ(r.counters->vcpu_exits, 1u);
  EXPECT_EQ(r.counters->wakeups, 2u);
  EXPECT_EQ(r.counters->injected, 3u);
  EXPECT_EQ(r.counters->relayed, 4u);
  EXPECT_EQ(r.counters->trapped, 5u);
  EXPECT_EQ(r.counters->polled, 6u);
  EXPECT_EQ(r.counters->guest_irqs, 7u);
  EXPECT_EQ(r.source.str(), "raw:1");
}

TEST(NetReportParse, HostRunHasNoCountersAndUnknownConfigsAreAccepted) {
  const RawData d = parse(
      "iperf config=host mtu=1500 dir=g2h streams=1 rep=1 bytes=1 seconds=1 bps=8\n"
      "iperf config=my-new-mode mtu=1500 dir=g2h streams=1 rep=1 bytes=1 seconds=1 bps=8\n");
  ASSERT_EQ(d.iperf.size(), 2u);
  EXPECT_FALSE(d.iperf[0].counters);
  EXPECT_EQ(d.iperf[1].config, "my-new-mode");
}

TEST(NetReportParse, FailedRunsNeedNoMeasurements) {
  const RawData d = parse(
      "iperf config=user-trap mtu=1500 dir=g2h streams=1 rep=1 failed=no_route\n"
      "rr config=host mtu=1500 rep=1 failed=timeout tps=3\n");
  ASSERT_EQ(d.iperf.size(), 1u);
  EXPECT_EQ(d.iperf[0].failed, "no_route");
  ASSERT_EQ(d.rr.size(), 1u);
  EXPECT_EQ(d.rr[0].failed, "timeout");
}

TEST(NetReportParse, RrRun) {
  const RawData d = parse("rr config=host mtu=9000 rep=3 transactions=1000 seconds=5 tps=200 p50_us=40.5 "
                          "p90_us=50 p99_us=99.25\n");
  ASSERT_EQ(d.rr.size(), 1u);
  EXPECT_EQ(d.rr[0].mtu, 9000u);
  EXPECT_EQ(d.rr[0].transactions, 1000u);
  EXPECT_DOUBLE_EQ(d.rr[0].tps, 200);
  EXPECT_DOUBLE_EQ(d.rr[0].p50_us, 40.5);
  EXPECT_DOUBLE_EQ(d.rr[0].p90_us, 50);
  EXPECT_DOUBLE_EQ(d.rr[0].p99_us, 99.25);
}

TEST(NetReportParse, MetaKeysAreCopiedAndMayRepeatWithTheSameValue) {
  const RawData d = parse("meta gic=3 seconds=5\nmeta machine=\"ampere_altra\" gic=3\n");
  ASSERT_EQ(d.meta.size(), 3u);
  EXPECT_EQ(d.meta[0].key, "gic");
  EXPECT_EQ(d.meta[0].value, "3");
  EXPECT_EQ(d.meta[2].key, "machine");
  EXPECT_EQ(d.meta[2].value, "\"ampere_altra\"");
}

TEST(NetReportParse, CommentsAndBlankLinesAreSkippedButCounted) {
  const std::string raw = "# a comment\n\n   \n  # indented comment\nbogus x=1\n";
  EXPECT_EQ(parse_error(raw), "raw:5: unknown record kind 'bogus' (expected meta, iperf, rr or micro)");
  EXPECT_EQ(parse(raw.substr(0, raw.find("bogus"))).iperf.size(), 0u);
}

// Each malformed case, as the second line so the line number is checked.
struct Malformed {
  const char* line;
  const char* message;
};

class NetReportParseMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(NetReportParseMalformed, NamesTheLine) {
  const std::string first = "iperf config=host mtu=1500 dir=g2h streams=1 rep=1 bytes=1 seconds=1 bps=8\n";
  EXPECT_EQ(parse_error(first + GetParam().line + "\n"), std::string("raw:2: ") + GetParam().message);
}

constexpr const char* kCounters = " vcpu_exits=1 wakeups=2 injected=3 relayed=4 trapped=5 polled=6 guest_irqs=7";

INSTANTIATE_TEST_SUITE_P(
    NetReportParse, NetReportParseMalformed,
    ::testing::Values(
        Malformed{"iperfs config=host", "unknown record kind 'iperfs' (expected meta, iperf, rr or micro)"},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams=1 rep=2 seconds=1 bps=8",
                  "iperf record without bytes="},
        Malformed{"iperf mtu=1500 dir=g2h streams=1 rep=2 bytes=1 seconds=1 bps=8", "iperf record without config="},
        Malformed{"rr config=host mtu=1500 rep=1 transactions=1 seconds=1 tps=1 p50_us=1 p90_us=1",
                  "rr record without p99_us="},
        Malformed{"micro file=x.json", "micro record without platform="},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams=1 rep=2 bytes=1 seconds=1 bps=fast",
                  "bps=fast is not a non-negative number"},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams=1 rep=2 bytes=1 seconds=1 bps=inf",
                  "bps=inf is not a non-negative number"},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams=1 rep=2 bytes=1 seconds=-1 bps=8",
                  "seconds=-1 is not a non-negative number"},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams=1 rep=2 bytes=1.5 seconds=1 bps=8",
                  "bytes=1.5 is not a non-negative integer"},
        Malformed{"iperf config=host mtu=99999999999 dir=g2h streams=1 rep=2 bytes=1 seconds=1 bps=8",
                  "mtu=99999999999 is too large"},
        Malformed{"iperf config=host mtu=1500 dir=both streams=1 rep=2 bytes=1 seconds=1 bps=8",
                  "dir=both is neither g2h nor h2g"},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams 1 rep=2", "expected key=value, got 'streams'"},
        Malformed{"iperf config=host config=vhost", "config given twice"},
        Malformed{"iperf config= mtu=1500", "empty value for config"},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams=1 rep=2 bytes=1 seconds=1 bps=8 wakeup=3",
                  "unknown key wakeup= in this iperf record"},
        Malformed{"iperf config=vm mtu=1500 dir=g2h streams=1 rep=2 bytes=1 seconds=1 bps=8 vcpu_exits=1",
                  "counter wakeups= missing (give all seven counters or none)"},
        Malformed{"iperf config=host mtu=1500 dir=g2h streams=1 rep=1 bytes=1 seconds=1 bps=8",
                  "iperf run config=host mtu=1500 dir=g2h streams=1 rep=1 already given at raw:1"},
        Malformed{"meta gic=3 =2", "empty key in '=2'"}));

TEST(NetReportParse, CountersParseWhenAllSevenAreGiven) {
  const RawData d =
      parse(std::string("iperf config=vm mtu=1500 dir=g2h streams=1 rep=2 bytes=1 seconds=1 bps=8") + kCounters);
  ASSERT_TRUE(d.iperf[0].counters);
}

TEST(NetReportParse, ContradictingMetaNamesBothLines) {
  EXPECT_EQ(parse_error("meta gic=3\n\nmeta gic=2\n"), "raw:3: meta gic=2 contradicts gic=3 at raw:1");
}

TEST(NetReportParse, DuplicateRrRunIsRefused) {
  const char* rr = "rr config=host mtu=1500 rep=1 transactions=1 seconds=1 tps=1 p50_us=1 p90_us=1 p99_us=1\n";
  EXPECT_EQ(parse_error(std::string(rr) + rr), "raw:2: rr run config=host mtu=1500 rep=1 already given at raw:1");
}

TEST(NetReportParse, RunsGivenTwiceAcrossFilesAreRefused) {
  RawData d;
  const char* line = "iperf config=host mtu=1500 dir=g2h streams=1 rep=1 bytes=1 seconds=1 bps=8\n";
  parse_raw(line, "a.raw", ".", d);
  try {
    parse_raw(std::string("\n") + line, "b.raw", ".", d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "b.raw:2: iperf run config=host mtu=1500 dir=g2h streams=1 rep=1 already given at a.raw:1");
  }
}

TEST(NetReportParse, MicroFileIsReadRelativeToTheRawFile) {
  vmm::test::TempDir dir;
  std::ofstream(dir.file("micro.json")) << test::kMicroJson;
  const RawData d = parse("micro platform=host-x86_64 file=micro.json\n", dir.file(""));
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
  EXPECT_EQ(parse("micro platform=p file=" + dir.file("micro.json") + "\n", "/nonexistent").micro.size(), 1u);
}

TEST(NetReportParse, MicroFileErrorsNameTheRecordAndTheFile) {
  vmm::test::TempDir dir;
  const std::string base = dir.file("");
  const std::string path = dir.file("m.json");
  auto micro_error = [&](const std::string& json) {
    std::ofstream(path) << json;
    return parse_error("micro platform=p file=m.json\n", base);
  };
  EXPECT_EQ(parse_error("micro platform=p file=none.json\n", base), "raw:1: cannot read " + dir.file("none.json"));
  EXPECT_EQ(micro_error(R"({"arch":"x86_64","us":{"ioeventfd":"fast"}})"),
            "raw:1: " + path + ": \"us\".\"ioeventfd\" is not a number");
  EXPECT_EQ(micro_error(R"({"us":{"ioeventfd":1}})"), "raw:1: " + path + ": no \"arch\" member");
  EXPECT_EQ(micro_error(R"({"arch":"x86_64"})"), "raw:1: " + path + ": no \"us\" member");
  EXPECT_EQ(micro_error(R"({"arch":"x86_64","stores":[1],"us":{"a":1}})"),
            "raw:1: " + path + ": \"stores\" is not a number");
  const std::string truncated = micro_error(R"({"arch":"x86_64","us":{"a":1})");
  EXPECT_EQ(truncated.rfind("raw:1: " + path + ": not JSON: ", 0), 0u) << truncated;
  EXPECT_NE(truncated.find("line 1, column 30"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("expected '}'"), std::string::npos) << truncated;
  EXPECT_EQ(micro_error("[1]"), "raw:1: " + path + ": expected a JSON object");

  std::ofstream(path) << test::kMicroJson;
  EXPECT_EQ(parse_error("micro platform=p file=m.json\nmicro platform=p file=m.json\n", base),
            "raw:2: micro platform=p already given at raw:1");
}

TEST(NetReportParse, UnreadableRawFileIsAnInputError) {
  RawData d;
  EXPECT_THROW(read_raw_file("/nonexistent/raw.txt", d), InputError);
}

}  // namespace
}  // namespace kvmmio::report
