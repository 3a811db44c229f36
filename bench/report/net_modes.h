// SPDX-License-Identifier: BSD-2-Clause
// Who carries the traffic in each of kvmmio's virtio-net modes, as a rule
// over the VMM's counters (notifies trapped and polled, interrupts injected
// and relayed) and the guest's virtio interrupt count. One rule for every
// caller: the main job's verdict (check.cc) and, through `net_check
// misfit`, bench/net-modes.sh's net_mode_misfit, which the arm64
// platform's scenarios (net-modes, many-vms) call in L1. The modes' --net
// specs stay in bench/net-modes.sh; docs/virtio-mmio.md says why each mode
// counts what it does.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvmmio::report {

// A counter as it was given: the text said back in the message, and its
// value when that text is a whole number (a counter that could not be read
// arrives as an empty or odd word, and then fits no rule that looks at it).
struct ModeCounter {
  std::string text;
  std::optional<double> value;
  // From a command-line word: a whole number, optionally negative (a delta
  // of two snapshots can go down); anything else has no value.
  static ModeCounter parse(std::string_view word);
  // From a number the caller summed (format_number's text).
  static ModeCounter of(double value);
};

struct ModeCounters {
  ModeCounter trapped, polled, injected, relayed, guest_irqs;
};

// Why `counters` do not fit `mode`: "MODE: counters do not fit the mode:
// trapped T polled P injected I relayed R guest irqs G"; empty when they
// fit, and for a mode without a rule (the host, the peer VMM, the disk and
// vsock configs). The counters may be deltas over traffic or totals since
// boot: with queues=2 the control queue is the VMM's in every mode, so its
// totals fit only the modes with one queue pair, while deltas over traffic
// (the driver uses the control queue when it loads) fit the -mq modes too.
std::string net_mode_misfit(std::string_view mode, const ModeCounters& counters);

// A number as jq prints it, which the shell checks' messages showed: whole
// numbers without a fraction or exponent.
std::string format_number(double x);

}  // namespace kvmmio::report
