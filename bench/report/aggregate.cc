// SPDX-License-Identifier: BSD-2-Clause
// aggregate(): groups the raw runs into cells, takes medians over the runs
// that completed, and relates each cell to its host and user-trap baselines.
#include <algorithm>
#include <map>
#include <tuple>

#include "bench/report/report.h"
#include "bench/report/stats.h"

namespace kvmmio::report {
namespace {

// Known configurations first, in their fixed order; then the others as
// they first appear in the input.
class ConfigOrder {
 public:
  explicit ConfigOrder(const RawData& raw) {
    for (const char* c : kKnownConfigs) add(c);
    for (const IperfRun& r : raw.iperf) add(r.config);
    for (const RrRun& r : raw.rr) add(r.config);
  }
  size_t rank(const std::string& config) const { return std::find(order_.begin(), order_.end(), config) - order_.begin(); }

  // The configs that have runs, in display order.
  std::vector<std::string> present(const RawData& raw) const {
    std::vector<std::string> out;
    for (const std::string& c : order_) {
      const auto same = [&](const auto& r) { return r.config == c; };
      if (std::any_of(raw.iperf.begin(), raw.iperf.end(), same) || std::any_of(raw.rr.begin(), raw.rr.end(), same))
        out.push_back(c);
    }
    return out;
  }

 private:
  void add(const std::string& c) {
    if (std::find(order_.begin(), order_.end(), c) == order_.end()) order_.push_back(c);
  }
  std::vector<std::string> order_;
};

using IperfKey = std::tuple<unsigned, Direction, unsigned, size_t>;  // mtu, dir, streams, config rank

std::optional<double> extreme(const std::vector<double>& v, bool want_max) {
  if (v.empty()) return std::nullopt;
  return want_max ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end());
}

std::optional<PerGb> per_gb_of(const std::vector<const IperfRun*>& ok) {
  RunCounters sum;
  uint64_t bytes = 0;
  for (const IperfRun* r : ok) {
    // One run without counters would make the sums lie about the rest.
    if (!r->counters) return std::nullopt;
    sum.vcpu_exits += r->counters->vcpu_exits;
    sum.wakeups += r->counters->wakeups;
    sum.injected += r->counters->injected;
    sum.relayed += r->counters->relayed;
    sum.trapped += r->counters->trapped;
    sum.polled += r->counters->polled;
    sum.guest_irqs += r->counters->guest_irqs;
    bytes += r->bytes;
  }
  if (ok.empty() || bytes == 0) return std::nullopt;
  PerGb g;
  g.vcpu_exits = *per_gb(sum.vcpu_exits, bytes);
  g.wakeups = *per_gb(sum.wakeups, bytes);
  g.vmm_irqs = *per_gb(sum.injected + sum.relayed, bytes);
  g.injected = *per_gb(sum.injected, bytes);
  g.relayed = *per_gb(sum.relayed, bytes);
  g.trapped = *per_gb(sum.trapped, bytes);
  g.polled = *per_gb(sum.polled, bytes);
  g.guest_irqs = *per_gb(sum.guest_irqs, bytes);
  return g;
}

std::vector<IperfCell> iperf_cells(const RawData& raw, const ConfigOrder& order) {
  std::map<IperfKey, std::vector<const IperfRun*>> groups;
  for (const IperfRun& r : raw.iperf) groups[{r.mtu, r.dir, r.streams, order.rank(r.config)}].push_back(&r);

  std::vector<IperfCell> cells;
  for (const auto& [key, runs] : groups) {
    IperfCell c;
    c.config = runs.front()->config;
    c.mtu = runs.front()->mtu;
    c.dir = runs.front()->dir;
    c.streams = runs.front()->streams;
    std::vector<const IperfRun*> ok;
    std::vector<double> gbps;
    for (const IperfRun* r : runs) {
      if (r->failed) {
        ++c.runs_failed;
        continue;
      }
      ok.push_back(r);
      gbps.push_back(r->bps / 1e9);
      c.bytes += r->bytes;
    }
    c.runs_ok = static_cast<unsigned>(ok.size());
    c.median_gbps = median(gbps);
    c.min_gbps = extreme(gbps, false);
    c.max_gbps = extreme(gbps, true);
    c.spread_pct = spread_pct(c.min_gbps, c.max_gbps, c.median_gbps);
    c.per_gb = per_gb_of(ok);
    cells.push_back(std::move(c));
  }

  auto baseline = [&](const IperfCell& c, const char* config) -> std::optional<double> {
    for (const IperfCell& b : cells)
      if (b.config == config && b.mtu == c.mtu && b.dir == c.dir && b.streams == c.streams) return b.median_gbps;
    return std::nullopt;
  };
  for (IperfCell& c : cells) {
    c.ratio_to_host = ratio(c.median_gbps, baseline(c, kHostConfig));
    c.ratio_to_user_trap = ratio(c.median_gbps, baseline(c, kUserTrapConfig));
  }
  return cells;
}

std::vector<RrCell> rr_cells(const RawData& raw, const ConfigOrder& order) {
  std::map<std::pair<unsigned, size_t>, std::vector<const RrRun*>> groups;
  for (const RrRun& r : raw.rr) groups[{r.mtu, order.rank(r.config)}].push_back(&r);

  std::vector<RrCell> cells;
  for (const auto& [key, runs] : groups) {
    RrCell c;
    c.config = runs.front()->config;
    c.mtu = runs.front()->mtu;
    std::vector<double> tps, p50, p90, p99;
    for (const RrRun* r : runs) {
      if (r->failed) {
        ++c.runs_failed;
        continue;
      }
      ++c.runs_ok;
      tps.push_back(r->tps);
      p50.push_back(r->p50_us);
      p90.push_back(r->p90_us);
      p99.push_back(r->p99_us);
    }
    c.median_tps = median(tps);
    c.median_p50_us = median(p50);
    c.median_p90_us = median(p90);
    c.median_p99_us = median(p99);
    cells.push_back(std::move(c));
  }
  for (RrCell& c : cells) {
    for (const RrCell& host : cells)
      if (host.config == kHostConfig && host.mtu == c.mtu) c.p50_ratio_to_host = ratio(c.median_p50_us, host.median_p50_us);
  }
  return cells;
}

std::optional<double> us_of(const MicroResult& m, const char* name) {
  for (const auto& [k, v] : m.us)
    if (k == name) return v;
  return std::nullopt;
}

std::vector<Failure> failures(const RawData& raw) {
  std::vector<Failure> out;
  for (const IperfRun& r : raw.iperf)
    if (r.failed) out.push_back({"iperf", r.source, r.config, r.mtu, r.dir, r.streams, r.rep, *r.failed});
  for (const RrRun& r : raw.rr)
    if (r.failed) out.push_back({"rr", r.source, r.config, r.mtu, std::nullopt, std::nullopt, r.rep, *r.failed});
  return out;
}

}  // namespace

Report aggregate(const RawData& raw) {
  const ConfigOrder order(raw);
  Report rep;
  for (const MetaEntry& m : raw.meta) rep.meta.emplace_back(m.key, m.value);
  rep.configs = order.present(raw);
  rep.iperf = iperf_cells(raw, order);
  rep.rr = rr_cells(raw, order);
  for (const MicroResult& m : raw.micro)
    rep.micro.push_back({m, ratio(us_of(m, "mmio_exit"), us_of(m, "ioeventfd")),
                         ratio(us_of(m, "irq_line_relay"), us_of(m, "irqfd"))});
  rep.failures = failures(raw);
  return rep;
}

}  // namespace kvmmio::report
