// SPDX-License-Identifier: BSD-2-Clause
// The main job's verdict (bench/report/check.h, net_check): the modes'
// counter rule, reading raw.jsonl as it stands, and check_run on planted
// records: a complete matrix passes at both levels; a cell without a run
// that succeeded, a guest that never booted, a missing micro record, an
// unreadable outside counter, a run beside another VM and each mode's
// counters that do not fit turn it red with the line the shell check
// printed. tests/bench/net-compare-check.test runs the same through
// net-compare.sh --check.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/report/check.h"
#include "bench/report/check_records.h"
#include "bench/report/input_error.h"
#include "bench/report/net_modes.h"

namespace kvmmio::report {
namespace {

using Json = nlohmann::ordered_json;

// --- the modes' rule ----------------------------------------------------------------

ModeCounters counters(const char* t, const char* p, const char* i, const char* r, const char* g) {
  return {ModeCounter::parse(t), ModeCounter::parse(p), ModeCounter::parse(i), ModeCounter::parse(r),
          ModeCounter::parse(g)};
}

TEST(NetModeMisfit, EachModeFitsWhoCarriesItsTraffic) {
  for (const char* mode : {"vhost-irqfd", "vhost-irqfd-mirror", "vhost-irqfd-mirror-poll", "vhost-irqfd-v1"})
    EXPECT_EQ(net_mode_misfit(mode, counters("0", "0", "0", "0", "300")), "") << mode;
  EXPECT_EQ(net_mode_misfit("vhost-relay", counters("0", "0", "0", "250", "300")), "");
  EXPECT_EQ(net_mode_misfit("user-ioeventfd", counters("0", "40", "300", "0", "300")), "");
  EXPECT_EQ(net_mode_misfit("user-trap", counters("40", "0", "300", "0", "300")), "");
}

TEST(NetModeMisfit, SaysWhyCountersDoNotFit) {
  EXPECT_EQ(net_mode_misfit("vhost-irqfd-mirror", counters("0", "3", "0", "0", "300")),
            "vhost-irqfd-mirror: counters do not fit the mode: trapped 0 polled 3 injected 0 relayed 0 guest irqs 300");
  // The bypass needs the guest's interrupts too: silence is no bypass.
  EXPECT_NE(net_mode_misfit("vhost-irqfd", counters("0", "0", "0", "0", "0")), "");
  EXPECT_NE(net_mode_misfit("vhost-relay", counters("0", "0", "0", "0", "300")), "");
  EXPECT_NE(net_mode_misfit("user-ioeventfd", counters("2", "40", "300", "0", "300")), "");
  EXPECT_NE(net_mode_misfit("user-trap", counters("40", "1", "300", "0", "300")), "");
  // A delta that went down fits no rule that wants it above 0.
  EXPECT_NE(net_mode_misfit("user-trap", counters("-4", "0", "300", "0", "300")), "");
}

TEST(NetModeMisfit, AnUnreadableCounterFitsNoRuleThatReadsIt) {
  EXPECT_EQ(net_mode_misfit("vhost-irqfd", counters("0", "0", "", "0", "300")),
            "vhost-irqfd: counters do not fit the mode: trapped 0 polled 0 injected  relayed 0 guest irqs 300");
  EXPECT_NE(net_mode_misfit("vhost-irqfd", counters("0", "0", "0", "0", "x")), "");
  // user-ioeventfd's rule does not read the relayed count.
  EXPECT_EQ(net_mode_misfit("user-ioeventfd", counters("0", "40", "300", "?", "300")), "");
}

TEST(NetModeMisfit, ModesWithoutARuleFit) {
  for (const char* mode : {"host", "qemu-pci", "vhost-mq", "user-mq", "blk-io_uring-mirror"})
    EXPECT_EQ(net_mode_misfit(mode, counters("1", "1", "1", "1", "0")), "") << mode;
}

TEST(ModeCounter, TakesWholeNumbersOnly) {
  EXPECT_EQ(ModeCounter::parse("12").value, 12);
  EXPECT_EQ(ModeCounter::parse("-3").value, -3);
  for (const char* word : {"", "x", "1x", "+1", "--1", "-", "1.5", " 1"})
    EXPECT_FALSE(ModeCounter::parse(word).value) << word;
  EXPECT_EQ(ModeCounter::parse("1x").text, "1x");
  EXPECT_EQ(ModeCounter::of(7000).text, "7000");
}

TEST(FormatNumber, WholeNumbersAsJqPrintsThem) {
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(123456789012), "123456789012");
  EXPECT_EQ(format_number(-5), "-5");
  EXPECT_EQ(format_number(2.5), "2.5");
}

// --- reading raw.jsonl for the verdict ----------------------------------------------

TEST(ParseCheckRecords, KeepsWhatTheVerdictReads) {
  const CheckRecords r = parse_check_records(
      R"({"kind":"meta","arch":"aarch64"})" "\n\n"
      R"({"kind":"micro","platform":"arm64","file":"gone.json"})" "\n"
      R"({"kind":"iperf","config":"vhost-irqfd-mirror","mtu":1500,"dir":"g2h","streams":1,"rep":1,"bytes":9,)"
      R"("seconds":2,"bps":5,"counters":{"trapped":0,"polled":null},)"
      R"("outside":{"kvm_exits":4,"guest_irqs":null,"other_vm_exits":7000}})" "\n"
      R"({"kind":"iperf","config":"vhost-irqfd-mirror","failed":"guest_did_not_boot"})" "\n"
      R"({"kind":"later","config":"x","rep":2})" "\n",
      "raw.jsonl");
  EXPECT_TRUE(r.micro);  // its file is the report's business, not the verdict's
  ASSERT_EQ(r.runs.size(), 3u);
  const kvmmio::report::Run& a = r.runs[0];  // not the fixture's Run()
  EXPECT_EQ(a.params.mtu, 1500u);
  EXPECT_EQ(a.params.dir, "g2h");
  EXPECT_EQ(a.rep, 1u);
  EXPECT_EQ(a.values.at("bytes"), 9);
  ASSERT_TRUE(a.counters);
  EXPECT_EQ(a.counters->count("polled"), 0u);  // null: not read, as absent
  ASSERT_TRUE(a.outside);
  EXPECT_EQ(a.outside->at("kvm_exits"), 4);
  EXPECT_FALSE(a.outside->at("guest_irqs"));
  EXPECT_EQ(a.outside->at(kOtherVmExits), 7000);
  EXPECT_EQ(a.source.line, 4);
  EXPECT_EQ(r.runs[1].rep, 0u);  // a whole config's failure has no repeat
  EXPECT_EQ(r.runs[1].failed, "guest_did_not_boot");
  EXPECT_EQ(r.runs[2].kind, "later");  // an unknown kind is kept, and no cell's
}

TEST(ParseCheckRecords, RefusesWhatItCannotRead) {
  const auto error = [](const std::string& text) {
    try {
      parse_check_records(text, "raw.jsonl");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{\"kind\":\"meta\"}\nnot json\n"), "raw.jsonl:2: not JSON");
  EXPECT_EQ(error("[1]\n"), "raw.jsonl:1: not a JSON object");
  EXPECT_EQ(error(R"({"config":"host"})"), "raw.jsonl:1: \"kind\" missing");
  EXPECT_EQ(error(R"({"kind":"iperf","rep":1})"), "raw.jsonl:1: \"config\" missing");
  EXPECT_EQ(error(R"({"kind":"iperf","config":"host","mtu":"1500"})"),
            "raw.jsonl:1: \"mtu\" is not a whole number from 0 to 4294967295");
  EXPECT_EQ(error(R"({"kind":"iperf","config":"host","rep":0})"),
            "raw.jsonl:1: \"rep\" is not a whole number from 1 to 4294967295");
  EXPECT_EQ(error(R"({"kind":"iperf","config":"host","failed":3})"), "raw.jsonl:1: \"failed\" is not a string");
  EXPECT_EQ(error(R"({"kind":"pps","config":"host","received":"9"})"),
            "raw.jsonl:1: \"received\" is not a number or null");
  EXPECT_EQ(error(R"({"kind":"iperf","config":"x","outside":{"kvm_exits":"1"}})"),
            "raw.jsonl:1: \"outside\".kvm_exits is not a number or null");
  EXPECT_EQ(error(R"({"kind":"iperf","config":"x","counters":[]})"), "raw.jsonl:1: \"counters\" is not an object");
}

// --- the verdict on planted records ------------------------------------------------

// The matrix of tests/bench/net-compare-check.test: scripts/test.sh's main
// job, smaller.
CheckMatrix small_matrix() {
  CheckMatrix m;
  m.configs = {"host", "vhost-irqfd-mirror", "qemu-pci"};
  m.mtus = {1500};
  m.dirs = {"g2h", "h2g"};
  m.streams = {1};
  m.payloads = {64, 1472};
  m.fio_configs = {"host", "blk-io_uring-mirror"};
  m.fio_depths = {32};
  m.fio_jobs = {{"read", 1048576}, {"write", 1048576}, {"randread", 4096}, {"randwrite", 4096}};
  m.vsock_configs = {"host", "vsock-mirror"};
  m.micro = true;
  return m;
}

// Counters as a good run reads them: the mirror's outside, no exit to
// userspace and no switch; the peer's some of both; kvmmio's own.
Json mirror_outside() {
  return {{"kvm_exits", 500},       {"kvm_mmio_exit_user", 0}, {"kvm_mmio_exit_kernel", nullptr}, {"kvm_halt_wakeup", 40},
          {"vmm_ctxt_switches", 0}, {"vmm_cpu_ms", 10},        {"guest_irqs", 300}};
}
Json quiet_counters(int guest_irqs) {
  return {{"vcpu_exits", 0}, {"wakeups", 0}, {"injected", 0},          {"relayed", 0},
          {"trapped", 0},    {"polled", 0},  {"guest_irqs", guest_irqs}};
}

// What a run of `config` carries beyond its results.
void add_counters(Json& r, const std::string& config) {
  if (config == "vhost-irqfd-mirror" || config.starts_with("g2g-")) {
    r["counters"] = quiet_counters(300);
    r["counters"]["vcpu_exits"] = 2;
    r["outside"] = mirror_outside();
  } else if (config.starts_with("qemu-")) {
    r["outside"] = {{"kvm_exits", 900},        {"kvm_mmio_exit_user", 5}, {"kvm_mmio_exit_kernel", nullptr},
                    {"kvm_halt_wakeup", 60},   {"vmm_ctxt_switches", 30}, {"vmm_cpu_ms", 20},
                    {"guest_irqs", 310}};
  } else if (config.starts_with("blk-")) {
    r["counters"] = quiet_counters(200);
    r["outside"] = {{"kvm_exits", 100},          {"kvm_mmio_exit_user", 0}, {"kvm_mmio_exit_kernel", nullptr},
                    {"kvm_halt_wakeup", 40},     {"vmm_ctxt_switches", nullptr}, {"vmm_cpu_ms", 150},
                    {"guest_irqs", 200}};
  } else if (config.starts_with("vsock-")) {
    r["counters"] = quiet_counters(150);
    r["outside"] = mirror_outside();
  }
}

// A complete raw.jsonl of `m` (network cells for its configs and g2g
// modes, disk and vsock cells), one repeat each, every run succeeded.
std::vector<Json> good_records(const CheckMatrix& m) {
  std::vector<Json> out = {{{"kind", "meta"}, {"arch", "aarch64"}}, {{"kind", "micro"}, {"platform", "arm64"}}};
  const auto add = [&out](Json r, const std::string& config) {
    add_counters(r, config);
    out.push_back(std::move(r));
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> nets;
  for (const std::string& c : m.configs) nets.push_back({c, m.dirs});
  for (const std::string& g : m.g2g_modes) nets.push_back({"g2g-" + g, {"a2b", "b2a"}});
  for (const auto& [c, dirs] : nets) {
    for (const std::string& d : dirs)
      for (unsigned s : m.streams)
        add({{"kind", "iperf"}, {"config", c}, {"mtu", 1500}, {"dir", d}, {"streams", s}, {"rep", 1},
             {"bytes", 1000000}, {"seconds", 2}, {"bps", 4000000}},
            c);
    add({{"kind", "rr"}, {"config", c}, {"mtu", 1500}, {"rep", 1}, {"transactions", 100}, {"seconds", 3},
         {"tps", 33}, {"p50_us", 30}, {"p90_us", 40}, {"p99_us", 50}},
        c);
    for (unsigned p : m.payloads)
      for (const std::string& d : dirs)
        add({{"kind", "pps"}, {"config", c}, {"mtu", 1500}, {"payload", p}, {"dir", d}, {"rep", 1}, {"sent", 100},
             {"received", 90}, {"lost", 10}, {"seconds", 2}, {"pps", 45}},
            c);
  }
  for (const std::string& c : m.fio_configs)
    for (const CheckMatrix::FioJob& j : m.fio_jobs)
      for (unsigned q : m.fio_depths)
        add({{"kind", "fio"}, {"config", c}, {"rw", j.rw}, {"bs", j.bs}, {"depth", q}, {"rep", 1},
             {"bytes", 4096000}, {"ios", 1000}, {"seconds", 1}, {"iops", 1000}, {"bw_bps", 4096000}},
            c);
  for (const std::string& c : m.vsock_configs)
    for (const std::string& d : m.dirs)
      add({{"kind", "vsock"}, {"config", c}, {"dir", d}, {"rep", 1}, {"bytes", 1000000}, {"seconds", 2},
           {"bps", 4000000}},
          c);
  return out;
}

// `records` through `plant` (which may clear a record to drop it), then
// the verdict of `level` on them.
CheckOutcome verdict(const CheckMatrix& m, std::vector<Json> records, CheckLevel level,
                     const std::function<void(Json&)>& plant = [](Json&) {}) {
  std::string text;
  for (Json& r : records) {
    plant(r);
    if (!r.is_null()) text += r.dump() + "\n";
  }
  return check_run(parse_check_records(text, "out/raw.jsonl"), m, level, "out");
}

bool is(const Json& r, const char* kind, const char* config, const char* dir = nullptr) {
  return r.value("kind", "") == kind && r.value("config", "") == config && (!dir || r.value("dir", "") == dir);
}

bool has(const CheckOutcome& v, const std::string& line) {
  return std::find(v.shortfalls.begin(), v.shortfalls.end(), line) != v.shortfalls.end();
}

TEST(CheckRun, ACompleteRunPassesBothLevels) {
  const CheckMatrix m = small_matrix();
  EXPECT_EQ(verdict(m, good_records(m), CheckLevel::kCells).shortfalls, std::vector<std::string>{});
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kModes);
  EXPECT_EQ(v.shortfalls, std::vector<std::string>{});
  EXPECT_TRUE(std::find(v.info.begin(), v.info.end(),
                        "vhost-irqfd-mirror: trapped 0 polled 0 injected 0 relayed 0 guest irqs 600") != v.info.end());
  EXPECT_TRUE(std::find(v.info.begin(), v.info.end(),
                        "blk-io_uring-mirror: fio requests 4000, vCPU exits 0, trapped 0, polled 0, guest irqs 800") !=
              v.info.end());
}

TEST(CheckRun, NamesACellWhoseAttemptsAllFailed) {
  const CheckMatrix m = small_matrix();
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kCells, [](Json& r) {
    if (!is(r, "iperf", "vhost-irqfd-mirror", "g2h")) return;
    Json first = {{"kind", "iperf"}, {"config", "vhost-irqfd-mirror"}, {"mtu", 1500}, {"dir", "g2h"},
                  {"streams", 1},    {"rep", 1},  {"attempt", 1}, {"outcome", "failed"}, {"failed", "x_failed"}};
    r = first;
  });
  EXPECT_EQ(v.shortfalls, std::vector<std::string>{
                              "no successful run: iperf3 vhost-irqfd-mirror g2h 1x MTU 1500 (1 attempt failed: x_failed)"});
  // Two attempts, with two reasons: both counted, each reason once, sorted.
  std::vector<Json> records = good_records(m);
  for (const char* why : {"y_failed", "x_failed", "y_failed"})
    records.push_back({{"kind", "rr"}, {"config", "qemu-pci"}, {"rep", 2}, {"failed", why}});
  const CheckOutcome w = verdict(m, records, CheckLevel::kCells, [](Json& r) {
    if (is(r, "rr", "qemu-pci") && !r.contains("failed")) r = nullptr;
  });
  EXPECT_EQ(w.shortfalls,
            std::vector<std::string>{"no successful run: tcp_rr qemu-pci MTU 1500 (3 attempts failed: x_failed, y_failed)"});
}

TEST(CheckRun, ARetryThatSucceededPasses) {
  const CheckMatrix m = small_matrix();
  std::vector<Json> records = good_records(m);
  records.push_back({{"kind", "iperf"}, {"config", "vhost-irqfd-mirror"}, {"mtu", 1500}, {"dir", "g2h"},
                     {"streams", 1}, {"rep", 1}, {"attempt", 1}, {"outcome", "failed"}, {"failed", "iperf3_failed"}});
  EXPECT_EQ(verdict(m, records, CheckLevel::kModes).shortfalls, std::vector<std::string>{});
}

TEST(CheckRun, AGuestThatNeverBootedFailsEveryCellOfItsConfig) {
  const CheckMatrix m = small_matrix();
  std::vector<Json> records = good_records(m);
  // One record per boot: with --order rounds, once per round.
  for (int round = 0; round < 2; ++round)
    records.push_back({{"kind", "iperf"}, {"config", "vhost-irqfd-mirror"}, {"failed", "guest_did_not_boot"}});
  const CheckOutcome v = verdict(m, records, CheckLevel::kCells, [](Json& r) {
    if (r.value("config", "") == "vhost-irqfd-mirror" && !r.contains("failed")) r = nullptr;
  });
  EXPECT_EQ(v.shortfalls.size(), 7u);  // 2 iperf3, tcp_rr, 4 udp_pps
  EXPECT_TRUE(has(v, "no successful run: udp_pps vhost-irqfd-mirror h2g 1472-byte payloads MTU 1500 "
                     "(2 attempts failed: guest_did_not_boot)"));
}

TEST(CheckRun, NamesARunNeverRecordedAndAMissingMicroRecord) {
  const CheckMatrix m = small_matrix();
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kCells, [](Json& r) {
    if (r.value("kind", "") == "micro" || (is(r, "fio", "blk-io_uring-mirror") && r["rw"] == "randwrite") ||
        is(r, "vsock", "vsock-mirror", "g2h"))
      r = nullptr;
  });
  EXPECT_EQ(v.shortfalls,
            (std::vector<std::string>{
                "no successful run: fio blk-io_uring-mirror randwrite 4096 B depth 32 (no record of it: the driver "
                "stopped before it; see its output and the guests' consoles)",
                "no successful run: vsock_stream vsock-mirror g2h (no record of it: the driver stopped before it; see "
                "its output and the guests' consoles)",
                "no micro record: kvm_notify_bench failed (see out/kvm-bench.txt)"}));
}

