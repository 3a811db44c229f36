// SPDX-License-Identifier: BSD-2-Clause
// FakeNotifyFds: stands in for KVM's ioeventfds in tests without /dev/kvm.
// attach() hands out plain eventfds and records where KVM would have matched
// (address, datamatch); a test "is the guest" by signalling them. A second
// fd for one queue while the first is assigned throws, as KVM's EEXIST.
#pragma once

#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/virtio/notify_fd_source.h"

namespace kvmmio::virtio::test {

class FakeNotifyFds final : public NotifyFdSource {
 public:
  struct Assigned {
    uint64_t address;
    int fd;
  };

  std::unique_ptr<QueueNotifyFd> attach(uint64_t notify_gpa, uint32_t queue_index) override {
    if (fail_) throw std::runtime_error("fake: ioeventfd unavailable");
    return std::make_unique<Fd>(*this, notify_gpa, queue_index);
  }

  // The eventfd of `queue`'s notify fd, if one is assigned now.
  std::optional<Assigned> assigned(uint32_t queue) const {
    std::lock_guard lock(mutex_);
    auto it = live_.find(queue);
    if (it == live_.end()) return std::nullopt;
    return it->second;
  }
  // What the guest's matching QueueNotify store would do.
  bool guest_notify(uint32_t queue) const {
    auto a = assigned(queue);
    if (!a) return false;
    const uint64_t one = 1;
    return ::write(a->fd, &one, sizeof(one)) == sizeof(one);
  }
  size_t live() const {
    std::lock_guard lock(mutex_);
    return live_.size();
  }
  uint64_t attaches() const { return attaches_; }
  void set_failing(bool fail) { fail_ = fail; }

 private:
  class Fd final : public QueueNotifyFd {
   public:
    Fd(FakeNotifyFds& source, uint64_t address, uint32_t queue) : source_(source), queue_(queue) {
      std::lock_guard lock(source.mutex_);
      if (!source.live_.emplace(queue, Assigned{address, event_.fd()}).second)
        throw std::logic_error("fake: two notify fds for one queue (KVM would say EEXIST)");
      ++source.attaches_;
    }
    ~Fd() override {
      std::lock_guard lock(source_.mutex_);
      source_.live_.erase(queue_);
    }
    int fd() const override { return event_.fd(); }

   private:
    FakeNotifyFds& source_;
    uint32_t queue_;
    EventFd event_;
  };

  mutable std::mutex mutex_;
  std::map<uint32_t, Assigned> live_;
  uint64_t attaches_ = 0;
  bool fail_ = false;
};

}  // namespace kvmmio::virtio::test
