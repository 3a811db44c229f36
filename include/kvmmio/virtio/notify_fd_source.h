// SPDX-License-Identifier: BSD-2-Clause
// Where a queue's notifies arrive when they bypass MMIO exits: a NotifyFdSource
// hands out one eventfd per queue, which the transport asks for once as it
// is built and keeps until it goes, that the guest's QueueNotify write of
// that queue's index signals (virtio 1.2 section 4.2.3.3 "Available Buffer
// Notifications"). On KVM that is an ioeventfd: 4 bytes at base + 0x50,
// datamatch = queue index. Tests substitute plain eventfds.
#pragma once

#include <cstdint>
#include <memory>

#include "kvmmio/base/export.h"
#include "kvmmio/ioeventfd.h"
#include "kvmmio/vm.h"

namespace kvmmio::virtio {

// One queue's notify fd; deregistered (and closed) on destruction.
class KVMMIO_EXPORT QueueNotifyFd {
 public:
  virtual ~QueueNotifyFd() = default;
  virtual int fd() const = 0;
};

class KVMMIO_EXPORT NotifyFdSource {
 public:
  virtual ~NotifyFdSource() = default;
  // An eventfd for 4-byte writes of `queue_index` to `notify_gpa`. Throws
  // (std::system_error) when it cannot; the transport then traps instead.
  virtual std::unique_ptr<QueueNotifyFd> attach(uint64_t notify_gpa, uint32_t queue_index) = 0;
};

// KVM ioeventfds.
class KVMMIO_EXPORT IoEventFdSource final : public NotifyFdSource {
 public:
  explicit IoEventFdSource(Vm& vm) : vm_(vm) {}
  std::unique_ptr<QueueNotifyFd> attach(uint64_t notify_gpa, uint32_t queue_index) override;

 private:
  Vm& vm_;
};

}  // namespace kvmmio::virtio
