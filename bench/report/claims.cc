// SPDX-License-Identifier: BSD-2-Clause
// judge_claims(): the mirror's cells against qemu-pci's and against each of
// kvmmio's other modes, cell by cell, from the aggregated medians and
// ranges (claims.h says what is judged).
#include "bench/report/claims.h"

#include <algorithm>
#include <cmath>

namespace kvmmio::report {
namespace {

// What a cell's verdict reads: the value, its unit and scale, which way is
// better, and the percentile it names (tcp_rr) or "".
struct Measure {
  const char* value;
  const char* unit;
  double scale;
  bool higher_better;
  const char* what;
};

const Measure kGbps{"bps", "Gbit/s", 1e9, true, ""};
const Measure kPps{"pps", "pkt/s", 1, true, ""};
const Measure kP50{"p50_us", "us", 1, false, "p50"};
const Measure kP99{"p99_us", "us", 1, false, "p99"};

// A network cell between a guest and its host: the only topology both
// claims are about (guest to guest has no peer cell, and its tcp_rr has no
// direction to tell it apart by).
bool host_guest_network(const Cell& c) {
  if (guest_to_guest(c.config)) return false;
  if (c.kind == "rr") return true;
  return (c.kind == "iperf" || c.kind == "pps") && c.params.dir && (*c.params.dir == "g2h" || *c.params.dir == "h2g");
}

// kvmmio's guest modes: not the host, not a peer VMM (qemu-*), not a pair
// of guests (g2g-MODE).
bool is_kvmmio_mode(const std::string& config) {
  return config != kHostConfig && config.rfind("qemu-", 0) != 0 && !guest_to_guest(config);
}

// Whether `config` has a host-guest network cell in the run (a failed one
// counts: its missing median is what the claim must name).
bool ran_network(const Report& r, const std::string& config) {
  return std::any_of(r.cells.begin(), r.cells.end(),
                     [&](const Cell& c) { return c.config == config && host_guest_network(c); });
}

// What each claim reads in a cell (none: the claim does not name it).
using Measures = std::vector<const Measure*> (*)(const Cell&);

std::vector<const Measure*> peer_measures(const Cell& c) {
  if (c.kind == "iperf") return {&kGbps};
  if (c.kind == "rr") return {&kP50, &kP99};
  if (c.kind == "pps") return {&kPps};
  return {};
}

std::vector<const Measure*> modes_measures(const Cell& c) {
  if (c.kind == "rr") return {&kP99};
  if (c.kind == "pps" && c.params.payload == 64u) return {&kPps};
  return {};
}

// The rivals of each claim, in config order.
std::vector<std::string> peer_rivals(const Report& r) {
  if (!ran_network(r, kPeerConfig)) return {};
  return {kPeerConfig};
}

std::vector<std::string> mode_rivals(const Report& r) {
  std::vector<std::string> out;
  for (const std::string& c : r.configs)
    if (c != kMirrorConfig && is_kvmmio_mode(c) && ran_network(r, c)) out.push_back(c);
  return out;
}

std::string cell_name(const Cell& c, const Measure& measure) {
  const std::string mtu = c.params.mtu ? " MTU " + std::to_string(*c.params.mtu) : "";
  if (c.kind == "iperf")
    return "iperf3 " + c.params.dir.value_or("?") + " " + std::to_string(c.params.streams.value_or(0)) + "x" + mtu;
  if (c.kind == "rr") return "tcp_rr " + std::string(measure.what) + mtu;
  return "udp " + std::to_string(c.params.payload.value_or(0)) + " B " + c.params.dir.value_or("?") + mtu;
}

// The cell of `config` with `key`'s kind and parameters, or null.
const Cell* same_cell(const Report& r, const Cell& key, const std::string& config) {
  for (const Cell& c : r.cells)
    if (c.same_measurement(key) && c.config == config) return &c;
  return nullptr;
}

// `c`'s completed runs on `measure`, unset without a median (no cell, or
// no completed run).
std::optional<Side> side(const Cell* c, const Measure& measure) {
  if (!c) return std::nullopt;
  const Range r = c->range(measure.value);
  if (!r.median) return std::nullopt;
  return Side{*r.median / measure.scale, *r.min / measure.scale, *r.max / measure.scale, c->runs_ok};
}

Verdict verdict(std::string cell, std::string rival, const Measure& measure, const Side& m, const Side& o) {
  Verdict v{std::move(cell), std::move(rival), measure.unit, m, o};
  v.ahead = measure.higher_better ? m.median >= o.median : m.median <= o.median;
  v.enough = m.runs >= kClearRuns && o.runs >= kClearRuns;
  // Each median lies inside its own range, so ranges apart also put the
  // medians, and the verdict, on the same side.
  v.apart = m.max < o.min || o.max < m.min;
  return v;
}

// The cells one claim names: the mirror's and its rivals' cells that
// `measures` reads, one per measurement, in the report's order.
std::vector<const Cell*> named_cells(const Report& r, const std::vector<std::string>& rivals, Measures measures) {
  std::vector<const Cell*> out;
  for (const Cell& c : r.cells) {
    const bool ours = c.config == kMirrorConfig || std::find(rivals.begin(), rivals.end(), c.config) != rivals.end();
    if (!ours || !host_guest_network(c) || measures(c).empty()) continue;
    if (std::none_of(out.begin(), out.end(), [&](const Cell* o) { return o->same_measurement(c); })) out.push_back(&c);
  }
  return out;
}

// One claim: each named cell, on each measure, against each rival; a side
// without a median makes the cell missing rather than leaving it out.
Claim judge(const Report& r, const std::vector<std::string>& rivals, Measures measures) {
  Claim out;
  if (rivals.empty() || !ran_network(r, kMirrorConfig)) return out;
  for (const Cell* key : named_cells(r, rivals, measures))
    for (const Measure* m : measures(*key)) {
      const std::optional<Side> mirror = side(same_cell(r, *key, kMirrorConfig), *m);
      for (const std::string& rival : rivals) {
        const std::optional<Side> other = side(same_cell(r, *key, rival), *m);
        if (mirror && other) {
          out.verdicts.push_back(verdict(cell_name(*key, *m), rival, *m, *mirror, *other));
          continue;
        }
        Missing gap{cell_name(*key, *m), rival, {}};
        if (!mirror) gap.without.push_back(kMirrorConfig);
        if (!other) gap.without.push_back(rival);
        out.missing.push_back(std::move(gap));
      }
    }
  return out;
}

// Back from the mirror's per-million-packets rates to counts over its
// packet-rate runs.
void count_mirror_wakeups(const Report& report, Claims& out) {
  double wakeups = 0, ctxt = 0;
  bool counted_wakeups = false, counted_ctxt = false;
  for (const Cell& m : report.cells) {
    if (m.config != kMirrorConfig || m.kind != "pps" || !host_guest_network(m)) continue;
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
}

}  // namespace

Outcome Claim::outcome() const {
  if (std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.clear() && !v.ahead; }))
    return Outcome::kDoesNotHold;
  const bool all_clearly_ahead =
      std::all_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.clear() && v.ahead; });
  return missing.empty() && !verdicts.empty() && all_clearly_ahead ? Outcome::kHolds : Outcome::kNotShown;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kHolds:
      return "holds";
    case Outcome::kDoesNotHold:
      return "does not hold";
    case Outcome::kNotShown:
      break;
  }
  return "not shown";
}

std::string why_not_clear(const Verdict& v) {
  if (!v.enough) return "fewer than " + std::to_string(kClearRuns) + " runs";
  return v.apart ? "" : "ranges overlap";
}

Claims judge_claims(const Report& report) {
  Claims out;
  out.peer = judge(report, peer_rivals(report), peer_measures);
  out.modes = judge(report, mode_rivals(report), modes_measures);
  count_mirror_wakeups(report, out);
  return out;
}

unsigned ahead_count(const std::vector<Verdict>& v) {
  return static_cast<unsigned>(std::count_if(v.begin(), v.end(), [](const Verdict& x) { return x.ahead; }));
}

unsigned clear_count(const std::vector<Verdict>& v) {
  return static_cast<unsigned>(std::count_if(v.begin(), v.end(), [](const Verdict& x) { return x.clear(); }));
}

}  // namespace kvmmio::report
