// SPDX-License-Identifier: BSD-2-Clause
// EventFd: create, signal, drain and wait on an eventfd(2).
#include "kvmmio/base/event_fd.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kvmmio/base/error.h"

namespace kvmmio {

EventFd::EventFd(bool nonblocking)
    : fd_(::eventfd(0, EFD_CLOEXEC | (nonblocking ? EFD_NONBLOCK : 0))) {
  if (!fd_) throw_errno("eventfd");
}

void EventFd::signal(uint64_t n) {
  if (::write(fd_.get(), &n, sizeof(n)) != sizeof(n)) throw_errno("eventfd write");
}

std::optional<uint64_t> EventFd::take() {
  uint64_t value = 0;
  ssize_t r = ::read(fd_.get(), &value, sizeof(value));
  if (r == sizeof(value)) return value;
  if (r < 0 && errno == EAGAIN) return std::nullopt;
  throw_errno("eventfd read");
}

bool EventFd::wait_readable(int timeout_ms) const {
  pollfd p{fd_.get(), POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r < 0) throw_errno("poll eventfd");
  return r == 1;
}

}  // namespace kvmmio
