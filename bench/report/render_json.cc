// render_json: one function per section of the document. Field names and
// units are documented in docs/benchmarks.md; change both together.
#include "bench/report/render_json.h"

#include "bench/report/json_writer.h"

namespace kvmmio::report {
namespace {

void per_gb(JsonWriter& w, const std::optional<PerGb>& g) {
  if (!g) return w.null();
  w.begin_object();
  w.key("vcpu_exits").number(g->vcpu_exits);
  w.key("wakeups").number(g->wakeups);
  w.key("vmm_irqs").number(g->vmm_irqs);
  w.key("injected").number(g->injected);
  w.key("relayed").number(g->relayed);
  w.key("trapped").number(g->trapped);
  w.key("polled").number(g->polled);
  w.key("guest_irqs").number(g->guest_irqs);
  w.end_object();
}

void iperf(JsonWriter& w, const IperfCell& c) {
  w.begin_object();
  w.key("config").string(c.config);
  w.key("mtu").integer(c.mtu);
  w.key("dir").string(to_string(c.dir));
  w.key("streams").integer(c.streams);
  w.key("runs_ok").integer(c.runs_ok);
  w.key("runs_failed").integer(c.runs_failed);
  w.key("median_gbps").number(c.median_gbps);
  w.key("min_gbps").number(c.min_gbps);
  w.key("max_gbps").number(c.max_gbps);
  w.key("spread_pct").number(c.spread_pct);
  w.key("ratio_to_host").number(c.ratio_to_host);
  w.key("ratio_to_user_trap").number(c.ratio_to_user_trap);
  w.key("bytes").integer(c.bytes);
  w.key("per_gb");
  per_gb(w, c.per_gb);
  w.end_object();
}

void rr(JsonWriter& w, const RrCell& c) {
  w.begin_object();
  w.key("config").string(c.config);
  w.key("mtu").integer(c.mtu);
  w.key("runs_ok").integer(c.runs_ok);
  w.key("runs_failed").integer(c.runs_failed);
  w.key("median_tps").number(c.median_tps);
  w.key("median_p50_us").number(c.median_p50_us);
  w.key("median_p90_us").number(c.median_p90_us);
  w.key("median_p99_us").number(c.median_p99_us);
  w.key("p50_ratio_to_host").number(c.p50_ratio_to_host);
  w.end_object();
}

void micro(JsonWriter& w, const MicroPlatform& p) {
  const MicroResult& m = p.result;
  w.begin_object();
  w.key("platform").string(m.platform);
  w.key("file").string(m.file);
  w.key("arch").string(m.arch);
  w.key("stores").number(m.stores);
  w.key("irqs").number(m.irqs);
  w.key("repeats").number(m.repeats);
  w.key("us").begin_object();
  for (const auto& [name, us] : m.us) w.key(name).number(us);
  w.end_object();
  w.key("mmio_exit_per_ioeventfd").number(p.mmio_exit_per_ioeventfd);
  w.key("irq_line_relay_per_irqfd").number(p.irq_line_relay_per_irqfd);
  w.end_object();
}

void failure(JsonWriter& w, const Failure& f) {
  w.begin_object();
  w.key("kind").string(f.kind);
  w.key("config").string(f.config);
  w.key("mtu").integer(f.mtu);
  w.key("dir");
  f.dir ? w.string(to_string(*f.dir)) : w.null();
  w.key("streams");
  f.streams ? w.integer(*f.streams) : w.null();
  w.key("rep").integer(f.rep);
  w.key("reason").string(f.reason);
  w.key("source").string(f.source.str());
  w.end_object();
}

}  // namespace

std::string render_json(const Report& report, const std::string& title) {
  JsonWriter w;
  w.begin_object();
  w.key("schema_version").integer(kJsonSchemaVersion);
  w.key("title").string(title);
  w.key("meta").begin_object();
  for (const auto& [k, v] : report.meta) w.key(k).string(v);
  w.end_object();
  w.key("iperf").begin_array();
  for (const IperfCell& c : report.iperf) iperf(w, c);
  w.end_array();
  w.key("rr").begin_array();
  for (const RrCell& c : report.rr) rr(w, c);
  w.end_array();
  w.key("micro").begin_array();
  for (const MicroPlatform& p : report.micro) micro(w, p);
  w.end_array();
  w.key("failures").begin_array();
  for (const Failure& f : report.failures) failure(w, f);
  w.end_array();
  w.end_object();
  return w.finish();
}

}  // namespace kvmmio::report
