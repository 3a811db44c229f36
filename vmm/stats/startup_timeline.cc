// SPDX-License-Identifier: BSD-2-Clause
// StartupTimeline (startup_timeline.h).
#include "vmm/stats/startup_timeline.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kvmmio::vmm {
namespace {

double to_ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace

int64_t boottime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::optional<int64_t> process_start_ns() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces and
  // parentheses itself: the fields after it start past the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  // Fields 3..21 (state .. itrealvalue), then 22: starttime.
  std::string field;
  for (int i = 3; i <= 21; ++i)
    if (!(rest >> field)) return std::nullopt;
  unsigned long long ticks = 0;
  if (!(rest >> ticks)) return std::nullopt;
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (hz <= 0) return std::nullopt;
  return static_cast<int64_t>(ticks / hz) * 1000000000 +
         static_cast<int64_t>(ticks % hz) * (1000000000 / hz);
}

StartupTimeline::StartupTimeline()
    : main_ns_(boottime_ns()), exec_ns_(process_start_ns()), phase_start_ns_(main_ns_) {}

void StartupTimeline::end_phase(std::string name) { record(std::move(name), /*last=*/false); }

void StartupTimeline::first_run() { record("first_run", /*last=*/true); }

void StartupTimeline::record(std::string name, bool last) {
  const int64_t now = boottime_ns();
  std::lock_guard lock(mutex_);
  if (ran_) return;  // after the first KVM_RUN nothing is start-up
  phases_.emplace_back(std::move(name), now - phase_start_ns_);
  phase_start_ns_ = now;
  ran_ = last;
}

StartupStats StartupTimeline::stats() const {
  StartupStats s;
  std::lock_guard lock(mutex_);
  // The start time has clock-tick resolution: an exec within the same tick
  // as main() reads as 0, never as negative.
  if (exec_ns_) s.exec_to_main_ms = to_ms(main_ns_ > *exec_ns_ ? main_ns_ - *exec_ns_ : 0);
  for (const auto& [name, ns] : phases_) s.phases_ms.emplace_back(name, to_ms(ns));
  if (ran_) s.to_first_run_ms = to_ms(phase_start_ns_ - std::min(exec_ns_.value_or(main_ns_), main_ns_));
  return s;
}

}  // namespace kvmmio::vmm
