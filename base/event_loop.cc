// SPDX-License-Identifier: BSD-2-Clause
// EventLoop: an epoll thread dispatching readable (or writable) fds to callbacks, with
// registrations that can be dropped safely while callbacks run.
#include "kvmmio/base/event_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/thread_name.h"

namespace kvmmio {

EventLoop::Registration::Registration(Registration&& other) noexcept
    : loop_(std::exchange(other.loop_, nullptr)), id_(other.id_) {}

EventLoop::Registration& EventLoop::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    if (loop_) loop_->remove(id_);
    loop_ = std::exchange(other.loop_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

EventLoop::Registration::~Registration() {
  if (loop_) loop_->remove(id_);
}

EventLoop::EventLoop(std::string_view thread_name) : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_) throw_errno("epoll_create1");
  for (const auto& [fd, id] : {std::pair{stop_.fd(), kStopId}, std::pair{flush_.fd(), kFlushId}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
      throw_errno("epoll_ctl add (event loop stop or flush fd)");
  }
  thread_ = std::thread([this, name = std::string(thread_name)] {
    name_this_thread(name);
    run();
  });
}

EventLoop::~EventLoop() {
  stop_.signal();
  thread_.join();
}

EventLoop::Registration EventLoop::watch(int fd, std::function<void()> on_readable) {
  auto w = std::make_shared<Watch>();
  w->is_eventfd = false;
  w->events = EPOLLIN;
  w->on_readable = std::move(on_readable);
  return add(fd, std::move(w));
}

EventLoop::Registration EventLoop::watch_writable(int fd, std::function<void()> on_writable) {
  auto w = std::make_shared<Watch>();
  w->is_eventfd = false;
  w->events = EPOLLOUT;
  w->on_readable = std::move(on_writable);
  return add(fd, std::move(w));
}

EventLoop::Registration EventLoop::watch_eventfd(int fd, std::function<void(uint64_t)> on_signal) {
  auto w = std::make_shared<Watch>();
  w->is_eventfd = true;
  w->events = EPOLLIN;
  w->on_signal = std::move(on_signal);
  return add(fd, std::move(w));
}

EventLoop::Registration EventLoop::add(int fd, std::shared_ptr<Watch> watch) {
  watch->fd = UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!watch->fd) throw_errno("dup of a watched fd");
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  epoll_event ev{};
  ev.events = watch->events;
  ev.data.u64 = id;  // an id, not a pointer: a late event for a removed watch finds nothing
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, watch->fd.get(), &ev) != 0)
    throw_errno("epoll_ctl add");
  watches_.emplace(id, std::move(watch));
  return Registration(this, id);
}

void EventLoop::remove(uint64_t id) {
  std::unique_lock lock(mutex_);
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second->fd.get(), nullptr) != 0)
    KVMMIO_LOG_ERROR("epoll_ctl del: %s", std::strerror(errno));
  // The callback may still be running with its own reference to the watch;
  // the dup'd fd closes when the last reference goes.
  watches_.erase(it);
  if (on_loop_thread()) return;  // removing itself or a sibling from a callback
  idle_.wait(lock, [&] { return running_ != id; });
}

void EventLoop::run() {
  std::array<epoll_event, 16> events;
  for (;;) {
    const int n = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      KVMMIO_LOG_ERROR("epoll_wait: %s; event loop stops", std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.u64 == kStopId) return;
      if (events[i].data.u64 == kFlushId) {
        run_ready_watches();
        continue;
      }
      dispatch(events[i].data.u64);
    }
  }
}

void EventLoop::flush() {
  if (on_loop_thread()) throw std::logic_error("EventLoop::flush() from a callback");
  std::unique_lock lock(mutex_);
  const uint64_t ticket = ++flush_requests_;
  flush_.signal();
  idle_.wait(lock, [&] { return flushed_ >= ticket; });
}

// A flush: every watch is asked directly whether its fd is ready, rather
// than trusting the order epoll reports events in, and the ready ones are
// dispatched. Callbacks run one at a time on this thread, so whatever
// became ready before flush() was called has been served when this returns.
void EventLoop::run_ready_watches() {
  flush_.take();
  std::vector<std::pair<uint64_t, std::shared_ptr<Watch>>> watches;
  uint64_t requests;
  {
    std::lock_guard lock(mutex_);
    requests = flush_requests_;
    watches.assign(watches_.begin(), watches_.end());  // the references keep the fds open
  }
  for (const auto& [id, w] : watches) {
    pollfd p{w->fd.get(), static_cast<short>(w->events == EPOLLOUT ? POLLOUT : POLLIN), 0};
    if (::poll(&p, 1, 0) == 1 && (p.revents & (p.events | POLLERR | POLLHUP))) dispatch(id);
  }
  {
    std::lock_guard lock(mutex_);
    flushed_ = requests;
  }
  idle_.notify_all();
}

void EventLoop::dispatch(uint64_t id) {
  std::shared_ptr<Watch> w;
  {
    std::lock_guard lock(mutex_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;  // removed after epoll_wait returned
    w = it->second;
    running_ = id;
  }
  dispatches_.fetch_add(1, std::memory_order_relaxed);
  try {
    if (w->is_eventfd) {
      uint64_t count = 0;
      // kvmmio's eventfds are non-blocking; a failed read means another
      // reader drained the counter first.
      if (::read(w->fd.get(), &count, sizeof(count)) == sizeof(count)) w->on_signal(count);
    } else {
      w->on_readable();
    }
  } catch (const std::exception& e) {
    // One failing callback must not take the loop (and every device on it) down.
    KVMMIO_LOG_ERROR("event loop callback: %s", e.what());
  }
  {
    std::lock_guard lock(mutex_);
    running_ = 0;
  }
  idle_.notify_all();
}

}  // namespace kvmmio