TEST(CheckRun, GuestToGuestCellsAreBothWaysAtTheFirstMtu) {
  CheckMatrix m = small_matrix();
  m.g2g_modes = {"vhost-irqfd-mirror"};
  m.mtus = {1500, 9000};
  // good_records measures at 1500 only: each guest-host config lacks its
  // iperf3 cells at 9000 (both ways), guest to guest lacks none.
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kModes);
  for (const std::string& line : v.shortfalls) EXPECT_NE(line.find("x MTU 9000 (no record"), std::string::npos) << line;
  EXPECT_EQ(v.shortfalls.size(), 6u);
}

TEST(CheckRun, NullIsNeverTakenForZero) {
  const CheckMatrix m = small_matrix();
  const std::string kvm = "KVM's debugfs: mount debugfs on /sys/kernel/debug, on a kernel with KVM's stats";
  const auto null_exits = [](Json& r) {
    if (is(r, "iperf", "vhost-irqfd-mirror", "g2h")) r["outside"]["kvm_mmio_exit_user"] = nullptr;
  };
  EXPECT_EQ(verdict(m, good_records(m), CheckLevel::kCells, null_exits).shortfalls,
            std::vector<std::string>{"kvm_mmio_exit_user is unreadable (null) for vhost-irqfd-mirror in 1 of 2 iperf "
                                     "runs: the report has no figure for it (" + kvm + ")"});
  EXPECT_TRUE(has(verdict(m, good_records(m), CheckLevel::kModes, null_exits),
                  "kvm_mmio_exit_user is unreadable (null) for vhost-irqfd-mirror in 1 of 2 iperf3 runs: cannot show 0 "
                  "exits to userspace (" + kvm + ")"));
  // A disk cell's switches may be null; its CPU time may not.
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kCells, [](Json& r) {
    if (is(r, "fio", "blk-io_uring-mirror") && r["rw"] == "read") r["outside"]["vmm_cpu_ms"] = nullptr;
  });
  EXPECT_EQ(v.shortfalls,
            std::vector<std::string>{"vmm_cpu_ms is unreadable (null) for blk-io_uring-mirror in 1 of 4 fio runs: the "
                                     "report has no figure for it (read from /proc/PID: the VMM's process, or a thread "
                                     "of it, went away during the run)"});
  const CheckOutcome w = verdict(m, good_records(m), CheckLevel::kCells, [](Json& r) {
    if (is(r, "iperf", "vhost-irqfd-mirror", "g2h")) r.erase("outside");
  });
  EXPECT_EQ(w.shortfalls, std::vector<std::string>{"vhost-irqfd-mirror iperf: 1 of 2 runs have no outside counters "
                                                   "(bench/outside-counters.sh beside net-compare.sh)"});
}

