// SPDX-License-Identifier: BSD-2-Clause
// Raw terminal mode and its restoration on every exit path.
#include "vmm/process/raw_terminal.h"

#include <signal.h>
#include <unistd.h>

#include "kvmmio/base/log.h"

namespace kvmmio::vmm {
namespace {

// What the fatal-signal handler restores. Written before the handlers are
// installed and cleared before they are removed: a handler never sees a
// half-written copy.
volatile sig_atomic_t g_fd = -1;
struct termios g_saved;

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

void restore_and_reraise(int sig) {
  if (g_fd >= 0) ::tcsetattr(g_fd, TCSANOW, &g_saved);  // async-signal-safe
  // SA_RESETHAND put the default action back: re-raising it ends the
  // process as the signal would have, once this handler returns.
  ::raise(sig);
}

}  // namespace

TerminalRole terminal_role(int fd) {
  if (!::isatty(fd)) return TerminalRole::kNotTerminal;
  // tcgetpgrp() fails (ENOTTY) on a terminal that is not the caller's
  // controlling terminal.
  const pid_t foreground = ::tcgetpgrp(fd);
  if (foreground < 0) return TerminalRole::kNotControlling;
  return foreground == ::getpgrp() ? TerminalRole::kForeground : TerminalRole::kBackground;
}

const char* to_string(TerminalRole role) {
  switch (role) {
    case TerminalRole::kNotTerminal: return "not a terminal";
    case TerminalRole::kForeground: return "foreground";
    case TerminalRole::kBackground: return "background";
    case TerminalRole::kNotControlling: return "not the controlling terminal";
  }
  return "?";
}

void ignore_terminal_stop_signals() {
  ::signal(SIGTTOU, SIG_IGN);
  ::signal(SIGTTIN, SIG_IGN);
}

void restore_terminal_now() {
  if (g_fd >= 0) ::tcsetattr(g_fd, TCSANOW, &g_saved);
}

RawTerminal::RawTerminal(int fd) : fd_(fd) {
  if (terminal_role(fd) != TerminalRole::kForeground || ::tcgetattr(fd, &saved_) != 0) return;
  g_saved = saved_;
  g_fd = fd;
  struct sigaction sa {};
  sa.sa_handler = restore_and_reraise;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) ::sigaction(sig, &sa, nullptr);

  struct termios raw = saved_;
  ::cfmakeraw(&raw);
  // Keep the host's output processing: a guest that prints a bare "\n"
  // still starts the next line at the left margin.
  raw.c_oflag = saved_.c_oflag;
  if (::tcsetattr(fd, TCSANOW, &raw) != 0) {
    KVMMIO_LOG_WARN("cannot put the terminal in raw mode; input is line-buffered");
    g_fd = -1;
    return;
  }
  active_ = true;
}

RawTerminal::~RawTerminal() {
  if (!active_) return;
  ::tcsetattr(fd_, TCSANOW, &saved_);
  g_fd = -1;
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) ::sigaction(sig, &sa, nullptr);
}

}  // namespace kvmmio::vmm
