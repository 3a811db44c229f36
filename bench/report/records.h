// SPDX-License-Identifier: BSD-2-Clause
// The raw records of the main job's measurement file, as the parser returns
// them: one struct per record kind. Each remembers the file and line it came
// from, so later checks and the failure list can point at it.
// The format is described in bench/report/raw_parser.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvmmio::report {

struct Source {
  std::string file;
  int line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

enum class Direction { kGuestToHost, kHostToGuest };
const char* to_string(Direction d);  // "g2h", "h2g"

// The VMM's counters over one iperf run (deltas of kvmmio --stats).
struct RunCounters {
  uint64_t vcpu_exits = 0;
  uint64_t wakeups = 0;
  uint64_t injected = 0;
  uint64_t relayed = 0;
  uint64_t trapped = 0;
  uint64_t polled = 0;
  uint64_t guest_irqs = 0;
};

// One iperf3 run. When `failed` holds a reason the measurements are unset.
struct IperfRun {
  Source source;
  std::string config;
  unsigned mtu = 0;
  Direction dir = Direction::kGuestToHost;
  unsigned streams = 0;
  unsigned rep = 0;
  std::optional<std::string> failed;
  uint64_t bytes = 0;  // received
  double seconds = 0;
  double bps = 0;  // receiver bits per second
  std::optional<RunCounters> counters;  // absent without a VM (config=host)
};

// One TCP request/response run (bench/tcp_rr).
struct RrRun {
  Source source;
  std::string config;
  unsigned mtu = 0;
  unsigned rep = 0;
  std::optional<std::string> failed;
  uint64_t transactions = 0;
  double seconds = 0;
  double tps = 0;
  double p50_us = 0;
  double p90_us = 0;
  double p99_us = 0;
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
  std::vector<IperfRun> iperf;
  std::vector<RrRun> rr;
  std::vector<MicroResult> micro;
};

}  // namespace kvmmio::report