TEST(CheckRun, ARunBesideAnotherVmIsNotMeasured) {
  const CheckMatrix m = small_matrix();
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kCells, [](Json& r) {
    if (is(r, "iperf", "vhost-irqfd-mirror", "g2h")) r["outside"]["other_vm_exits"] = 7000;
    if (is(r, "fio", "blk-io_uring-mirror") && r["rw"] == "read") r["outside"]["other_vm_exits"] = 12;
  });
  EXPECT_EQ(v.shortfalls,
            (std::vector<std::string>{
                "another VM ran during iperf vhost-irqfd-mirror g2h 1 rep 1 (7000 exits of other VMs): its timings "
                "shared the host; run again with no other VM running",
                "another VM ran during fio blk-io_uring-mirror read 1048576 rep 1 (12 exits of other VMs): its timings "
                "shared the host; run again with no other VM running"}));
}

TEST(CheckRun, TheMirrorsClaimFromOutside) {
  const CheckMatrix m = small_matrix();
  const auto exits = [](Json& r) {
    if (is(r, "iperf", "vhost-irqfd-mirror", "g2h")) r["outside"]["kvm_mmio_exit_user"] = 7;
  };
  EXPECT_EQ(verdict(m, good_records(m), CheckLevel::kCells, exits).shortfalls, std::vector<std::string>{});
  EXPECT_EQ(verdict(m, good_records(m), CheckLevel::kModes, exits).shortfalls,
            std::vector<std::string>{
                "vhost-irqfd-mirror: 7 exits to userspace during traffic (kvm_mmio_exit_user), not 0 (the register mirror)"});
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kModes, [](Json& r) {
    if (r.value("config", "") == "qemu-pci") r["outside"]["guest_irqs"] = 0;
  });
  EXPECT_EQ(v.shortfalls, std::vector<std::string>{"qemu-pci: guest_irqs is 0 over 2 iperf3 runs: no guest interrupts"});
}

