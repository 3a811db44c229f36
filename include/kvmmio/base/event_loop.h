// SPDX-License-Identifier: BSD-2-Clause
// EventLoop: one epoll thread that runs callbacks when eventfds (or other
// fds) become readable, or writable: the VMM's userspace backends (polled
// queue ioeventfds), the irq=relay forwarder and console output waiting for
// room run on it.
//
// A watch is an RAII Registration. Destroying it removes the fd from the
// epoll set, and, off the loop thread, waits for a callback of that watch
// that is running right now, so whatever the callback captured may be freed
// afterwards. Destroying a Registration from inside a callback is allowed.
// Do not destroy one while holding a lock that its own callback takes.
//
// The loop keeps a dup() of each fd, so closing the original fd while the
// watch is alive cannot leave a stale or reused fd number in the epoll set.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

class KVMMIO_EXPORT EventLoop {
 public:
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    ~Registration();
    explicit operator bool() const { return loop_ != nullptr; }

   private:
    friend class EventLoop;
    Registration(EventLoop* loop, uint64_t id) : loop_(loop), id_(id) {}
    EventLoop* loop_ = nullptr;
    uint64_t id_ = 0;
  };

  // Starts the loop thread, named `thread_name` (thread_name.h; at most 15
  // bytes are kept). Throws std::system_error if epoll is unavailable.
  explicit EventLoop(std::string_view thread_name = "evloop");
  // Stops and joins the thread. Registrations must be gone by then.
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Calls `on_readable` on the loop thread while `fd` is readable (level
  // triggered: the callback must consume what made it readable).
  [[nodiscard]] Registration watch(int fd, std::function<void()> on_readable);
  // Calls `on_writable` on the loop thread while `fd` has room for output
  // (level triggered: drop the watch once the callback has written what
  // waited). epoll refuses fds that are always ready (regular files,
  // /dev/null) with a std::system_error, EPERM: writes to those never wait.
  [[nodiscard]] Registration watch_writable(int fd, std::function<void()> on_writable);
  // For eventfds: the loop reads (and so clears) the counter and passes it.
  [[nodiscard]] Registration watch_eventfd(int fd, std::function<void(uint64_t count)> on_signal);

  // Returns once every watch whose fd is ready now has had its callback
  // run (on the loop thread, as usual), so "nothing happened" can be
  // checked without sleeping: flush(), then look. Not from a callback
  // (std::logic_error: the loop would wait for itself).
  void flush();

  bool on_loop_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Callbacks run so far (each is one VMM wake-up for the watched fd).
  uint64_t dispatches() const { return dispatches_.load(std::memory_order_relaxed); }

 private:
  struct Watch {
    UniqueFd fd;  // a dup of the watched fd
    bool is_eventfd;
    uint32_t events;  // EPOLLIN or EPOLLOUT
    std::function<void()> on_readable;  // or writable, for EPOLLOUT watches
    std::function<void(uint64_t)> on_signal;
  };
  Registration add(int fd, std::shared_ptr<Watch> watch);
  void remove(uint64_t id);
  void run();
  void dispatch(uint64_t id);
  void run_ready_watches();

  static constexpr uint64_t kStopId = 0;
  static constexpr uint64_t kFlushId = UINT64_MAX;  // watch ids count up from 1

  UniqueFd epoll_;
  EventFd stop_;
  EventFd flush_;
  std::mutex mutex_;
  std::condition_variable idle_;  // signalled when running_ or flushed_ changes
  std::map<uint64_t, std::shared_ptr<Watch>> watches_;
  uint64_t next_id_ = 1;
  uint64_t running_ = 0;  // id of the callback running now, 0 if none
  uint64_t flush_requests_ = 0, flushed_ = 0;  // flush() calls, and those served
  std::atomic<uint64_t> dispatches_{0};
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace kvmmio
