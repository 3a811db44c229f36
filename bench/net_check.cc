// SPDX-License-Identifier: BSD-2-Clause
// net_check: the main job's verdict on a run's raw.jsonl, and the modes'
// counter rule for the shell scenarios. The work is in bench/report/
// (check.h, net_modes.h); this file is the command line and the file. A
// program of its own, small and static, because it runs where the
// driver runs: on the host, on a board, and in the arm64 platform's L1
// (a platform binary, /kvmmio/bin), where net_report is not.
//
//   net_check cells|modes --out DIR [matrix options]
//     bench/net-compare.sh --check LEVEL runs this with its own matrix
//     options (check.h says what each level asks). Shortfalls on stdout,
//     one a line; what was read on stderr, each line prefixed with
//     $NET_COMPARE_PREFIX (default "net-compare: "). Exit status 0 when
//     there is none, 1 when there are (or DIR/raw.jsonl is missing or
//     unreadable: that is a shortfall line too), 2 on bad usage.
//   net_check misfit MODE TRAPPED POLLED INJECTED RELAYED GUEST_IRQS
//     bench/net-modes.sh's net_mode_misfit: prints why the counters do not
//     fit MODE (net_modes.h), nothing when they do; exit status 0 either
//     way, 2 on bad usage.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/report/check.h"
#include "bench/report/check_records.h"
#include "bench/report/input_error.h"
#include "bench/report/net_modes.h"
#include "kvmmio/base/error.h"
#include "vmm/process/parse.h"

namespace report = kvmmio::report;

namespace {

constexpr const char* kUsage =
    "usage: net_check cells|modes --out DIR [--configs LIST] [--g2g-configs LIST] [--mtus LIST]\n"
    "                 [--dirs LIST] [--streams LIST] [--pps-payloads LIST] [--fio-configs LIST]\n"
    "                 [--fio-depths LIST] [--fio-jobs 'RW:BS ...'] [--vsock-configs LIST] [--micro]\n"
    "       net_check misfit MODE TRAPPED POLLED INJECTED RELAYED GUEST_IRQS\n"
    "LISTs are comma-separated (none or empty: no cells); bench/net-compare.sh --check\n"
    "passes the run's whole matrix.\n";

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "net_check: %s\n%s", what.c_str(), kUsage);
  std::exit(2);
}

// A comma-separated list without its empty items; "none" is empty (as
// net-compare.sh's --g2g-configs, --fio-configs and --vsock-configs take it).
std::vector<std::string> words(const std::string& list) {
  std::vector<std::string> out;
  if (list == "none") return out;
  std::stringstream s(list);
  for (std::string w; std::getline(s, w, ',');)
    if (!w.empty()) out.push_back(w);
  return out;
}

std::vector<unsigned> numbers(const std::string& list, const std::string& option) {
  std::vector<unsigned> out;
  for (const std::string& w : words(list))
    out.push_back(static_cast<unsigned>(kvmmio::parse_uint(w, option + " " + list, 1, 65535)));
  return out;
}

// "read:1048576 write:1048576": each fio job as RW:BS, space-separated.
std::vector<report::CheckMatrix::FioJob> fio_jobs(const std::string& list) {
  std::vector<report::CheckMatrix::FioJob> out;
  std::stringstream s(list);
  for (std::string w; s >> w;) {
    const size_t colon = w.find(':');
    if (colon == std::string::npos || colon == 0)
      throw kvmmio::UserError("--fio-jobs " + list + ": '" + w + "' is not RW:BS (e.g. read:1048576)");
    out.push_back({w.substr(0, colon),
                   static_cast<unsigned>(kvmmio::parse_uint(w.substr(colon + 1), "--fio-jobs " + w, 1, 1u << 30))});
  }
  return out;
}

int misfit(const std::vector<std::string>& args) {
  if (args.size() != 7) usage_error("misfit needs MODE and five counters");
  const report::ModeCounters c{report::ModeCounter::parse(args[2]), report::ModeCounter::parse(args[3]),
                               report::ModeCounter::parse(args[4]), report::ModeCounter::parse(args[5]),
                               report::ModeCounter::parse(args[6])};
  const std::string line = report::net_mode_misfit(args[1], c);
  if (!line.empty()) std::printf("%s\n", line.c_str());
  return 0;
}

