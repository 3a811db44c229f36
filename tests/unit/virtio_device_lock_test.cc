// MmioTransport::lock_device_unless(): how device threads on the event loop
// take the transport lock. It must wait (sleeping, not spinning) while a
// vCPU holds the lock, and give up promptly once told to stop, because a
// reset holds the lock while it waits for those threads.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "../virtio/harness.h"

namespace kvmmio::virtio::test {
namespace {

using namespace std::chrono_literals;

// CPU time this thread has used, in microseconds.
long thread_cpu_us() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000L + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

TEST(DeviceLock, TakesAFreeLock) {
  TransportHarness h({});
  std::atomic<bool> stop{false};
  auto lock = h.transport->lock_device_unless(stop);
  EXPECT_TRUE(lock.owns_lock());
}

TEST(DeviceLock, WaitsForTheHolderWithoutBurningACpu) {
  TransportHarness h({});
  std::atomic<bool> stop{false};
  auto held = h.transport->lock_device();
  auto waiter = std::async(std::launch::async, [&] {
    const long cpu0 = thread_cpu_us();
    auto lock = h.transport->lock_device_unless(stop);
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
  TransportHarness h({});
  std::atomic<bool> stop{false};
  auto held = h.transport->lock_device();  // as a reset would hold it
  auto waiter = std::async(std::launch::async, [&] { return h.transport->lock_device_unless(stop).owns_lock(); });
  ASSERT_EQ(waiter.wait_for(50ms), std::future_status::timeout);
  stop = true;
  ASSERT_EQ(waiter.wait_for(2s), std::future_status::ready) << "did not notice stop";
  EXPECT_FALSE(waiter.get());
}

TEST(DeviceLock, DoesNotTakeTheLockOnceStopped) {
  TransportHarness h({});
  std::atomic<bool> stop{true};
  EXPECT_FALSE(h.transport->lock_device_unless(stop).owns_lock());
  EXPECT_TRUE(h.transport->lock_device().owns_lock());  // and left it free
}

}  // namespace
}  // namespace kvmmio::virtio::test
