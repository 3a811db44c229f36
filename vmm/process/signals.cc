// SPDX-License-Identifier: BSD-2-Clause
// Stop and snapshot signals as a signalfd (see signals.h).
#include "vmm/process/signals.h"

#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include "kvmmio/base/error.h"

namespace kvmmio::vmm {

SignalFd::SignalFd() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1}) sigaddset(&set, sig);
  if (const int err = ::pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0) {
    errno = err;
    throw_errno("pthread_sigmask");
  }
  fd_ = UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_) throw_errno("signalfd");
}

std::optional<int> SignalFd::take() {
  signalfd_siginfo info{};
  const ssize_t r = ::read(fd_.get(), &info, sizeof info);
  if (r != static_cast<ssize_t>(sizeof info)) return std::nullopt;
  return static_cast<int>(info.ssi_signo);
}

void SignalFd::watch(EventLoop& loop, std::function<void(int)> on_signal) {
  watch_ = loop.watch(fd_.get(), [this, on_signal = std::move(on_signal)] {
    while (const std::optional<int> sig = take()) on_signal(*sig);
  });
}

void hold_snapshot_requests() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  if (const int err = ::pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0) {
    errno = err;
    throw_errno("pthread_sigmask");
  }
}

const char* signal_name(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    default: return "signal";
  }
}

}  // namespace kvmmio::vmm
