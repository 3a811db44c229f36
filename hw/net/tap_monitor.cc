// SPDX-License-Identifier: BSD-2-Clause
// TapMonitor: rtnetlink link notifications, turned into up/down/removed/
// appeared events for one interface name.
#include "kvmmio/net/tap_monitor.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "tap_link_filter.h"

namespace kvmmio::net {
namespace {

// ifindex and IFF_UP of interface `name`; ifindex 0 when there is none.
struct LinkState {
  int ifindex = 0;
  bool up = false;
};

LinkState look_up(int sock, const std::string& name) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(sock, SIOCGIFINDEX, &ifr) != 0) return {};
  LinkState s{ifr.ifr_ifindex, false};
  if (::ioctl(sock, SIOCGIFFLAGS, &ifr) == 0) s.up = (ifr.ifr_flags & IFF_UP) != 0;
  return s;
}

}  // namespace

const char* TapMonitor::to_string(Event e) {
  switch (e) {
    case Event::kDown: return "down";
    case Event::kUp: return "up";
    case Event::kRemoved: return "removed";
    case Event::kAppeared: return "appeared";
  }
  return "?";
}

TapMonitor::TapMonitor(EventLoop& loop, DeviceLock& lock, std::string name,
                       std::function<void(Event)> on_event)
    : name_(std::move(name)), on_event_(std::move(on_event)) {
  socket_ = UniqueFd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
  if (!socket_) throw_errno("rtnetlink socket");
  // Filtered before it subscribes, for any interface: until the filter
  // narrows to the one found, nothing about that name can be dropped.
  refilter();
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = RTMGRP_LINK;
  if (::bind(socket_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw_errno("bind rtnetlink socket to RTMGRP_LINK");
  // Subscribed first, then looked at: a change in between is seen twice at
  // worst, never missed. Then the filter follows what was found, and the
  // interface is looked at again (see resync()); nothing is reported yet.
  do {
    const LinkState s = look_up(socket_.get(), name_);
    ifindex_ = s.ifindex;
    up_ = s.up;
  } while (refilter());
  retry_timer_ = UniqueFd(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!retry_timer_) throw_errno("timerfd_create");
  watch_ = lock.watch(loop, socket_.get(), [this] { on_readable(); });
  retry_watch_ = lock.watch(loop, retry_timer_.get(), [this] { on_retry(); });
}

void TapMonitor::retry_appeared(std::chrono::milliseconds delay) {
  itimerspec when{};
  when.it_value.tv_sec = delay.count() / 1000;
  when.it_value.tv_nsec = (delay.count() % 1000) * 1000000;
  if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;  // 0 disarms
  ::timerfd_settime(retry_timer_.get(), 0, &when, nullptr);
}

void TapMonitor::on_retry() {
  uint64_t expirations = 0;
  if (::read(retry_timer_.get(), &expirations, sizeof(expirations)) != sizeof(expirations)) return;
  const LinkState s = look_up(socket_.get(), name_);
  if (ifindex_ != 0 && s.ifindex == ifindex_) on_event_(Event::kAppeared);
}

void TapMonitor::on_readable() {
  // Drain everything queued; the content does not matter (see the header),
  // only that the link table changed. ENOBUFS (notifications were lost
  // because the socket overflowed) means the same: look again.
  alignas(nlmsghdr) char buf[8192];
  for (;;) {
    const ssize_t n = ::recv(socket_.get(), buf, sizeof(buf), 0);
    if (n > 0) messages_.fetch_add(1, std::memory_order_relaxed);  // one per datagram
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != ENOBUFS) break;  // EAGAIN: drained
  }
  resync();
}

void TapMonitor::resync() {
  // While the filter changes, look again: a change made between the look
  // and the new filter may have been dropped by the old one (the tap
  // re-created under a filter for its old index, say).
  do {
    const LinkState s = look_up(socket_.get(), name_);
    if (ifindex_ != 0 && s.ifindex != ifindex_) {
      ifindex_ = 0;
      up_ = false;
      on_event_(Event::kRemoved);
    }
    if (ifindex_ == 0 && s.ifindex != 0) {
      ifindex_ = s.ifindex;
      up_ = s.up;
      on_event_(Event::kAppeared);
    } else if (ifindex_ != 0 && s.up != up_) {
      up_ = s.up;
      on_event_(s.up ? Event::kUp : Event::kDown);
    }
  } while (refilter());
}

bool TapMonitor::refilter() {
  if (filter_ == ifindex_ || filter_failed_) return false;
  const std::vector<sock_filter> program = tap_link_filter(ifindex_);
  const sock_fprog fprog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
  // Replaces the previous filter at once: no moment without one.
  if (::setsockopt(socket_.get(), SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog)) == 0) {
    filter_ = ifindex_;
    return true;
  }
  // Correct without a filter, only woken more often: go on unfiltered for
  // good (a retry on each wake-up could fail each time).
  KVMMIO_LOG_WARN("net %s: the tap monitor's netlink socket takes no filter (%s): every link change "
                  "on the host wakes it", name_.c_str(), std::strerror(errno));
  filter_failed_ = true;
  if (filter_ == kUnfiltered) return false;
  ::setsockopt(socket_.get(), SOL_SOCKET, SO_DETACH_FILTER, nullptr, 0);
  filter_ = kUnfiltered;
  return true;  // the old filter may have dropped what now matters
}

}  // namespace kvmmio::net
