// SPDX-License-Identifier: BSD-2-Clause
// The aggregated report that the renderers print: one cell type for the
// runs of every kind (iperf, rr, pps, ...), microbenchmark platforms and the
// failed runs. aggregate() builds it from the raw records;
// docs/benchmarks.md documents every field.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/report/records.h"

namespace kvmmio::report {

// Median, lowest, highest and spread ((max - min) / median * 100) of the
// completed runs' values; unset when no run has the value.
struct Range {
  std::optional<double> median, min, max, spread_pct;
};

// The runs of one kind, config and set of parameters.
struct Cell {
  std::string kind;
  std::string config;
  Params params;
  // Each run counted by its last attempt (records.h Run::attempt).
  unsigned runs_ok = 0;
  unsigned runs_failed = 0;
  unsigned retries = 0;  // of those runs, how many were tried more than once
  std::map<std::string, Range> values;  // each of the kind's values (and loss_pct)
  std::map<std::string, double> sums;   // each value summed over completed runs
  // Each counter summed over completed runs per the kind's unit of its
  // amount (per 1e9 bytes, per 1e6 datagrams), plus vmm_irqs (injected +
  // relayed). Unset when a completed run has no counters, when none
  // completed, or for a zero amount.
  std::optional<std::map<std::string, double>> rates;
  // Likewise per the kind's unit2 of its amount2 (fio: per 1e9 bytes).
  std::optional<std::map<std::string, double>> rates2;
  // The outside counters (kinds.h kOutsideNames) likewise, per unit of
  // amount (outside_rates) and per unit2 of amount2 (outside_rates2). A
  // counter null in any completed run is left out (unreadable, not zero);
  // unset when a completed run has no "outside", when none completed, or
  // for a zero amount.
  std::optional<std::map<std::string, double>> outside_rates;
  std::optional<std::map<std::string, double>> outside_rates2;
  // The VMM's own CPU time as a percentage of one host core: the outside
  // vmm_cpu_ms summed over completed runs / (their seconds summed * 1000)
  // * 100. Unset when a completed run has no "outside", no vmm_cpu_ms (null
  // or an older raw file) or no "seconds", when none completed, or for
  // zero seconds.
  std::optional<double> vmm_cpu_core_pct;
  std::optional<double> ratio_to_host;       // headline median / the host cell's, same kind and params
  std::optional<double> ratio_to_user_trap;  // likewise against user-trap
  // Likewise against the peer VMM's reference config (kPeerConfig), for
  // every config but that one; rr's headline is p50_us, and
  // p99_ratio_to_peer (rr only) is the p99_us medians' ratio.
  std::optional<double> ratio_to_peer;
  std::optional<double> p99_ratio_to_peer;
  // Value `name`'s range (all unset when no completed run has it), and its
  // median divided by `scale`.
  Range range(const std::string& name) const;
  std::optional<double> median(const std::string& name, double scale = 1) const;
  std::optional<double> rate(const std::string& name) const;
  std::optional<double> rate2(const std::string& name) const;
  // An outside counter's rate: unset without outside_rates or when the
  // counter was unreadable in some run.
  std::optional<double> outside_rate(const std::string& name) const;
  std::optional<double> outside_rate2(const std::string& name) const;
  double sum(const std::string& name) const;  // 0 when no completed run has it
  // Whether `o` measured the same thing (kind, parameters and topology),
  // whatever its config: the cells a ratio or a verdict compares.
  bool same_measurement(const Cell& o) const;
};

struct MicroPlatform {
  MicroResult result;
  std::optional<double> mmio_exit_per_ioeventfd;  // us.mmio_exit / us.ioeventfd
  std::optional<double> irq_line_relay_per_irqfd;  // us.irq_line_relay / us.irqfd
};

// A run tried more than once: its last attempt, which the cells and
// failures count it by, and the earlier ones (all failed), by attempt.
struct Retried {
  Run run;
  std::vector<Run> earlier;
};

struct Report {
  std::vector<std::pair<std::string, std::string>> meta;
  std::vector<std::string> configs;  // every config with runs, display order
  // By kind (kinds.h order), then params (Params::key), then config order.
  std::vector<Cell> cells;
  std::vector<MicroPlatform> micro;  // in input order
  std::vector<Run> failures;         // by kind, each in input order; last attempts only
  std::vector<Retried> retried;      // in cell order, each cell's in input order
  std::vector<Cell> of_kind(std::string_view kind) const;
};

// The configurations in display order; others follow in first-seen order.
// vhost-irqfd-mirror-poll (on request only) sits beside the mode it varies;
// the peer VMM, QEMU (virtio-net-pci with MSI-X, virtio-net-device on
// virtio-mmio, both with vhost), follows kvmmio's guest modes.
inline constexpr const char* kKnownConfigs[] = {"host",
                                                "vhost-irqfd",
                                                "vhost-irqfd-mirror",
                                                "vhost-irqfd-mirror-poll",
                                                "vhost-irqfd-mirror-mq",
                                                "vhost-relay",
                                                "user-ioeventfd",
                                                "user-trap",
                                                "qemu-pci",
                                                "qemu-pci-mq",
                                                "qemu-mmio"};
inline constexpr const char* kHostConfig = "host";
inline constexpr const char* kUserTrapConfig = "user-trap";
inline constexpr const char* kPeerConfig = "qemu-pci";

// A guest-to-guest config (net-compare.sh's g2g-MODE): its cells measure
// the path between two guests, not between a guest and its host. Only the
// config says so for tcp_rr, which has no direction, so it is part of a
// cell's identity.
inline bool guest_to_guest(std::string_view config) { return config.starts_with("g2g-"); }

Report aggregate(const RawData& raw);

}  // namespace kvmmio::report
