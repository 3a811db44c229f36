// SPDX-License-Identifier: BSD-2-Clause
// The main job's verdict on one run's raw.jsonl (bench/net-compare.sh
// --check LEVEL, which bench/net_check carries out): what the records must
// show for the matrix the run was given.
//
//   cells  every cell of the matrix has a run that succeeded (one whose
//          last attempt did not fail), the micro record is there when
//          asked for, the outside counters the report needs are readable
//          (not null) in every completed run of each guest cell, and no
//          run shared the host with another VM;
//   modes  that, and each mode's counters fit it: the register mirror's
//          claim seen from outside the VMM and from its own counters, the
//          trapped and relaying modes' costs, guest to guest, the disk and
//          vsock cells (docs/benchmarks.md, "Running it", step 4).
//
// Each shortfall is one line: scripts/main.sh lists them as its failures,
// the arm64 platform's net-compare scenario records them. What was read
// along the way (each mode's sums) comes as info lines, for the log.
// Counters that must be 0 or above 0 are judged on what was read: a null
// (unreadable) is never taken for 0.
#pragma once

#include <string>
#include <vector>

#include "bench/report/check_records.h"

namespace kvmmio::report {

// The matrix a run was given (net-compare.sh's options of the same names);
// an empty list has no cells.
struct CheckMatrix {
  std::vector<std::string> configs;        // --configs: host, kvmmio's modes, the peer VMM's
  std::vector<std::string> g2g_modes;      // --g2g-configs: modes measured guest to guest (g2g-MODE)
  std::vector<unsigned> mtus;              // --mtus: each for iperf3; the first for the rest
  std::vector<std::string> dirs;           // --dirs: g2h, h2g
  std::vector<unsigned> streams;           // --streams
  std::vector<unsigned> payloads;          // --pps-payloads
  std::vector<std::string> fio_configs;    // --fio-configs
  std::vector<unsigned> fio_depths;        // --fio-depths
  struct FioJob {
    std::string rw;
    unsigned bs = 0;
  };
  std::vector<FioJob> fio_jobs;            // each disk cell's fio jobs (net-compare.sh's FIO_JOBS)
  std::vector<std::string> vsock_configs;  // --vsock-configs
  bool micro = false;                      // --micro: kvm_notify_bench ran first
};

enum class CheckLevel { kCells, kModes };

struct CheckOutcome {
  std::vector<std::string> shortfalls;  // each a line of its own; none: the run passes
  std::vector<std::string> info;        // what was read, each a line
};

// The verdict on `records`, read from `out_dir`/raw.jsonl (named in the
// shortfalls that point at the run's other files).
CheckOutcome check_run(const CheckRecords& records, const CheckMatrix& matrix, CheckLevel level,
                       const std::string& out_dir);

}  // namespace kvmmio::report
