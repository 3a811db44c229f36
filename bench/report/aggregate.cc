// SPDX-License-Identifier: BSD-2-Clause
// aggregate(): groups the runs of every kind into cells (a retried run by
// its last attempt, the earlier ones kept as retries), takes medians over
// the runs that completed, and relates each cell to its host and user-trap
// baselines and to the peer VMM (qemu-pci). What differs between kinds is
// data (kinds.h).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>

#include "bench/report/kinds.h"
#include "bench/report/report.h"
#include "bench/report/stats.h"

namespace kvmmio::report {
namespace {

// Known configurations first, in their fixed order; then the others as
// they first appear in the input.
std::vector<std::string> config_order(const RawData& raw) {
  std::vector<std::string> order(std::begin(kKnownConfigs), std::end(kKnownConfigs));
  for (const Run& r : raw.runs)
    if (std::find(order.begin(), order.end(), r.config) == order.end()) order.push_back(r.config);
  return order;
}

size_t kind_rank(const std::string& kind) {
  const auto& k = kinds();
  return std::find_if(k.begin(), k.end(), [&](const KindSpec& s) { return kind == s.name; }) - k.begin();
}

bool complete(const Run& r) {
  const Params& p = r.params;
  for (const char* name : find_kind(r.kind)->params) {
    const std::string n = name;
    if ((n == "mtu" && !p.mtu) || (n == "payload" && !p.payload) || (n == "dir" && !p.dir) ||
        (n == "streams" && !p.streams) || (n == "rw" && !p.rw) || (n == "bs" && !p.bs) || (n == "depth" && !p.depth))
      return false;
  }
  return true;
}

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

std::optional<double> known(double v) { return v; }
std::optional<double> known(const std::optional<double>& v) { return v; }

// Each counter of the runs' `member` summed over `ok`, per `unit` of the
// runs' `amount`. A counter that is null in any run is left out:
// unreadable, not zero. Kvmmio's counters add vmm_irqs (injected +
// relayed).
template <class Counters>
std::optional<std::map<std::string, double>> rates(const char* amount, long double unit,
                                                   const std::vector<const Run*>& ok,
                                                   const std::optional<Counters> Run::*member) {
  if (!amount || ok.empty()) return std::nullopt;
  std::map<std::string, uint64_t> sum;
  std::set<std::string> unreadable;
  uint64_t total = 0;
  for (const Run* r : ok) {
    // One run without counters would make the sums lie about the rest.
    if (!(r->*member)) return std::nullopt;
    for (const auto& [name, v] : *(r->*member)) {
      if (const std::optional<double> x = known(v))
        sum[name] += static_cast<uint64_t>(*x);
      else
        unreadable.insert(name);
    }
    total += static_cast<uint64_t>(r->values.at(amount));
  }
  if (total == 0) return std::nullopt;
  if constexpr (std::is_same_v<Counters, decltype(Run::counters)::value_type>)
    sum["vmm_irqs"] = sum["injected"] + sum["relayed"];
  std::map<std::string, double> out;
  for (const auto& [name, count] : sum)
    if (!unreadable.count(name)) out[name] = *per_unit(count, total, unit);
  return out;
}

// The VMM's CPU time over the completed runs `ok` per their seconds, as a
// percentage of one core; unset unless every one has both.
std::optional<double> core_pct(const std::vector<const Run*>& ok) {
  if (ok.empty()) return std::nullopt;
  double ms = 0, seconds = 0;
  for (const Run* r : ok) {
    if (!r->outside) return std::nullopt;
    const auto cpu = r->outside->find("vmm_cpu_ms");
    const auto s = r->values.find("seconds");
    if (cpu == r->outside->end() || !cpu->second || s == r->values.end()) return std::nullopt;
    ms += *cpu->second;
    seconds += s->second;
  }
  if (seconds <= 0) return std::nullopt;
  return ms / (seconds * 1000) * 100;
}

// A run as its last attempt, with the earlier ones (the reader made sure
// they failed), by attempt.
struct Judged {
  const Run* last;
  std::vector<const Run*> earlier;
};

// Every run as its last attempt, in that attempt's input order: a run
// tried again counts once, by how its last attempt went, so a failure that
// a retry made good is not a failed run.
std::vector<Judged> last_attempts(const RawData& raw) {
  using Id = decltype(run_identity(Run()));
  const auto id = [](const Run& r) { return run_identity(r); };
  std::map<Id, const Run*> last;
  for (const Run& r : raw.runs) {
    const Run*& l = last[id(r)];
    if (!l || r.attempt > l->attempt) l = &r;
  }
  std::vector<Judged> out;
  std::map<const Run*, size_t> index;
  for (const Run& r : raw.runs)
    if (last.at(id(r)) == &r) {
      index[&r] = out.size();
      out.push_back({&r, {}});
    }
  for (const Run& r : raw.runs)
    if (const Run* l = last.at(id(r)); l != &r) out[index.at(l)].earlier.push_back(&r);
  for (Judged& j : out)
    std::sort(j.earlier.begin(), j.earlier.end(), [](const Run* a, const Run* b) { return a->attempt < b->attempt; });
  return out;
}

Cell make_cell(const std::vector<const Run*>& runs) {
  const Run& first = *runs.front();
  const KindSpec& kind = *find_kind(first.kind);
  Cell c;
  c.kind = first.kind;
  c.config = first.config;
  c.params = first.params;
  std::vector<const Run*> ok;
  std::map<std::string, std::vector<double>> values;
  for (const Run* r : runs) {
    if (r->attempt > 1) ++c.retries;
    if (r->failed) {
      ++c.runs_failed;
      continue;
    }
    ok.push_back(r);
    for (const auto& [name, v] : r->values) {
      values[name].push_back(v);
      c.sums[name] += v;
    }
  }
  c.runs_ok = static_cast<unsigned>(ok.size());
  for (const auto& [name, v] : values) c.values[name] = range_of(v);
  c.rates = rates(kind.amount, kind.unit, ok, &Run::counters);
  c.rates2 = rates(kind.amount2, kind.unit2, ok, &Run::counters);
  c.outside_rates = rates(kind.amount, kind.unit, ok, &Run::outside);
  c.outside_rates2 = rates(kind.amount2, kind.unit2, ok, &Run::outside);
  c.vmm_cpu_core_pct = core_pct(ok);
  return c;
}

}  // namespace

Range Cell::range(const std::string& name) const {
  const auto it = values.find(name);
  return it == values.end() ? Range{} : it->second;
}

std::optional<double> Cell::median(const std::string& name, double scale) const {
  const std::optional<double> m = range(name).median;
  if (!m) return std::nullopt;
  return *m / scale;
}

double Cell::sum(const std::string& name) const {
  const auto it = sums.find(name);
  return it == sums.end() ? 0 : it->second;
}

std::optional<double> Cell::rate(const std::string& name) const {
  if (!rates) return std::nullopt;
  return rates->at(name);
}

std::optional<double> Cell::rate2(const std::string& name) const {
  if (!rates2) return std::nullopt;
  return rates2->at(name);
}

std::optional<double> Cell::outside_rate(const std::string& name) const {
  if (!outside_rates) return std::nullopt;
  const auto it = outside_rates->find(name);
  return it == outside_rates->end() ? std::nullopt : std::optional<double>(it->second);
}

std::optional<double> Cell::outside_rate2(const std::string& name) const {
  if (!outside_rates2) return std::nullopt;
  const auto it = outside_rates2->find(name);
  return it == outside_rates2->end() ? std::nullopt : std::optional<double>(it->second);
}

bool Cell::same_measurement(const Cell& o) const {
  return kind == o.kind && params == o.params && guest_to_guest(config) == guest_to_guest(o.config);
}

std::vector<Cell> Report::of_kind(std::string_view kind) const {
  std::vector<Cell> out;
  for (const Cell& c : cells)
    if (c.kind == kind) out.push_back(c);
  return out;
}

Report aggregate(const RawData& raw) {
  const std::vector<std::string> order = config_order(raw);
  const auto rank = [&](const std::string& c) { return std::find(order.begin(), order.end(), c) - order.begin(); };
  Report rep;
  for (const MetaEntry& m : raw.meta) rep.meta.emplace_back(m.key, m.value);
  for (const std::string& c : order)
    if (std::any_of(raw.runs.begin(), raw.runs.end(), [&](const Run& r) { return r.config == c; }))
      rep.configs.push_back(c);

  using Key = std::tuple<size_t, decltype(Params().key()), ptrdiff_t>;
  const auto cell_key = [&](const Run& r) { return Key{kind_rank(r.kind), r.params.key(), rank(r.config)}; };
  const std::vector<Judged> judged = last_attempts(raw);
  std::map<Key, std::vector<const Run*>> groups;
  for (const Judged& j : judged)
    if (complete(*j.last)) groups[cell_key(*j.last)].push_back(j.last);
  for (const auto& [key, runs] : groups) rep.cells.push_back(make_cell(runs));

  for (Cell& c : rep.cells) {
    const std::string headline = find_kind(c.kind)->headline;
    for (const Cell& b : rep.cells) {
      if (!b.same_measurement(c)) continue;
      if (b.config == kHostConfig) c.ratio_to_host = ratio(c.median(headline), b.median(headline));
      if (b.config == kUserTrapConfig) c.ratio_to_user_trap = ratio(c.median(headline), b.median(headline));
      if (b.config == kPeerConfig && c.config != kPeerConfig) {
        c.ratio_to_peer = ratio(c.median(headline), b.median(headline));
        if (c.kind == "rr") c.p99_ratio_to_peer = ratio(c.median("p99_us"), b.median("p99_us"));
      }
    }
  }
  for (const Judged& j : judged)
    if (j.last->failed) rep.failures.push_back(*j.last);
  std::stable_sort(rep.failures.begin(), rep.failures.end(),
                   [](const Run& a, const Run& b) { return kind_rank(a.kind) < kind_rank(b.kind); });
  for (const Judged& j : judged) {
    if (j.last->attempt == 1) continue;
    Retried& t = rep.retried.emplace_back(Retried{*j.last, {}});
    for (const Run* e : j.earlier) t.earlier.push_back(*e);
  }
  // Beside the cells they count in, so that a cell's retries read together.
  std::stable_sort(rep.retried.begin(), rep.retried.end(),
                   [&](const Retried& a, const Retried& b) { return cell_key(a.run) < cell_key(b.run); });
  for (const MicroResult& m : raw.micro) {
    const auto us = [&](const char* name) -> std::optional<double> {
      for (const auto& [k, v] : m.us)
        if (k == name) return v;
      return std::nullopt;
    };
    rep.micro.push_back({m, ratio(us("mmio_exit"), us("ioeventfd")), ratio(us("irq_line_relay"), us("irqfd"))});
  }
  return rep;
}

}  // namespace kvmmio::report
