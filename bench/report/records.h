// SPDX-License-Identifier: BSD-2-Clause
// What the reader returns from the main job's JSON-lines files (one run a
// line; docs/benchmarks.md, "Raw records"): the runs of every measuring kind
// in one shape, the microbenchmark results and the meta entries. Each
// remembers the file and line it came from, for later errors and the
// failure list.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kvmmio::report {

struct Source {
  std::string file;
  int line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

// The parameters a run was measured at. Which ones a kind has is in
// kinds.h; the others stay unset. A failed run may lack some.
struct Params {
  std::optional<unsigned> mtu;
  std::optional<unsigned> payload;  // UDP payload bytes
  std::optional<std::string> dir;   // "g2h" or "h2g"; guest to guest "a2b" or "b2a"
  std::optional<unsigned> streams;
  std::optional<std::string> rw;    // fio: "read", "write", "randread" or "randwrite"
  std::optional<unsigned> bs;       // fio: block size, bytes
  std::optional<unsigned> depth;    // fio: iodepth
  // The report's order: by MTU, payload, direction (g2h, h2g, then the
  // guest-to-guest a2b and b2a), streams; fio's by block size (largest
  // first), pattern, depth.
  auto key() const {
    const std::optional<long> neg_bs = bs ? std::optional<long>(-static_cast<long>(*bs)) : std::nullopt;
    const int dir_rank = !dir ? 0 : *dir == "g2h" ? 1 : *dir == "h2g" ? 2 : 3;
    return std::make_tuple(mtu, payload, dir_rank, dir, streams, neg_bs, rw, depth);
  }
  bool operator==(const Params& o) const { return key() == o.key(); }
};

// One measured run: iperf, rr, pps, fio or a later kind.
struct Run {
  Source source;
  std::string kind;
  std::string config;
  Params params;
  unsigned rep = 0;
  // Which attempt at the run this record is (1 when the record does not
  // say): net-compare.sh tries a failed run again on a fresh guest and
  // records every attempt; the highest one judges the run.
  unsigned attempt = 1;
  std::optional<std::string> failed;    // the reason; then `values` is empty
  std::map<std::string, double> values;  // the kind's results (kinds.h)
  // The VMM's counters over the run (deltas of kvmmio --stats), by name;
  // absent without a VM (config host).
  std::optional<std::map<std::string, double>> counters;
  // The counters read without the VMM over the run (deltas of
  // bench/outside-counters.sh and the guest's interrupt count, kinds.h
  // kOutsideNames), by name; a value is absent where it could not be read.
  // Any VMM's runs may carry them.
  std::optional<std::map<std::string, std::optional<double>>> outside;
};

// One kvm_notify_bench --json result, loaded from the file a `micro`
// record names.
struct MicroResult {
  Source source;
  std::string platform;
  std::string file;  // as written in the record
  std::string arch;
  std::optional<double> stores, irqs, repeats;
  std::vector<std::pair<std::string, double>> us;  // in the file's order
};

struct MetaEntry {
  Source source;
  std::string key;
  std::string value;
};

// Everything read from one or more raw files, in input order.
struct RawData {
  std::vector<MetaEntry> meta;
  std::vector<Run> runs;
  std::vector<MicroResult> micro;
  // Each file read so far (its name, then its records' lines), so that a
  // file given twice is refused rather than pooled with itself.
  std::vector<std::pair<std::string, std::string>> files;
};

// A run's identity but for its attempt: its kind, config, parameters and
// repeat, and the raw file it came from. A raw file holds one boot's runs
// (bench/net-compare.sh writes one per boot of L1 or of a board), so repeat
// 1 of another file is another run of another boot: the two pool in their
// cell. The records of a run tried more than once share its identity.
inline auto run_identity(const Run& r) {
  return std::make_tuple(r.kind, r.config, r.params.key(), r.rep, r.source.file);
}

}  // namespace kvmmio::report
