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
    for (const PpsRun& r : raw.pps) add(r.config);
  }
  size_t rank(const std::string& config) const { return std::find(order_.begin(), order_.end(), config) - order_.begin(); }

  // The configs that have runs, in display order.
  std::vector<std::string> present(const RawData& raw) const {
    std::vector<std::string> out;
    for (const std::string& c : order_) {
      const auto same = [&](const auto& r) { return r.config == c; };
      if (std::any_of(raw.iperf.begin(), raw.iperf.end(), same) || std::any_of(raw.rr.begin(), raw.rr.end(), same) ||
          std::any_of(raw.pps.begin(), raw.pps.end(), same))
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

// Median, lowest, highest and spread of the completed runs' values.
struct Range {
  std::optional<double> median, min, max, spread_pct;
};
Range range_of(const std::vector<double>& v) {
  Range r;
  r.median = median(v);
  if (!v.empty()) {
    r.min = *std::min_element(v.begin(), v.end());
    r.max = *std::max_element(v.begin(), v.end());
  }
  r.spread_pct = spread_pct(r.min, r.max, r.median);
  return r;
}

// Each counter summed over `ok` per `unit` of what the runs received
// (`amount` of a run: its bytes, or its datagrams).
template <class Run, class Amount>
std::optional<CounterRates> counter_rates(const std::vector<const Run*>& ok, Amount amount, long double unit) {
  RunCounters sum;
  uint64_t total = 0;
  for (const Run* r : ok) {
    // One run without counters would make the sums lie about the rest.
    if (!r->counters) return std::nullopt;
    sum.vcpu_exits += r->counters->vcpu_exits;
    sum.wakeups += r->counters->wakeups;
    sum.injected += r->counters->injected;
    sum.relayed += r->counters->relayed;
    sum.trapped += r->counters->trapped;
    sum.polled += r->counters->polled;
    sum.guest_irqs += r->counters->guest_irqs;
    total += amount(*r);
  }
  if (ok.empty() || total == 0) return std::nullopt;
  const auto per = [&](uint64_t count) { return *per_unit(count, total, unit); };
  CounterRates g;
  g.vcpu_exits = per(sum.vcpu_exits);
  g.wakeups = per(sum.wakeups);
  g.vmm_irqs = per(sum.injected + sum.relayed);
  g.injected = per(sum.injected);
  g.relayed = per(sum.relayed);
  g.trapped = per(sum.trapped);
  g.polled = per(sum.polled);
  g.guest_irqs = per(sum.guest_irqs);
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
    const Range g = range_of(gbps);
    c.median_gbps = g.median;
    c.min_gbps = g.min;
    c.max_gbps = g.max;
    c.spread_pct = g.spread_pct;
    c.per_gb = counter_rates(ok, [](const IperfRun& r) { return r.bytes; }, 1e9L);
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

using PpsKey = std::tuple<unsigned, unsigned, Direction, size_t>;  // mtu, payload, dir, config rank

std::vector<PpsCell> pps_cells(const RawData& raw, const ConfigOrder& order) {
  std::map<PpsKey, std::vector<const PpsRun*>> groups;
  for (const PpsRun& r : raw.pps) groups[{r.mtu, r.payload, r.dir, order.rank(r.config)}].push_back(&r);

  std::vector<PpsCell> cells;
  for (const auto& [key, runs] : groups) {
    PpsCell c;
    c.config = runs.front()->config;
    c.mtu = runs.front()->mtu;
    c.payload = runs.front()->payload;
    c.dir = runs.front()->dir;
    std::vector<const PpsRun*> ok;
    std::vector<double> pps, loss;
    for (const PpsRun* r : runs) {
      if (r->failed) {
        ++c.runs_failed;
        continue;
      }
      ok.push_back(r);
      pps.push_back(r->pps);
      if (r->sent) loss.push_back(100.0 * double(r->lost) / double(r->sent));
      c.sent += r->sent;
      c.received += r->received;
    }
    c.runs_ok = static_cast<unsigned>(ok.size());
    const Range p = range_of(pps);
    c.median_pps = p.median;
    c.min_pps = p.min;
    c.max_pps = p.max;
    c.spread_pct = p.spread_pct;
    c.median_loss_pct = median(loss);
    c.per_mpkt = counter_rates(ok, [](const PpsRun& r) { return r.received; }, 1e6L);
    cells.push_back(std::move(c));
  }
  for (PpsCell& c : cells) {
    for (const PpsCell& host : cells)
      if (host.config == kHostConfig && host.mtu == c.mtu && host.payload == c.payload && host.dir == c.dir)
        c.ratio_to_host = ratio(c.median_pps, host.median_pps);
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
    if (r.failed) out.push_back({"iperf", r.source, r.config, r.mtu, r.dir, r.streams, r.rep, *r.failed, std::nullopt});
  for (const RrRun& r : raw.rr)
    if (r.failed) out.push_back({"rr", r.source, r.config, r.mtu, std::nullopt, std::nullopt, r.rep, *r.failed, std::nullopt});
  for (const PpsRun& r : raw.pps)
    if (r.failed) out.push_back({"pps", r.source, r.config, r.mtu, r.dir, std::nullopt, r.rep, *r.failed, r.payload});
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
  rep.pps = pps_cells(raw, order);
  for (const MicroResult& m : raw.micro)
    rep.micro.push_back({m, ratio(us_of(m, "mmio_exit"), us_of(m, "ioeventfd")),
                         ratio(us_of(m, "irq_line_relay"), us_of(m, "irqfd"))});
  rep.failures = failures(raw);
  return rep;
}

}  // namespace kvmmio::report
