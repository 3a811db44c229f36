// SPDX-License-Identifier: BSD-2-Clause
// EventFd: an owned eventfd(2), the currency of ioeventfd, irqfd and vhost.
#pragma once

#include <cstdint>
#include <optional>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

class KVMMIO_EXPORT EventFd {
 public:
  // Non-blocking and close-on-exec unless told otherwise.
  explicit EventFd(bool nonblocking = true);

  int fd() const { return fd_.get(); }

  // Adds n to the counter (wakes whoever waits on it).
  void signal(uint64_t n = 1);
  // Reads and clears the counter; nullopt when it is zero (non-blocking fd).
  std::optional<uint64_t> take();
  // Waits up to timeout_ms for the counter to become non-zero; true if it did.
  bool wait_readable(int timeout_ms) const;

 private:
  UniqueFd fd_;
};

}  // namespace kvmmio
