// SPDX-License-Identifier: BSD-2-Clause
// DeviceLock: how device threads on the event loop take a device's lock.
// Waiting must sleep (not spin) while a vCPU holds the lock, and give up
// promptly once told to stop, because a reset holds the lock while it
// removes those threads' watches; a DeviceLock::Watch does both.
#include "kvmmio/base/device_lock.h"

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "../virtio/harness.h"
#include "kvmmio/base/deferred_work.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"

namespace kvmmio {
namespace {

using namespace std::chrono_literals;
using virtio::test::eventually;

// CPU time this thread has used, in microseconds.
long thread_cpu_us() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000L + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

TEST(DeviceLock, TakesAFreeLock) {
  DeviceLock device;
  std::atomic<bool> stop{false};
  auto lock = device.lock_unless(stop);
  EXPECT_TRUE(lock.owns_lock());
}

TEST(DeviceLock, WaitsForTheHolderWithoutBurningACpu) {
  DeviceLock device;
  std::atomic<bool> stop{false};
  auto held = device.lock();
  auto waiter = std::async(std::launch::async, [&] {
    const long cpu0 = thread_cpu_us();
    auto lock = device.lock_unless(stop);
    return std::make_pair(lock.owns_lock(), thread_cpu_us() - cpu0);
  });
  ASSERT_EQ(waiter.wait_for(300ms), std::future_status::timeout) << "took a held lock";
  held.unlock();
  const auto [owned, cpu_us] = waiter.get();
  EXPECT_TRUE(owned);
  // A try_lock-and-yield loop would use nearly all of the 300 ms.
  EXPECT_LT(cpu_us, 100000) << "the waiter spun for " << cpu_us << " us of CPU";
}

TEST(DeviceLock, GivesUpPromptlyWhenToldToStop) {
  DeviceLock device;
  std::atomic<bool> stop{false};
  auto held = device.lock();  // as a reset would hold it
  auto waiter = std::async(std::launch::async, [&] { return device.lock_unless(stop).owns_lock(); });
  ASSERT_EQ(waiter.wait_for(50ms), std::future_status::timeout);
  stop = true;
  ASSERT_EQ(waiter.wait_for(2s), std::future_status::ready) << "did not notice stop";
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
  ASSERT_EQ(dropped.wait_for(2s), std::future_status::ready) << "dropping the watch deadlocked";
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
    // Another thread cannot have the lock while the work runs.
    std::atomic<bool> stop{false};
    auto other_thread = std::async(std::launch::async, [&] { return device.lock_unless(stop).owns_lock(); });
    std::this_thread::sleep_for(20ms);
    stop = true;
    locked_inside = !other_thread.get();
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
