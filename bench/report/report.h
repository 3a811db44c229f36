// SPDX-License-Identifier: BSD-2-Clause
// The aggregated report that the renderers print: iperf cells, latency
// cells, microbenchmark platforms and the failed runs. aggregate() builds it
// from the raw records; docs/benchmarks.md documents every field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/report/records.h"

namespace kvmmio::report {

// Counter per GB received (1 GB = 1e9 bytes), summed over a cell's ok runs.
struct PerGb {
  double vcpu_exits = 0;
  double wakeups = 0;
  double vmm_irqs = 0;  // injected + relayed
  double injected = 0;
  double relayed = 0;
  double trapped = 0;
  double polled = 0;
  double guest_irqs = 0;
};

// The iperf runs of one (config, mtu, dir, streams).
struct IperfCell {
  std::string config;
  unsigned mtu = 0;
  Direction dir = Direction::kGuestToHost;
  unsigned streams = 0;
  unsigned runs_ok = 0;
  unsigned runs_failed = 0;
  // Unset when no run completed.
  std::optional<double> median_gbps, min_gbps, max_gbps;
  std::optional<double> spread_pct;          // (max - min) / median * 100
  std::optional<double> ratio_to_host;       // median / host median, same mtu, dir, streams
  std::optional<double> ratio_to_user_trap;  // median / user-trap median, same key
  uint64_t bytes = 0;                        // received, summed over ok runs
  std::optional<PerGb> per_gb;               // unset without counters (config=host)
};

// The request/response runs of one (config, mtu).
struct RrCell {
  std::string config;
  unsigned mtu = 0;
  unsigned runs_ok = 0;
  unsigned runs_failed = 0;
  std::optional<double> median_tps, median_p50_us, median_p90_us, median_p99_us;
  std::optional<double> p50_ratio_to_host;  // median p50 / host median p50, same mtu
};

struct MicroPlatform {
  MicroResult result;
  std::optional<double> mmio_exit_per_ioeventfd;  // us.mmio_exit / us.ioeventfd
  std::optional<double> irq_line_relay_per_irqfd;  // us.irq_line_relay / us.irqfd
};

// A run recorded with failed=REASON.
struct Failure {
  std::string kind;  // "iperf" or "rr"
  Source source;
  std::string config;
  unsigned mtu = 0;
  std::optional<Direction> dir;    // iperf only
  std::optional<unsigned> streams;  // iperf only
  unsigned rep = 0;
  std::string reason;
};

struct Report {
  std::vector<std::pair<std::string, std::string>> meta;
  std::vector<std::string> configs;  // every config with iperf or rr runs, display order
  std::vector<IperfCell> iperf;  // by mtu, dir, streams, then config order
  std::vector<RrCell> rr;        // by mtu, then config order
  std::vector<MicroPlatform> micro;  // in input order
  std::vector<Failure> failures;     // iperf, then rr, each in input order
};

// The configurations in display order; others follow in first-seen order.
inline constexpr const char* kKnownConfigs[] = {"host", "vhost-irqfd", "vhost-relay", "user-ioeventfd",
                                                "user-trap"};
inline constexpr const char* kHostConfig = "host";
inline constexpr const char* kUserTrapConfig = "user-trap";

Report aggregate(const RawData& raw);

}  // namespace kvmmio::report
