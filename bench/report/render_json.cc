// SPDX-License-Identifier: BSD-2-Clause
// render_json: one function per section of the document. Field names and
// units are documented in docs/benchmarks.md; change both together.
#include "bench/report/render_json.h"

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "bench/report/claims.h"
#include "bench/report/kinds.h"

namespace kvmmio::report {
namespace {

using Json = nlohmann::ordered_json;  // members in the order written

// A figure that is absent, or not finite, is null.
Json number(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

Json optional(const std::optional<unsigned>& v) { return v ? Json(*v) : Json(nullptr); }
Json optional(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }

Json counter_rates(const Cell& c, bool second = false) {
  if (!(second ? c.rates2 : c.rates)) return nullptr;
  Json out = Json::object();
  for (const char* name : {"vcpu_exits", "wakeups", "vmm_irqs", "injected", "relayed", "trapped", "polled", "guest_irqs"})
    out[name] = number(second ? c.rate2(name) : c.rate(name));
  return out;
}

// The outside counters (kinds.h kOutsideNames) per unit, or per unit2
// when `second`; a counter unreadable in some run is null.
Json outside_rates(const Cell& c, bool second = false) {
  if (!(second ? c.outside_rates2 : c.outside_rates)) return nullptr;
  Json out = Json::object();
  for (const char* name : kOutsideNames) out[name] = number(second ? c.outside_rate2(name) : c.outside_rate(name));
  return out;
}

// The members every cell starts with: config and its parameters, run counts.
Json head(const Cell& c) {
  Json out = {{"config", c.config}, {"mtu", optional(c.params.mtu)}};
  if (c.params.payload) out["payload"] = *c.params.payload;
  if (c.params.dir) out["dir"] = *c.params.dir;
  if (c.params.streams) out["streams"] = *c.params.streams;
  if (c.params.rw) out["rw"] = *c.params.rw;
  if (c.params.bs) out["bs"] = *c.params.bs;
  if (c.params.depth) out["depth"] = *c.params.depth;
  out["runs_ok"] = c.runs_ok;
  out["runs_failed"] = c.runs_failed;
  // Only where a run was retried, so that a report of runs each tried once
  // reads as it did before retries were recorded.
  if (c.retries) out["retries"] = c.retries;
  return out;
}

// median_, min_, max_ and spread_pct of value `name` as `unit`, scaled.
void add_range(Json& out, const Cell& c, const char* name, const std::string& unit, double scale) {
  const Range r = c.range(name);
  const auto scaled = [&](const std::optional<double>& v) { return v ? number(*v / scale) : Json(nullptr); };
  out["median_" + unit] = scaled(r.median);
  out["min_" + unit] = scaled(r.min);
  out["max_" + unit] = scaled(r.max);
  out["spread_pct"] = number(r.spread_pct);
}

// A stream's cell (iperf, vsock) after its ratios: the bytes received
// and the work per GB of them.
void add_per_gb(Json& out, const Cell& c) {
  out["bytes"] = static_cast<uint64_t>(c.sum("bytes"));
  out["per_gb"] = counter_rates(c);
  out["outside_per_gb"] = outside_rates(c);
  out["vmm_cpu_core_pct"] = number(c.vmm_cpu_core_pct);
}

Json iperf(const Cell& c) {
  Json out = head(c);
  add_range(out, c, "bps", "gbps", 1e9);
  out["ratio_to_host"] = number(c.ratio_to_host);
  out["ratio_to_user_trap"] = number(c.ratio_to_user_trap);
  out["ratio_to_peer"] = number(c.ratio_to_peer);
  add_per_gb(out, c);
  return out;
}

Json rr(const Cell& c) {
  Json out = head(c);
  for (const char* v : {"tps", "p50_us", "p90_us", "p99_us"}) out[std::string("median_") + v] = number(c.median(v));
  out["p50_ratio_to_host"] = number(c.ratio_to_host);
  out["p50_ratio_to_peer"] = number(c.ratio_to_peer);
  out["p99_ratio_to_peer"] = number(c.p99_ratio_to_peer);
  return out;
}

Json pps(const Cell& c) {
  Json out = head(c);
  add_range(out, c, "pps", "pps", 1);
  out["median_loss_pct"] = number(c.median("loss_pct"));
  out["ratio_to_host"] = number(c.ratio_to_host);
  out["ratio_to_peer"] = number(c.ratio_to_peer);
  out["sent"] = static_cast<uint64_t>(c.sum("sent"));
  out["received"] = static_cast<uint64_t>(c.sum("received"));
  out["per_mpkt"] = counter_rates(c);
  out["outside_per_mpkt"] = outside_rates(c);
  out["vmm_cpu_core_pct"] = number(c.vmm_cpu_core_pct);
  return out;
}

Json fio(const Cell& c) {
  Json out = head(c);
  add_range(out, c, "iops", "iops", 1);
  const Range mb = c.range("bw_bps");
  const auto scaled = [](const std::optional<double>& v) { return v ? number(*v / 1e6) : Json(nullptr); };
  out["median_mbps"] = scaled(mb.median);
  out["min_mbps"] = scaled(mb.min);
  out["max_mbps"] = scaled(mb.max);
  out["ratio_to_host"] = number(c.ratio_to_host);
  out["ratio_to_peer"] = number(c.ratio_to_peer);
  out["bytes"] = static_cast<uint64_t>(c.sum("bytes"));
  out["ios"] = static_cast<uint64_t>(c.sum("ios"));
  out["per_mreq"] = counter_rates(c);
  out["per_gb"] = counter_rates(c, true);
  out["outside_per_mreq"] = outside_rates(c);
  out["outside_per_gb"] = outside_rates(c, true);
  out["vmm_cpu_core_pct"] = number(c.vmm_cpu_core_pct);
  return out;
}

// iperf's shape, keyed by dir alone, with the host's vsock loopback as
// its one baseline (no ratio to user-trap or to the peer VMM).
Json vsock(const Cell& c) {
  Json out = head(c);
  add_range(out, c, "bps", "gbps", 1e9);
  out["ratio_to_host"] = number(c.ratio_to_host);
  add_per_gb(out, c);
  return out;
}

Json micro(const MicroPlatform& p) {
  const MicroResult& m = p.result;
  Json us = Json::object();
  for (const auto& [name, v] : m.us) us[name] = number(v);
  return {{"platform", m.platform},
          {"file", m.file},
          {"arch", m.arch},
          {"stores", number(m.stores)},
          {"irqs", number(m.irqs)},
          {"repeats", number(m.repeats)},
          {"us", us},
          {"mmio_exit_per_ioeventfd", number(p.mmio_exit_per_ioeventfd)},
          {"irq_line_relay_per_irqfd", number(p.irq_line_relay_per_irqfd)}};
}

// Which run: kind, config, every parameter (null where it has none) and
// the repeat, as failures[] and retried[] begin.
Json run_id(const Run& f) {
  return {{"kind", f.kind},
          {"config", f.config},
          {"mtu", optional(f.params.mtu)},
          {"dir", optional(f.params.dir)},
          {"streams", optional(f.params.streams)},
          {"payload", optional(f.params.payload)},
          {"rw", optional(f.params.rw)},
          {"bs", optional(f.params.bs)},
          {"depth", optional(f.params.depth)},
          {"rep", f.rep ? Json(f.rep) : Json(nullptr)}};
}

Json failure(const Run& f) {
  Json out = run_id(f);
  out["reason"] = *f.failed;
  out["source"] = f.source.str();
  return out;
}

// A run tried more than once: its last attempt (what the cell counts) and
// the earlier, failed ones with their reasons.
Json retried(const Retried& t) {
  Json out = run_id(t.run);
  out["attempt"] = t.run.attempt;
  out["outcome"] = t.run.failed ? "failed" : "ok";
  out["reason"] = optional(t.run.failed);
  out["source"] = t.run.source.str();
  Json earlier = Json::array();
  for (const Run& e : t.earlier)
    earlier.push_back({{"attempt", e.attempt}, {"reason", optional(e.failed)}, {"source", e.source.str()}});
  out["earlier"] = earlier;
  return out;
}

// One side of a verdict: its median, range and run count, named `prefix`_.
void add_side(Json& cell, const std::string& prefix, const Side& s) {
  cell[prefix + "_median"] = number(s.median);
  cell[prefix + "_min"] = number(s.min);
  cell[prefix + "_max"] = number(s.max);
  cell[prefix + "_runs"] = s.runs;
}

Json verdict(const Verdict& x) {
  Json cell = {{"cell", x.cell}, {"rival", x.rival}, {"unit", x.unit}};
  add_side(cell, "mirror", x.mirror);
  add_side(cell, "rival", x.other);
  cell["ahead"] = x.ahead;
  cell["clear"] = x.clear();
  return cell;
}

// One claim (claims.h): its outcome, each verdict, and what keeps it from
// holding: the cells missing on a side and the verdicts that are not clear.
Json claim(const Claim& c) {
  Json cells = Json::array(), missing = Json::array(), not_clear = Json::array();
  for (const Verdict& x : c.verdicts) {
    cells.push_back(verdict(x));
    if (!x.clear()) not_clear.push_back({{"cell", x.cell}, {"rival", x.rival}, {"why", why_not_clear(x)}});
  }
  for (const Missing& m : c.missing) missing.push_back({{"cell", m.cell}, {"rival", m.rival}, {"without", m.without}});
  const Outcome o = c.outcome();
  return {{"outcome", outcome_name(o)},       {"holds", o == Outcome::kHolds},
          {"ahead", ahead_count(c.verdicts)}, {"clear", clear_count(c.verdicts)},
          {"cells", cells},                   {"missing", missing},
          {"not_clear", not_clear}};
}

Json claims(const Report& report) {
  const Claims c = judge_claims(report);
  return {{"config", kMirrorConfig},
          {"peer", c.peer.judged() ? claim(c.peer) : Json(nullptr)},
          {"modes", c.modes.judged() ? claim(c.modes) : Json(nullptr)},
          {"mirror_pps_wakeups", number(c.mirror_wakeups)},
          {"mirror_pps_ctxt_switches", number(c.mirror_ctxt_switches)}};
}

}  // namespace

std::string render_json(const Report& report, const std::string& title) {
  Json meta = Json::object();
  for (const auto& [k, v] : report.meta) meta[k] = v;
  Json doc = {{"schema_version", kJsonSchemaVersion}, {"title", title}, {"meta", meta},
              {"iperf", Json::array()},           {"rr", Json::array()},  {"pps", Json::array()},
              {"fio", Json::array()},             {"vsock", Json::array()},
              {"micro", Json::array()},           {"failures", Json::array()}};
  // Each kind's cells under its own key, in its own shape (kinds.h lists
  // the kinds the reader accepts).
  const std::map<std::string, Json (*)(const Cell&)> shape = {
      {"iperf", iperf}, {"rr", rr}, {"pps", pps}, {"fio", fio}, {"vsock", vsock}};
  for (const Cell& c : report.cells) doc[c.kind].push_back(shape.at(c.kind)(c));
  for (const MicroPlatform& p : report.micro) doc["micro"].push_back(micro(p));
  for (const Run& f : report.failures) doc["failures"].push_back(failure(f));
  if (!report.retried.empty()) {
    doc["retried"] = Json::array();
    for (const Retried& t : report.retried) doc["retried"].push_back(retried(t));
  }
  doc["claims"] = claims(report);
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kvmmio::report
