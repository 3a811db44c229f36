// SPDX-License-Identifier: BSD-2-Clause
// Reading the main job's raw files: JSON lines, one object a line, blank
// lines ignored. Each has a "kind":
//
//   {"kind":"meta", "KEY":"VALUE", ...}
//   {"kind":"iperf", "config":C, "mtu":M, "dir":"g2h"|"h2g"|"a2b"|"b2a", "streams":S, "rep":R,
//    "bytes":B, "seconds":T, "bps":X [, "counters":{the seven of kinds.h}]}
//   {"kind":"rr", "config":C, "mtu":M, "rep":R, "transactions":N, "seconds":T,
//    "tps":X, "p50_us":X, "p90_us":X, "p99_us":X}
//   {"kind":"pps", "config":C, "mtu":M, "payload":P, "dir":D, "rep":R, "sent":N,
//    "received":N, "lost":N, "seconds":T, "pps":X [, "counters":{...}]}
//   {"kind":"fio", "config":C, "rw":"read"|"write"|"randread"|"randwrite", "bs":B,
//    "depth":D, "rep":R, "bytes":N, "ios":N, "seconds":T, "iops":X, "bw_bps":X
//    [, "counters":{...}]}
//   {"kind":"vsock", "config":C, "dir":"g2h"|"h2g", "rep":R, "bytes":B, "seconds":T, "bps":X
//    [, "counters":{...}]}
//   {"kind":"micro", "platform":NAME, "file":PATH}
//
// A measuring run with "failed":REASON did not complete: its results are
// not needed, nor are parameters it never reached. A run tried more than
// once has a record per attempt, each with "attempt":N (from 1) and
// "outcome":"ok"|"failed" ("failed" exactly when "failed" is given); one
// without them is attempt 1. The report it feeds is documented in
// docs/benchmarks.md.
#pragma once

#include <string>
#include <string_view>

#include "bench/report/records.h"

namespace kvmmio::report {

// Appends the records in `text` to `into`. `name` names the file in errors;
// a relative micro "file" is taken from `base_dir`. Throws InputError
// ("NAME:LINE: what is wrong") for a line that is not a JSON object, an
// unknown kind, a missing, mistyped or unknown member, "attempt" without
// "outcome" (or the reverse) or an outcome that contradicts "failed", a run's
// attempt given twice, an attempt below the run's highest that did not
// fail, a meta key that contradicts an earlier one, a micro file that
// cannot be read or is not a kvm_notify_bench result, or a file whose
// records are those of a file parsed before (given twice). Each file is
// one boot's runs: the same repeat of the same cell in two files is two
// runs, which pool in the cell (run_identity(), records.h).
void parse_runs(std::string_view text, const std::string& name, const std::string& base_dir, RawData& into);

// Reads the file at `path` and parses it, relative micro paths being taken
// from the file's directory. Throws InputError if it cannot be read.
void read_runs_file(const std::string& path, RawData& into);

}  // namespace kvmmio::report
