// SPDX-License-Identifier: BSD-2-Clause
// SignalFd: the signals kvmmio acts on arrive as events, SIGUSR1 (the
// --stats snapshot) among them, instead of running default handlers.
#include "vmm/process/signals.h"

#include <pthread.h>
#include <signal.h>

#include <gtest/gtest.h>

namespace kvmmio::vmm {
namespace {

// Restores the thread's signal mask (SignalFd leaves its signals blocked
// by design: the process ends after the VM).
class SignalMaskGuard {
 public:
  SignalMaskGuard() { ::pthread_sigmask(SIG_SETMASK, nullptr, &saved_); }
  ~SignalMaskGuard() { ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

 private:
  sigset_t saved_{};
};

TEST(SignalFd, DeliversStopSignalsAndTheSnapshotRequestInOrder) {
  SignalMaskGuard guard;
  SignalFd signals;
  EXPECT_FALSE(signals.take().has_value());
  // Sent to this thread: without SignalFd, SIGUSR1 or SIGTERM would kill
  // the test program.
  ASSERT_EQ(::pthread_kill(::pthread_self(), SIGUSR1), 0);
  EXPECT_EQ(signals.take(), SIGUSR1);
  ASSERT_EQ(::pthread_kill(::pthread_self(), SIGTERM), 0);
  EXPECT_EQ(signals.take(), SIGTERM);
  EXPECT_FALSE(signals.take().has_value());
}

// A snapshot request that arrives before the machine (and its SignalFd)
// exists waits: the process lives, and the SignalFd made later reads it.
TEST(SignalFd, ASnapshotRequestedBeforeItExistsWaitsForIt) {
  SignalMaskGuard guard;
  hold_snapshot_requests();
  ASSERT_EQ(::pthread_kill(::pthread_self(), SIGUSR1), 0);
  sigset_t pending;
  ASSERT_EQ(::sigpending(&pending), 0);
  EXPECT_EQ(::sigismember(&pending, SIGUSR1), 1);
  SignalFd signals;
  EXPECT_EQ(signals.take(), SIGUSR1);
  EXPECT_FALSE(signals.take().has_value());
}

TEST(SignalFd, NamesTheSignals) {
  EXPECT_STREQ(signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_STREQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_STREQ(signal_name(SIGWINCH), "signal");
}

}  // namespace
}  // namespace kvmmio::vmm
