// SPDX-License-Identifier: BSD-2-Clause
// PollDeadline: one deadline for every wait of a short program that moves
// data over a socket (bench/vsock_stream, tests/arm64/vsock_probe), so a
// peer that never comes, stalls or never closes ends the run instead of
// hanging it.
#pragma once

#include <poll.h>

#include <cerrno>
#include <chrono>

class PollDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  PollDeadline() = default;
  explicit PollDeadline(std::chrono::seconds within) : end_(Clock::now() + within) {}

  int ms_left() const {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_ - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
  }

  // Until `fd` has one of `events`: 0, or -1 at the deadline (errno
  // ETIMEDOUT) or when poll fails (its errno).
  int wait(int fd, short events) const {
    pollfd p{fd, events, 0};
    for (;;) {
      const int r = ::poll(&p, 1, ms_left());
      if (r > 0) return 0;
      if (r == 0) {
        errno = ETIMEDOUT;
        return -1;
      }
      if (errno != EINTR) return -1;
    }
  }

 private:
  Clock::time_point end_{};
};