TEST(CheckRun, TheMirrorUnderATenthOfTrappedRegistersExits) {
  CheckMatrix m = small_matrix();
  m.configs = {"vhost-irqfd", "vhost-irqfd-mirror"};
  m.fio_configs = m.vsock_configs = {};
  m.micro = false;
  const auto trapped = [](int exits) {
    return [exits](Json& r) {
      if (r.value("config", "") != "vhost-irqfd") return;
      r["counters"] = quiet_counters(300);
      r["counters"]["vcpu_exits"] = exits;
      r["outside"] = mirror_outside();
      r["outside"]["kvm_mmio_exit_user"] = 600;
    };
  };
  // The mirror's runs have 2 vCPU exits each (4 over its iperf3 runs).
  const std::vector<Json> records = good_records(m);
  EXPECT_EQ(verdict(m, records, CheckLevel::kModes, trapped(300)).shortfalls, std::vector<std::string>{});
  EXPECT_EQ(verdict(m, records, CheckLevel::kModes, trapped(20)).shortfalls,
            std::vector<std::string>{
                "vhost-irqfd-mirror: 4 vCPU exits during traffic, not under a tenth of vhost-irqfd's 40"});
  EXPECT_EQ(verdict(m, records, CheckLevel::kModes, trapped(0)).shortfalls,
            std::vector<std::string>{"vhost-irqfd: no vCPU exits counted (is the counter read?)"});
}

