// SPDX-License-Identifier: BSD-2-Clause
// The measuring run kinds as data: what a record of each must carry and
// how its cells are summarised. A later kind is one more entry here (and
// its table in the renderers).
#pragma once

#include <string_view>
#include <vector>

namespace kvmmio::report {

struct KindSpec {
  const char* name;
  std::vector<const char*> params;  // required: of mtu, payload, dir, streams, rw, bs, depth
  std::vector<const char*> values;  // required numbers of a completed run
  const char* headline;             // the value the baseline ratios compare
  // The counters are given per `unit` of this value, summed (null: the
  // kind carries no counters).
  const char* amount;
  long double unit;
  // A second denominator (null: none): fio's counters per GB as well as per
  // million requests.
  const char* amount2 = nullptr;
  long double unit2 = 0;
};

inline const std::vector<KindSpec>& kinds() {
  static const std::vector<KindSpec> k = {
      {"iperf", {"mtu", "dir", "streams"}, {"bytes", "seconds", "bps"}, "bps", "bytes", 1e9L},
      {"rr", {"mtu"}, {"transactions", "seconds", "tps", "p50_us", "p90_us", "p99_us"}, "p50_us", nullptr, 0},
      {"pps", {"mtu", "payload", "dir"}, {"sent", "received", "lost", "seconds", "pps"}, "pps", "received", 1e6L},
      // bytes and ios: the requests' bytes and count (fio's io_bytes and
      // total_ios of the side it measured), bw_bps bytes per second.
      {"fio", {"rw", "bs", "depth"}, {"bytes", "ios", "seconds", "iops", "bw_bps"}, "iops", "ios", 1e6L, "bytes", 1e9L},
      // AF_VSOCK stream throughput between host and guest (config host: the
      // host's own vsock loopback, the baseline); bytes, seconds and bps
      // are the receiver's, as iperf's.
      {"vsock", {"dir"}, {"bytes", "seconds", "bps"}, "bps", "bytes", 1e9L},
  };
  return k;
}

// The kind's entry, or null for an unknown one.
inline const KindSpec* find_kind(std::string_view name) {
  for (const KindSpec& k : kinds())
    if (name == k.name) return &k;
  return nullptr;
}

// The VMM counters a guest run carries, all of them or none.
inline constexpr const char* kCounterNames[] = {"vcpu_exits", "wakeups", "injected", "relayed",
                                                "trapped",    "polled",  "guest_irqs"};

// The counters that need no VMM's cooperation, all of them or none; each
// a number or null (unreadable there, not zero). The first six are read
// from outside any VMM (bench/outside-counters.sh), guest_irqs from inside
// the guest (its virtio interrupts, through its serve hook). vmm_cpu_ms is
// the VMM's own threads' CPU time in milliseconds.
inline constexpr const char* kOutsideNames[] = {"kvm_exits",         "kvm_mmio_exit_user", "kvm_mmio_exit_kernel",
                                                "kvm_halt_wakeup",   "vmm_ctxt_switches",  "vmm_cpu_ms",
                                                "guest_irqs"};
// Those of kOutsideNames added after raw files were first written: a
// record without one is read as if it were null (not read), so older raw
// files still render; the others are required.
inline constexpr const char* kOutsideLaterNames[] = {"vmm_cpu_ms"};

}  // namespace kvmmio::report