int check(const std::vector<std::string>& args) {
  const report::CheckLevel level = args[0] == "modes" ? report::CheckLevel::kModes : report::CheckLevel::kCells;
  std::string out_dir, jobs;
  report::CheckMatrix m;
  try {
    const auto list = [](std::vector<std::string>& into) { return [&into](const std::string& v) { into = words(v); }; };
    const auto nums = [](std::vector<unsigned>& into, const char* option) {
      return [&into, option](const std::string& v) { into = numbers(v, option); };
    };
    kvmmio::parse_cli({{"--out", "the run's results directory, e.g. --out results/arm64",
                        [&out_dir](const std::string& v) { out_dir = v; }},
                       {"--configs", "a list, e.g. --configs host,vhost-irqfd-mirror", list(m.configs)},
                       {"--g2g-configs", "a list of modes, or none", list(m.g2g_modes)},
                       {"--mtus", "a list, e.g. --mtus 1500,9000", nums(m.mtus, "--mtus")},
                       {"--dirs", "a list, e.g. --dirs g2h,h2g", list(m.dirs)},
                       {"--streams", "a list, e.g. --streams 1,4", nums(m.streams, "--streams")},
                       {"--pps-payloads", "a list, e.g. --pps-payloads 64,1472", nums(m.payloads, "--pps-payloads")},
                       {"--fio-configs", "a list, or none", list(m.fio_configs)},
                       {"--fio-depths", "a list, e.g. --fio-depths 1,32", nums(m.fio_depths, "--fio-depths")},
                       {"--fio-jobs", "RW:BS words, e.g. --fio-jobs 'read:1048576 randread:4096'",
                        [&jobs](const std::string& v) { jobs = v; }},
                       {"--vsock-configs", "a list, or none", list(m.vsock_configs)},
                       {"--micro", "", [&m](const std::string&) { m.micro = true; }}},
                      std::vector<std::string>(args.begin() + 1, args.end()), 0);
    m.fio_jobs = fio_jobs(jobs);
  } catch (const kvmmio::UserError& e) {
    usage_error(e.what());
  }
  if (out_dir.empty()) usage_error("no --out DIR given");
  // Without the jobs every disk cell would pass unasked: the driver's list
  // (FIO_JOBS) is the one truth, so it must be given.
  if (!m.fio_configs.empty() && m.fio_jobs.empty()) usage_error("--fio-configs without --fio-jobs");

  const std::string raw = out_dir + "/raw.jsonl";
  std::ifstream in(raw, std::ios::binary);
  if (!in) {
    std::printf("no %s: the run wrote no records (see its output)\n", raw.c_str());
    return 1;
  }
  std::ostringstream text;
  std::error_code ec;
  report::CheckRecords records;
  try {
    if (!std::filesystem::is_regular_file(raw, ec)) throw report::InputError(raw + ": not a file");
    text << in.rdbuf();
    if (in.bad()) throw report::InputError(raw + ": a read error");
    records = report::parse_check_records(text.str(), raw);
  } catch (const report::InputError& e) {
    // "cannot read RAW...", as the shell check began this line.
    std::printf("cannot read %s\n", e.what());
    return 1;
  }
  const report::CheckOutcome v = report::check_run(records, m, level, out_dir);
  // The prefix of net-compare.sh's own lines: unset gives the default, set
  // but empty gives none.
  const char* env = std::getenv("NET_COMPARE_PREFIX");
  const std::string prefix = env ? env : "net-compare: ";
  for (const std::string& l : v.shortfalls) std::printf("%s\n", l.c_str());
  std::fflush(stdout);
  for (const std::string& l : v.info) std::fprintf(stderr, "%s%s\n", prefix.c_str(), l.c_str());
  if (v.shortfalls.empty()) return 0;
  std::fprintf(stderr, "%scheck: %zu shortfalls in %s\n", prefix.c_str(), v.shortfalls.size(), raw.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) usage_error("no sub-command given");
  if (args[0] == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args[0] == "misfit") return misfit(args);
  if (args[0] == "cells" || args[0] == "modes") return check(args);
  usage_error("unknown sub-command '" + args[0] + "' (cells, modes or misfit)");
}
