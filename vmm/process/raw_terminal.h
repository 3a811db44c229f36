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
//
// terminal_role() tells whether kvmmio may take a terminal over: only in
// its foreground process group. A background job (kvmmio run ... &) that
// read the terminal or changed its mode would be stopped by SIGTTIN or
// SIGTTOU (or, with those ignored, fail with EIO) and would fight the
// shell for the keys.
#pragma once

#include <termios.h>

namespace kvmmio::vmm {

enum class TerminalRole {
  kNotTerminal,     // a pipe, a file, /dev/null: read it as it comes
  kForeground,      // our controlling terminal, and we are its foreground job
  kBackground,      // our controlling terminal, another job is in the foreground
  kNotControlling,  // a terminal, but not our controlling one: no job control
};
TerminalRole terminal_role(int fd);
const char* to_string(TerminalRole role);

// SIGTTIN and SIGTTOU ignored for the process: a background kvmmio that
// writes to its terminal (with TOSTOP set) goes on rather than stopping.
void ignore_terminal_stop_signals();

// Puts the saved settings of the terminal in raw mode now, if one is:
// async-signal-safe, for fatal-signal paths of others (a seccomp kill).
void restore_terminal_now();

class RawTerminal {
 public:
  // Changes nothing unless terminal_role(fd) is kForeground.
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
