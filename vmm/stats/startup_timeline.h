// SPDX-License-Identifier: BSD-2-Clause
// StartupTimeline: where kvmmio's start-up time goes, from the exec of the
// process to vCPU 0's first KVM_RUN (--stats "startup_ms";
// docs/usage.md, "Statistics"). A VMM's start-up is a cost paid per VM,
// and a slow phase is found by its name, not guessed at.
//
//   StartupTimeline t;          // at main(): the first phase starts
//   t.end_phase("setup");       // each phase ends where the next begins
//   ...
//   t.first_run();              // vCPU 0, just before its first KVM_RUN
//   StartupStats s = t.stats(); // from any thread, at any time
//
// The exec itself is read from /proc/self/stat (its start time, in clock
// ticks since boot: 10 ms steps where USER_HZ is 100) against
// CLOCK_BOOTTIME; the phases are CLOCK_BOOTTIME readings, to the
// nanosecond. Phases are short strings chosen by kvmmio, a handful per
// process: nothing here grows with what a guest does.
#ifndef KVMMIO_VMM_STARTUP_TIMELINE_H_
#define KVMMIO_VMM_STARTUP_TIMELINE_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvmmio::vmm {

struct StartupStats {
  // From the exec to main(): the dynamic loader (if any), static
  // constructors, and the scheduler's delay. Absent where /proc is.
  std::optional<double> exec_to_main_ms;
  // Each phase's length, in the order the phases ran.
  std::vector<std::pair<std::string, double>> phases_ms;
  // From the exec (or main(), without /proc) to vCPU 0's first KVM_RUN;
  // absent until the guest started.
  std::optional<double> to_first_run_ms;
};

class StartupTimeline {
 public:
  StartupTimeline();
  StartupTimeline(const StartupTimeline&) = delete;
  StartupTimeline& operator=(const StartupTimeline&) = delete;

  // Ends the running phase under NAME; the next one starts now.
  void end_phase(std::string name);
  // vCPU 0 is about to enter the guest: ends the last phase, "first_run"
  // (the vCPU threads' start). Only the first call counts.
  void first_run();
  StartupStats stats() const;

 private:
  void record(std::string name, bool last);

  const int64_t main_ns_;                 // CLOCK_BOOTTIME at construction
  const std::optional<int64_t> exec_ns_;  // the process's start, same clock
  mutable std::mutex mutex_;
  int64_t phase_start_ns_;
  std::vector<std::pair<std::string, int64_t>> phases_;  // name, length in ns
  bool ran_ = false;                                     // first_run() was called
};

// CLOCK_BOOTTIME now, in nanoseconds.
int64_t boottime_ns();
// This process's start (its exec), CLOCK_BOOTTIME in nanoseconds, from
// /proc/self/stat's starttime; nullopt when /proc cannot be read.
std::optional<int64_t> process_start_ns();

}  // namespace kvmmio::vmm

#endif  // KVMMIO_VMM_STARTUP_TIMELINE_H_
