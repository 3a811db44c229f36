// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's two performance claims, judged on one run's report so that the
// run that measures them also says whether they held (docs/benchmarks.md,
// "The claims"):
//   peer   the register mirror (vhost-irqfd-mirror) at or ahead of the peer
//          VMM's best path (qemu-pci) in every network cell both have:
//          iperf3 both ways, tcp_rr p50 and p99, udp_pps both ways;
//   modes  the mirror at or ahead of every other kvmmio guest mode at
//          64-byte packets both ways and in tcp_rr p99,
// and the mirror's own VMM asleep through its packet-rate runs. Medians
// decide; a verdict is "clear" only when both configs have 3 or more
// completed runs and their ranges (lowest to highest) do not overlap.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/report/report.h"

namespace kvmmio::report {

inline constexpr const char* kMirrorConfig = "vhost-irqfd-mirror";
inline constexpr unsigned kClearRuns = 3;  // runs each side needs for a clear verdict

// One cell of one claim: the mirror's median against its rival's.
struct Verdict {
  std::string cell;    // "iperf3 g2h 1x MTU 1500", "tcp_rr p99 MTU 1500", "udp 64 B g2h MTU 1500"
  std::string rival;   // the config compared with (modes: the best of the others)
  std::string unit;    // "Gbit/s", "us" or "pkt/s"
  double mirror = 0;   // medians, in unit
  double rival_median = 0;
  bool ahead = false;  // the mirror's median at or better than the rival's
  bool clear = false;  // both with kClearRuns runs or more, ranges apart
};

struct Claims {
  std::vector<Verdict> peer;   // empty without the mirror's and qemu-pci's cells
  std::vector<Verdict> modes;  // empty without the mirror and another kvmmio mode
  // Over the mirror's packet-rate runs: kvmmio's own count of VMM wake-ups
  // (vCPU exits to userspace + event-loop wake-ups) and the VMM threads'
  // context switches read from outside it. Unset where no run counted them.
  std::optional<double> mirror_wakeups;
  std::optional<double> mirror_ctxt_switches;
};

Claims judge_claims(const Report& report);

// How many of `v` are ahead, and how many are clear (either way).
unsigned ahead_count(const std::vector<Verdict>& v);
unsigned clear_count(const std::vector<Verdict>& v);

}  // namespace kvmmio::report
