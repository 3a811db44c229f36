// SPDX-License-Identifier: BSD-2-Clause
// DeviceLock: how device threads on the event loop take a device's lock.
// Waiting must sleep (not spin) while a vCPU holds the lock, and give up
// promptly once told to stop, because a reset holds the lock while it
// removes those threads' watches; a DeviceLock::Watch does both.
#include "kvmmio/base/device_lock.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "../virtio/harness.h"
#include "../virtio/thread_sleeps.h"
#include "kvmmio/base/deferred_work.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "../virtio/wait_limit.h"

namespace kvmmio {
namespace {

using namespace std::chrono_literals;
using virtio::test::eventually;
using virtio::test::voluntary_sleeps;

// CPU time in `u`, in microseconds.
long cpu_us(const rusage& u) {
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000L + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

// Sets `stop` when the test leaves, so a failed assertion never leaves the
// waiter (and the future's destructor) waiting for a lock the test holds.
struct StopOnExit {
  std::atomic<bool>& stop;
  ~StopOnExit() { stop = true; }
};

TEST(DeviceLock, TakesAFreeLock) {
  DeviceLock device;
  std::atomic<bool> stop{false};
  auto lock = device.lock_unless(stop);
  EXPECT_TRUE(lock.owns_lock());
}

TEST(DeviceLock, WaitsForTheHolderAsleep) {
  DeviceLock device;
  std::atomic<bool> stop{false};
  std::atomic<pid_t> waiter_tid{0};
  struct Result {
    bool owned;
    long cpu_us, wall_us, sleeps;
  };
  auto held = device.lock();
  auto waiter = std::async(std::launch::async, [&] {
    rusage before{}, after{};
    ::getrusage(RUSAGE_THREAD, &before);
    const auto start = std::chrono::steady_clock::now();
    waiter_tid = ::gettid();
    const bool owned = device.lock_unless(stop).owns_lock();
    ::getrusage(RUSAGE_THREAD, &after);
    const auto wall = std::chrono::steady_clock::now() - start;
    return Result{owned, cpu_us(after) - cpu_us(before),
                  static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(wall).count()),
                  after.ru_nvcsw - before.ru_nvcsw};
  });
  const StopOnExit stop_on_exit{stop};
  // The waiter's own sign that it waits: it goes to sleep, again and again
  // (a bounded wait per recheck of `stop`). A try_lock-and-yield loop never
  // sleeps and would time out here; one that took the held lock returns.
  constexpr long kSleeps = 20;
  ASSERT_TRUE(eventually([&] { return waiter_tid != 0; }));
  const long sleeps0 = voluntary_sleeps(waiter_tid);
  ASSERT_GE(sleeps0, 0);
  ASSERT_TRUE(eventually([&] {
    return voluntary_sleeps(waiter_tid) >= sleeps0 + kSleeps ||
           waiter.wait_for(0s) == std::future_status::ready;
  })) << "the waiter neither slept nor returned";
  ASSERT_EQ(waiter.wait_for(0s), std::future_status::timeout) << "took a held lock";
  held.unlock();
  const Result r = waiter.get();
  EXPECT_TRUE(r.owned);
  ASSERT_GE(r.sleeps, kSleeps);
  // Each sleep is a real wait of the recheck interval, not a short nap in
  // a busy retry loop: timed waits never end early, so a waiter that sleeps
  // kRecheck between its looks sleeps at most once per kRecheck of the time
  // it waited, plus the wake-up that hands it the lock. Its CPU time is not
  // compared with that time: under TCG one recheck can cost as much as the
  // interval itself, so the ratio tells how fast the CPU is, not whether
  // the waiter sleeps.
  const long intervals = r.wall_us / std::chrono::microseconds(DeviceLock::kRecheck).count();
  EXPECT_LE(r.sleeps, intervals + 1) << r.sleeps << " sleeps in " << r.wall_us << " us (CPU " << r.cpu_us
                                     << " us)";
}

TEST(DeviceLock, GivesUpPromptlyWhenToldToStop) {
  DeviceLock device;
  std::atomic<bool> stop{false};
  auto held = device.lock();  // as a reset would hold it
  std::atomic<pid_t> waiter_tid{0};
  auto waiter = std::async(std::launch::async, [&] {
    waiter_tid = ::gettid();
    return device.lock_unless(stop).owns_lock();
  });
  const StopOnExit stop_on_exit{stop};
  ASSERT_TRUE(eventually([&] { return waiter_tid != 0; }));
  const long sleeps0 = voluntary_sleeps(waiter_tid);
  // Waiting (it has slept since), not returned, before it is told to stop.
  ASSERT_TRUE(eventually([&] { return voluntary_sleeps(waiter_tid) > sleeps0; }));
  ASSERT_EQ(waiter.wait_for(0s), std::future_status::timeout);
  stop = true;
  ASSERT_EQ(waiter.wait_for(test::kWaitLimit), std::future_status::ready) << "did not notice stop";
  EXPECT_FALSE(waiter.get());
}

TEST(DeviceLock, DoesNotTakeTheLockOnceStopped) {
  DeviceLock device;
  std::atomic<bool> stop{true};
  EXPECT_FALSE(device.lock_unless(stop).owns_lock());
  EXPECT_TRUE(device.lock().owns_lock());  // and left it free
}

TEST(DeviceLockWatch, CallbacksRunHoldingTheLock) {
  DeviceLock device;
  EventLoop loop;
  EventFd fd;
  std::atomic<int> calls{0};
  auto watch = device.watch_eventfd(loop, fd.fd(), [&](uint64_t) { ++calls; });
  {
    auto held = device.lock();
    const uint64_t before = loop.dispatches();
    fd.signal();
    // Dispatched, so the callback has started: it waits for the lock.
    ASSERT_TRUE(eventually([&] { return loop.dispatches() > before; }));
    EXPECT_EQ(calls, 0) << "the callback ran while the lock was held elsewhere";
  }
  EXPECT_TRUE(eventually([&] { return calls == 1; }));
}

TEST(DeviceLockWatch, DroppingItUnderTheLockStopsACallbackWaitingForTheLock) {
  DeviceLock device;
  EventLoop loop;
  EventFd fd;
  std::atomic<int> calls{0};
  std::optional<DeviceLock::Watch> watch = device.watch_eventfd(loop, fd.fd(), [&](uint64_t) { ++calls; });
  std::future<void> dropped;  // declared first: on failure `held` goes first, so nothing hangs
  auto held = device.lock();  // as a reset holds it
  const uint64_t before = loop.dispatches();
  fd.signal();
  ASSERT_TRUE(eventually([&] { return loop.dispatches() > before; }));  // waiting for the lock
  dropped = std::async(std::launch::async, [&] { watch.reset(); });
  ASSERT_EQ(dropped.wait_for(test::kWaitLimit), std::future_status::ready) << "dropping the watch deadlocked";
  held.unlock();
  EXPECT_EQ(calls, 0) << "a dropped watch's callback ran";
}

TEST(DeviceLockWatch, ACallbackMayDropItsOwnWatch) {
  DeviceLock device;
  EventLoop loop;
  EventFd fd;
  std::atomic<int> calls{0};
  DeviceLock::Watch watch;
  {
    auto held = device.lock();  // orders the assignment before the callback
    watch = device.watch_eventfd(loop, fd.fd(), [&](uint64_t) {
      ++calls;
      watch.reset();  // from the loop thread, holding the lock: must not wait for itself
    });
  }
  fd.signal();
  ASSERT_TRUE(eventually([&] { return calls == 1; }));
  EXPECT_TRUE(eventually([&] { return !watch; }));
}

// DeferredWork: a device's work re-queued behind whatever is ready already,
// under the device lock, and never after it is gone.
TEST(DeferredWork, RunsUnderTheLockAfterWhatWasReadyBefore) {
  DeviceLock device;
  EventLoop loop;
  std::vector<int> order;  // written on the loop thread only
  std::atomic<bool> locked_inside{false};
  EventFd other;
  auto w = loop.watch_eventfd(other.fd(), [&](uint64_t) { order.push_back(1); });
  DeferredWork work(loop, device, [&] {
    // Another thread cannot have the lock while the work runs: it tries,
    // and is seen waiting (asleep) before it is told to stop.
    std::atomic<bool> stop{false};
    std::atomic<pid_t> tid{0};
    auto other_thread = std::async(std::launch::async, [&] {
      tid = ::gettid();
      return device.lock_unless(stop).owns_lock();
    });
    const bool waited = eventually([&] { return tid != 0; }) &&
                        eventually([&, sleeps0 = voluntary_sleeps(tid)] { return voluntary_sleeps(tid) > sleeps0; });
    stop = true;
    locked_inside = !other_thread.get() && waited;
    order.push_back(2);
  });
  virtio::test::LoopGate gate(loop);
  gate.close();
  other.signal();
  work.schedule();
  work.schedule();  // twice before it runs: one run
  gate.open();
  loop.flush();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_TRUE(locked_inside.load());
}

TEST(DeferredWork, NothingRunsOnceItIsGone) {
  DeviceLock device;
  EventLoop loop;
  std::atomic<int> runs{0};
  {
    auto held = device.lock();  // as a reset holds it
    DeferredWork work(loop, device, [&] { ++runs; });
    work.schedule();
  }
  loop.flush();
  EXPECT_EQ(runs.load(), 0);
}

}  // namespace
}  // namespace kvmmio
