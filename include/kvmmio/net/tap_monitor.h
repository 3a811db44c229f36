// SPDX-License-Identifier: BSD-2-Clause
// TapMonitor: what happens to a tap interface on the host while a guest
// uses it: brought down or up (`ip link set NAME down`), removed (`ip link
// del NAME`), or an interface of that name created again. Owns an rtnetlink
// socket subscribed to link notifications (RTMGRP_LINK), watched on the
// EventLoop; callbacks run on the loop thread holding the device's lock, so
// the monitor may be destroyed under that lock (DeviceLock::Watch).
//
// Notifications only say "something about some link changed": on each one
// the monitor looks the interface up by name (ifindex and IFF_UP, two
// ioctls) and reports the difference from what it saw last. A different
// ifindex under the same name is a new interface: removed, then appeared.
//
// A socket filter keeps the host's other link messages out: only the
// generic link messages (family AF_UNSPEC) about the interface's own
// ifindex reach the monitor, or about any interface while none of that
// name exists. So other interfaces coming and going, and bridge or IPv6
// details of this one, do not wake the event loop. Each change of filter
// is followed by another look, as the subscription is.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::net {

class KVMMIO_EXPORT TapMonitor {
 public:
  enum class Event {
    kDown,      // the interface went down (IFF_UP cleared)
    kUp,        // it came back up
    kRemoved,   // it is gone: the tap fds are detached, reads and writes fail
    kAppeared,  // an interface of this name exists again (maybe not a tap)
  };
  static const char* to_string(Event e);

  // Starts watching interface `name`. Throws std::system_error if the
  // netlink socket cannot be had.
  TapMonitor(EventLoop& loop, DeviceLock& lock, std::string name, std::function<void(Event)> on_event);
  ~TapMonitor() = default;  // the watch goes first (declared last)
  TapMonitor(const TapMonitor&) = delete;
  TapMonitor& operator=(const TapMonitor&) = delete;

  // The consumer could not use the interface kAppeared reported: report
  // kAppeared again after `delay` if that interface is still there. (Its
  // creator may still hold it: TUNSETIFF on a single-queue tap answers
  // EBUSY until `ip tuntap add` has closed its own fd.)
  void retry_appeared(std::chrono::milliseconds delay);

  // What the monitor last saw.
  bool present() const { return ifindex_ != 0; }
  bool up() const { return up_; }
  // Netlink messages the filter let through so far (any thread may ask).
  uint64_t messages() const { return messages_.load(std::memory_order_relaxed); }

 private:
  void on_readable();
  void on_retry();
  void resync();
  // The filter made to follow ifindex_; true if it changed (look again).
  bool refilter();

  static constexpr int kUnfiltered = -1;

  std::string name_;
  std::function<void(Event)> on_event_;
  UniqueFd socket_;
  UniqueFd retry_timer_;  // one-shot timerfd for retry_appeared()
  int ifindex_ = 0;  // 0: no interface of that name
  bool up_ = false;
  int filter_ = kUnfiltered;  // the ifindex the socket's filter passes (0: any)
  bool filter_failed_ = false;  // SO_ATTACH_FILTER refused: unfiltered from then on
  std::atomic<uint64_t> messages_{0};
  DeviceLock::Watch watch_, retry_watch_;
};

}  // namespace kvmmio::net