TEST(CheckRun, GuestToGuestOnTheMirrorWakesNoVmm) {
  CheckMatrix m = small_matrix();
  m.g2g_modes = {"vhost-irqfd-mirror"};
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kModes, [](Json& r) {
    if (is(r, "iperf", "g2g-vhost-irqfd-mirror", "a2b")) r["counters"]["wakeups"] = 5, r["counters"]["polled"] = 1;
    if (is(r, "pps", "g2g-vhost-irqfd-mirror", "b2a")) r["received"] = 0, r["lost"] = 100;
  });
  EXPECT_EQ(v.shortfalls,
            (std::vector<std::string>{
                "g2g-vhost-irqfd-mirror b2a: no packet-rate run received a datagram",
                "g2g-vhost-irqfd-mirror: vhost-irqfd-mirror: counters do not fit the mode: trapped 0 polled 1 injected "
                "0 relayed 0 guest irqs 600",
                "g2g-vhost-irqfd-mirror: 5 VMM wake-ups during traffic guest to guest, not 0 (the register mirror)"}));
}

TEST(CheckRun, TheVmmStaysOutOfTheVsockPath) {
  const CheckMatrix m = small_matrix();
  EXPECT_EQ(verdict(m, good_records(m), CheckLevel::kModes,
                    [](Json& r) {
                      if (is(r, "vsock", "vsock-mirror", "h2g")) r["counters"]["wakeups"] = 3, r["counters"]["polled"] = 3;
                    })
                .shortfalls,
            std::vector<std::string>{"vsock-mirror: the VMM took part in the vsock transfers (vCPU exits 0, wake-ups 3, "
                                     "trapped 0, polled 3, injected 0, relayed 0), not 0 each"});
  EXPECT_EQ(verdict(m, good_records(m), CheckLevel::kModes,
                    [](Json& r) {
                      if (is(r, "vsock", "vsock-mirror", "g2h")) r["outside"]["vmm_ctxt_switches"] = 2;
                    })
                .shortfalls,
            std::vector<std::string>{
                "vsock-mirror: 0 exits to userspace and 2 VMM context switches during the vsock transfers, not 0"});
  EXPECT_EQ(verdict(m, good_records(m), CheckLevel::kModes,
                    [](Json& r) {
                      if (is(r, "vsock", "vsock-mirror")) r["counters"]["guest_irqs"] = 0;
                    })
                .shortfalls,
            std::vector<std::string>{"vsock-mirror: the guest took no virtio interrupt during its vsock transfers"});
}

