// SPDX-License-Identifier: BSD-2-Clause
// Guest console plumbing between stdin/stdout and the console device.
#include "vmm/console/console.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "kvmmio/base/log.h"

namespace kvmmio::vmm {

void ConsoleOutput::put(uint8_t byte) {
  if (broken_.load(std::memory_order_relaxed)) return;
  while (!stopping_) {
    // Wait for room in bounded steps rather than in a blocking write(): a
    // vCPU thread here is outside KVM_RUN, where a kick sends no signal, so
    // only this loop lets it notice the stop while the reader is stalled.
    pollfd p{fd_, POLLOUT, 0};
    const int n = ::poll(&p, 1, 100);
    if (stopping_) return;
    if (n == 0 || (n < 0 && errno == EINTR)) continue;
    const ssize_t r = ::write(fd_, &byte, 1);
    if (r == 1) return;
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;  // not gone yet
    if (!broken_.exchange(true))
      KVMMIO_LOG_WARN("console output fd %d: %s; guest output is dropped from now on", fd_,
                      r < 0 ? std::strerror(errno) : "closed");
    return;
  }
}

ConsoleInput::ConsoleInput(EventLoop& loop, int fd, ConsoleInputSink& sink, bool escapes,
                           std::function<void()> on_quit)
    : loop_(loop), fd_(fd), sink_(sink), escapes_(escapes), on_quit_(std::move(on_quit)) {
  sink_.set_rx_space_callback([this] { space_.signal(); });
  space_watch_ = loop_.watch_eventfd(space_.fd(), [this](uint64_t) { on_sink_space(); });
  pollable_ = true;
  try {
    watch_input(true);
  } catch (const std::system_error& e) {
    // epoll refuses regular files and some devices (/dev/null) with EPERM:
    // they never block, so read them as the sink drains instead.
    if (e.code().value() != EPERM) throw;
    pollable_ = false;
    space_.signal();  // start now
  }
}

ConsoleInput::~ConsoleInput() {
  sink_.set_rx_space_callback({});
  input_watch_ = {};
  space_watch_ = {};
}

void ConsoleInput::watch_input(bool on) {
  if (!pollable_ || eof_ || on == static_cast<bool>(input_watch_)) return;
  if (on)
    input_watch_ = loop_.watch(fd_, [this] { on_readable(); });
  else
    input_watch_ = {};  // allowed from the loop thread, even from its own callback
}

void ConsoleInput::on_readable() {
  read_some();
  flush();
}

void ConsoleInput::on_sink_space() {
  flush();
  // A regular file is always "readable": refill until the sink refuses
  // (its space callback brings us back), the file ends, or this turn's
  // share is read (then the next turn continues).
  for (size_t turn = 0; !pollable_ && !eof_ && pending_.empty(); turn += 512) {
    if (turn >= kFileBytesPerDispatch) {
      space_.signal();
      return;
    }
    read_some();
    flush();
  }
}

void ConsoleInput::read_some() {
  // A terminal is read even with a full buffer: Ctrl-A x must get through.
  if (eof_ || (pending_.size() >= kMaxPending && !escapes_)) return;
  uint8_t buf[512];
  const size_t want = escapes_ ? sizeof buf : std::min(sizeof buf, kMaxPending - pending_.size());
  const ssize_t r = ::read(fd_, buf, want);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (r <= 0) {
    // EOF (or an error): the guest simply gets no more input; the VM runs on.
    if (r < 0)
      KVMMIO_LOG_WARN("console input fd %d: %s; no more guest input", fd_, std::strerror(errno));
    input_watch_ = {};
    eof_ = true;
    return;
  }
  take(buf, static_cast<size_t>(r));
}

void ConsoleInput::take(const uint8_t* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint8_t c = data[i];
    if (!escapes_) {
      put(c);
    } else if (after_escape_) {
      after_escape_ = false;
      if (c == 'x' || c == 'X') {
        if (on_quit_) on_quit_();
        return;
      }
      if (c != kEscape) put(kEscape);  // not an escape: pass both on
      put(c);
    } else if (c == kEscape) {
      after_escape_ = true;
    } else {
      put(c);
    }
  }
}

void ConsoleInput::put(uint8_t c) {
  if (pending_.size() < kMaxPending) {
    pending_.push_back(c);
    return;
  }
  // Only a terminal gets here (read_some() stops reading anything else).
  if (dropped_.fetch_add(1, std::memory_order_relaxed) == 0)
    KVMMIO_LOG_WARN("console input: the guest is not reading; %zu typed bytes wait, further keys "
                    "are dropped until it reads (Ctrl-A x still stops the VM)", kMaxPending);
}

void ConsoleInput::flush() {
  if (!pending_.empty()) {
    const size_t n = sink_.receive(pending_);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  // Stop reading a pipe or file while a full buffer waits for the guest;
  // the sink's space callback resumes it. A terminal stays watched.
  watch_input(escapes_ || pending_.size() < kMaxPending);
}

}  // namespace kvmmio::vmm
