// SPDX-License-Identifier: BSD-2-Clause
// judge_claims(): the mirror's cells against qemu-pci's and against
// kvmmio's other modes, cell by cell, from the aggregated medians and
// ranges (claims.h says what is judged).
#include "bench/report/claims.h"

#include <algorithm>
#include <cmath>

namespace kvmmio::report {
namespace {

// What a cell's verdict reads: the value, its unit and scale, and which
// way is better.
struct Measure {
  const char* value;
  const char* unit;
  double scale;
  bool higher_better;
};

bool is_network_dir(const Params& p) { return p.dir && (*p.dir == "g2h" || *p.dir == "h2g"); }

// kvmmio's guest modes: not the host, not a peer VMM (qemu-*).
bool is_kvmmio_mode(const std::string& config) {
  return config != kHostConfig && config.rfind("qemu-", 0) != 0;
}

std::string cell_name(const Cell& c, const std::string& what) {
  const std::string mtu = c.params.mtu ? " MTU " + std::to_string(*c.params.mtu) : "";
  if (c.kind == "iperf")
    return "iperf3 " + c.params.dir.value_or("?") + " " + std::to_string(c.params.streams.value_or(0)) + "x" + mtu;
  if (c.kind == "rr") return "tcp_rr " + what + mtu;
  return "udp " + std::to_string(c.params.payload.value_or(0)) + " B " + c.params.dir.value_or("?") + mtu;
}

// The mirror's cell `m` against `rival` on `measure`; unset when either
// has no median.
std::optional<Verdict> verdict(const Cell& m, const Cell& rival, const Measure& measure, const std::string& what) {
  const Range a = m.range(measure.value), b = rival.range(measure.value);
  if (!a.median || !b.median) return std::nullopt;
  Verdict v;
  v.cell = cell_name(m, what);
  v.rival = rival.config;
  v.unit = measure.unit;
  v.mirror = *a.median / measure.scale;
  v.rival_median = *b.median / measure.scale;
  v.ahead = measure.higher_better ? *a.median >= *b.median : *a.median <= *b.median;
  const bool enough = m.runs_ok >= kClearRuns && rival.runs_ok >= kClearRuns;
  // Apart: the worse side's best run does not reach the better side's worst.
  const bool apart = measure.higher_better ? (v.ahead ? *a.min > *b.max : *a.max < *b.min)
                                           : (v.ahead ? *a.max < *b.min : *a.min > *b.max);
  v.clear = enough && apart;
  return v;
}

const Measure kGbps{"bps", "Gbit/s", 1e9, true};
const Measure kPps{"pps", "pkt/s", 1, true};
const Measure kP50{"p50_us", "us", 1, false};
const Measure kP99{"p99_us", "us", 1, false};

// The cell of `config` with `m`'s kind and parameters, or null.
const Cell* same_cell(const Report& r, const Cell& m, const std::string& config) {
  for (const Cell& c : r.cells)
    if (c.same_measurement(m) && c.config == config) return &c;
  return nullptr;
}

// Among the other kvmmio modes' cells like `m`, the best on `measure`.
const Cell* best_other_mode(const Report& r, const Cell& m, const Measure& measure) {
  const Cell* best = nullptr;
  for (const Cell& c : r.cells) {
    if (!c.same_measurement(m) || c.config == kMirrorConfig || !is_kvmmio_mode(c.config)) continue;
    const auto v = c.median(measure.value);
    if (!v) continue;
    const auto b = best ? best->median(measure.value) : std::nullopt;
    if (!b || (measure.higher_better ? *v > *b : *v < *b)) best = &c;
  }
  return best;
}

void add(std::vector<Verdict>& out, std::optional<Verdict> v) {
  if (v) out.push_back(std::move(*v));
}

}  // namespace

Claims judge_claims(const Report& report) {
  Claims out;
  double wakeups = 0, ctxt = 0;
  bool counted_wakeups = false, counted_ctxt = false;
  for (const Cell& m : report.cells) {
    if (m.config != kMirrorConfig) continue;
    const Cell* peer = same_cell(report, m, kPeerConfig);
    if (m.kind == "rr") {
      if (peer) {
        add(out.peer, verdict(m, *peer, kP50, "p50"));
        add(out.peer, verdict(m, *peer, kP99, "p99"));
      }
      if (const Cell* best = best_other_mode(report, m, kP99)) add(out.modes, verdict(m, *best, kP99, "p99"));
      continue;
    }
    // Guest to guest (a2b, b2a) and the disk have no peer cell to match.
    if (!is_network_dir(m.params)) continue;
    if (m.kind == "iperf" && peer) add(out.peer, verdict(m, *peer, kGbps, ""));
    if (m.kind != "pps") continue;
    if (peer) add(out.peer, verdict(m, *peer, kPps, ""));
    if (m.params.payload == 64u)
      if (const Cell* best = best_other_mode(report, m, kPps)) add(out.modes, verdict(m, *best, kPps, ""));
    // Back from per-million-packets rates to counts over the runs.
    const double received = m.sum("received");
    if (const auto w = m.rate("wakeups")) {
      wakeups += *w * received / 1e6;
      counted_wakeups = true;
    }
    if (const auto s = m.outside_rate("vmm_ctxt_switches")) {
      ctxt += *s * received / 1e6;
      counted_ctxt = true;
    }
  }
  if (counted_wakeups) out.mirror_wakeups = std::round(wakeups);
  if (counted_ctxt) out.mirror_ctxt_switches = std::round(ctxt);
  return out;
}

unsigned ahead_count(const std::vector<Verdict>& v) {
  return static_cast<unsigned>(std::count_if(v.begin(), v.end(), [](const Verdict& x) { return x.ahead; }));
}

unsigned clear_count(const std::vector<Verdict>& v) {
  return static_cast<unsigned>(std::count_if(v.begin(), v.end(), [](const Verdict& x) { return x.clear; }));
}

}  // namespace kvmmio::report
