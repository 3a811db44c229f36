// SPDX-License-Identifier: BSD-2-Clause
// render_json: one function per section of the document. Field names and
// units are documented in docs/benchmarks.md; change both together.
#include "bench/report/render_json.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace kvmmio::report {
namespace {

using Json = nlohmann::ordered_json;  // members in the order written

// A figure that is absent, or not finite, is null.
Json number(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

Json per_gb(const std::optional<PerGb>& g) {
  if (!g) return nullptr;
  return {{"vcpu_exits", number(g->vcpu_exits)}, {"wakeups", number(g->wakeups)},
          {"vmm_irqs", number(g->vmm_irqs)},     {"injected", number(g->injected)},
          {"relayed", number(g->relayed)},       {"trapped", number(g->trapped)},
          {"polled", number(g->polled)},         {"guest_irqs", number(g->guest_irqs)}};
}

Json iperf(const IperfCell& c) {
  return {{"config", c.config},
          {"mtu", c.mtu},
          {"dir", to_string(c.dir)},
          {"streams", c.streams},
          {"runs_ok", c.runs_ok},
          {"runs_failed", c.runs_failed},
          {"median_gbps", number(c.median_gbps)},
          {"min_gbps", number(c.min_gbps)},
          {"max_gbps", number(c.max_gbps)},
          {"spread_pct", number(c.spread_pct)},
          {"ratio_to_host", number(c.ratio_to_host)},
          {"ratio_to_user_trap", number(c.ratio_to_user_trap)},
          {"bytes", c.bytes},
          {"per_gb", per_gb(c.per_gb)}};
}

Json rr(const RrCell& c) {
  return {{"config", c.config},
          {"mtu", c.mtu},
          {"runs_ok", c.runs_ok},
          {"runs_failed", c.runs_failed},
          {"median_tps", number(c.median_tps)},
          {"median_p50_us", number(c.median_p50_us)},
          {"median_p90_us", number(c.median_p90_us)},
          {"median_p99_us", number(c.median_p99_us)},
          {"p50_ratio_to_host", number(c.p50_ratio_to_host)}};
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

Json failure(const Failure& f) {
  return {{"kind", f.kind},
          {"config", f.config},
          {"mtu", f.mtu},
          {"dir", f.dir ? Json(to_string(*f.dir)) : Json(nullptr)},
          {"streams", f.streams ? Json(*f.streams) : Json(nullptr)},
          {"rep", f.rep},
          {"reason", f.reason},
          {"source", f.source.str()}};
}

}  // namespace

std::string render_json(const Report& report, const std::string& title) {
  Json meta = Json::object();
  for (const auto& [k, v] : report.meta) meta[k] = v;
  Json doc = {{"schema_version", kJsonSchemaVersion}, {"title", title}, {"meta", meta},
              {"iperf", Json::array()},           {"rr", Json::array()},  {"micro", Json::array()},
              {"failures", Json::array()}};
  for (const IperfCell& c : report.iperf) doc["iperf"].push_back(iperf(c));
  for (const RrCell& c : report.rr) doc["rr"].push_back(rr(c));
  for (const MicroPlatform& p : report.micro) doc["micro"].push_back(micro(p));
  for (const Failure& f : report.failures) doc["failures"].push_back(failure(f));
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kvmmio::report
