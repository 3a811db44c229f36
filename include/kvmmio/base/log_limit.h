// SPDX-License-Identifier: BSD-2-Clause
// LogLimit: GuestErrorLog's printing rule (the first kBurst, then one in
// kEvery, all counted) for host-side messages that a guest can make repeat:
// a failure met at every activation repeats at the rate of the guest's
// resets, a device that needs a reset at the rate of its mistakes. A guest
// mistake itself goes to GuestErrorLog (log.h); what a LogLimit guards is
// about the host (a backend that cannot start, a notify fd KVM refused),
// so it is not counted as a guest error.
//
//   if (const uint64_t n = limit.next()) KVMMIO_LOG_WARN("... (#%llu)", ..., n);
#pragma once

#include <atomic>
#include <cstdint>

#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"

namespace kvmmio {

class KVMMIO_EXPORT LogLimit {
 public:
  // Counts one occurrence; returns its number if it is to be printed, else 0.
  uint64_t next() {
    const uint64_t n = count_.fetch_add(1, std::memory_order_relaxed) + 1;
    return n <= GuestErrorLog::kBurst || n % GuestErrorLog::kEvery == 0 ? n : 0;
  }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> count_{0};
};

}  // namespace kvmmio
