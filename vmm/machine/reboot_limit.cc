// SPDX-License-Identifier: BSD-2-Clause
// The bound on reboots in place (see the header).
#include "vmm/machine/reboot_limit.h"

namespace kvmmio::vmm {

bool RebootLimit::allow(Clock::time_point now) {
  while (!recent_.empty() && now - recent_.front() >= kWindow) recent_.pop_front();
  if (recent_.size() >= static_cast<size_t>(kMaxReboots)) return false;
  recent_.push_back(now);
  return true;
}

}  // namespace kvmmio::vmm