TEST(CheckRun, DiskCellsByTheirRegisters) {
  CheckMatrix m = small_matrix();
  m.fio_configs = {"host", "blk-io_uring-mirror", "blk-threads-trap"};
  const auto exits = [](int n) {
    return [n](Json& r) {
      if (r.value("kind", "") == "fio" && r.value("config", "") == "blk-io_uring-mirror") r["counters"]["vcpu_exits"] = n;
    };
  };
  // blk-threads-trap's runs have no vCPU exits, as the mirror's.
  const std::vector<Json> records = good_records(m);
  EXPECT_EQ(verdict(m, records, CheckLevel::kModes, exits(0)).shortfalls,
            std::vector<std::string>{"blk-threads-trap: no vCPU exits during 4000 fio requests with trapped registers"});
  EXPECT_TRUE(has(verdict(m, records, CheckLevel::kModes, exits(3)),
                  "blk-io_uring-mirror: 12 vCPU exits during 4000 fio requests, not 0 (the register mirror)"));
  EXPECT_TRUE(has(verdict(m, records, CheckLevel::kModes,
                          [](Json& r) {
                            if (r.value("kind", "") == "fio" && r.value("config", "") == "host") r["ios"] = 0;
                          }),
                  "host: no fio run did requests"));
}

TEST(CheckRun, KvmmiosOwnCountersMustBeThere) {
  const CheckMatrix m = small_matrix();
  const CheckOutcome v = verdict(m, good_records(m), CheckLevel::kModes, [](Json& r) {
    if (is(r, "iperf", "vhost-irqfd-mirror", "h2g")) r.erase("counters");
  });
  EXPECT_EQ(v.shortfalls,
            std::vector<std::string>{"vhost-irqfd-mirror: 1 of 2 iperf3 runs have no VMM counters (kvmmio --stats)"});
}

}  // namespace
}  // namespace kvmmio::report
