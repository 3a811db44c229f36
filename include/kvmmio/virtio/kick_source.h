// Where a queue's kicks come from when they bypass MMIO exits: a KickSource
// hands out one eventfd per live queue that the guest's QueueNotify write of
// that queue's index signals (virtio 1.2 section 4.2.3.3 "Available Buffer
// Notifications"). On KVM that is an ioeventfd: 4 bytes at base + 0x50,
// datamatch = queue index. Tests substitute plain eventfds.
#pragma once

#include <cstdint>
#include <memory>

#include "kvmmio/ioeventfd.h"
#include "kvmmio/vm.h"

namespace kvmmio::virtio {

// One queue's kick eventfd; deregistered (and closed) on destruction.
class QueueKick {
 public:
  virtual ~QueueKick() = default;
  virtual int fd() const = 0;
};

class KickSource {
 public:
  virtual ~KickSource() = default;
  // An eventfd for 4-byte writes of `queue_index` to `notify_gpa`. Throws
  // (std::system_error) when it cannot; the transport then traps instead.
  virtual std::unique_ptr<QueueKick> attach(uint64_t notify_gpa, uint32_t queue_index) = 0;
};

// KVM ioeventfds.
class IoEventFdKickSource final : public KickSource {
 public:
  explicit IoEventFdKickSource(Vm& vm) : vm_(vm) {}
  std::unique_ptr<QueueKick> attach(uint64_t notify_gpa, uint32_t queue_index) override;

 private:
  Vm& vm_;
};

}  // namespace kvmmio::virtio
