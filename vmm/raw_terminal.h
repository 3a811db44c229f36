// SPDX-License-Identifier: BSD-2-Clause
// RawTerminal: puts a terminal in raw mode (keys reach the guest as typed:
// no line editing, echo or Ctrl-C signal) for its lifetime, and restores
// the saved settings on every way out: the destructor (normal return and
// exceptions), and a handler for the signals that kill the process without
// unwinding (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT), which restores and
// then re-raises. SIGINT, SIGTERM and SIGHUP are handled by the machine as
// an orderly stop, so they unwind through the destructor.
//
// Not a terminal (a pipe, /dev/null, a file): nothing is changed.
#pragma once

#include <termios.h>

namespace kvmmio::vmm {

// Puts the saved settings of the terminal in raw mode now, if one is:
// async-signal-safe, for fatal-signal paths of others (a seccomp kill).
void restore_terminal_now();

class RawTerminal {
 public:
  explicit RawTerminal(int fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

  bool active() const { return active_; }

 private:
  int fd_;
  bool active_ = false;
  struct termios saved_ {};
};

}  // namespace kvmmio::vmm
