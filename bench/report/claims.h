// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's two performance claims, judged on one run's report so that the
// run that measures them also says whether they held (docs/benchmarks.md,
// "The claims"):
//   peer   the register mirror (vhost-irqfd-mirror) at or ahead of the peer
//          VMM's best path (qemu-pci) in every network cell either has:
//          iperf3 both ways, tcp_rr p50 and p99, udp_pps both ways;
//   modes  the mirror at or ahead of every other kvmmio guest mode at
//          64-byte packets both ways and in tcp_rr p99,
// and the mirror's own VMM asleep through its packet-rate runs. Medians
// decide ahead or behind; a verdict is "clear" only when both configs have
// 3 or more completed runs and their ranges (lowest to highest) do not
// overlap. A claim HOLDS only when every cell it names has a verdict
// against every rival and every verdict is clearly ahead; it DOES NOT HOLD
// when a verdict is clearly behind; otherwise it is NOT SHOWN.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/report/report.h"

namespace kvmmio::report {

inline constexpr const char* kMirrorConfig = "vhost-irqfd-mirror";
inline constexpr unsigned kClearRuns = 3;  // runs each side needs for a clear verdict

// One config's completed runs of a verdict's cell, in the verdict's unit.
struct Side {
  double median = 0, min = 0, max = 0;
  unsigned runs = 0;
};

// One cell of one claim: the mirror's runs against one rival's.
struct Verdict {
  std::string cell;   // "iperf3 g2h 1x MTU 1500", "tcp_rr p99 MTU 1500", "udp 64 B g2h MTU 1500"
  std::string rival;  // the config compared with
  std::string unit;   // "Gbit/s", "us" or "pkt/s"
  Side mirror, other;
  bool ahead = false;  // the mirror's median at or better than the rival's
  bool enough = false;  // both with kClearRuns runs or more
  bool apart = false;   // the ranges do not overlap
  bool clear() const { return enough && apart; }
};

// A cell the claim names that one side (or both) has no median in: not
// measured, or every run of it failed.
struct Missing {
  std::string cell;
  std::string rival;
  std::vector<std::string> without;  // the configs with no median there
};

enum class Outcome { kHolds, kNotShown, kDoesNotHold };

struct Claim {
  std::vector<Verdict> verdicts;  // in the report's cell order, each cell's rivals in config order
  std::vector<Missing> missing;   // likewise
  // Judged when the run has both the mirror and a rival (any of their
  // runs, failed ones too); otherwise the claim says nothing.
  bool judged() const { return !verdicts.empty() || !missing.empty(); }
  Outcome outcome() const;
};

struct Claims {
  Claim peer;
  Claim modes;
  // Over the mirror's packet-rate runs: kvmmio's own count of VMM wake-ups
  // (vCPU exits to userspace + event-loop wake-ups) and the VMM threads'
  // context switches read from outside it. Unset where no run counted them.
  std::optional<double> mirror_wakeups;
  std::optional<double> mirror_ctxt_switches;
};

Claims judge_claims(const Report& report);

// "holds", "not shown" or "does not hold".
const char* outcome_name(Outcome o);

// Why `v` is not clear: "ranges overlap" or "fewer than 3 runs"; "" when
// it is.
std::string why_not_clear(const Verdict& v);

// How many of `v` are ahead, and how many are clear (either way).
unsigned ahead_count(const std::vector<Verdict>& v);
unsigned clear_count(const std::vector<Verdict>& v);

}  // namespace kvmmio::report
