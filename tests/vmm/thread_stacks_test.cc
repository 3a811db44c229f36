// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's threads get the stack thread_stacks.h sets, std::thread too,
// and one that small still runs what a thread of kvmmio's does.
#include "vmm/thread_stacks.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

namespace kvmmio::vmm {
namespace {

size_t this_threads_stack() {
  pthread_attr_t attr;
  size_t size = 0;
  if (::pthread_getattr_np(::pthread_self(), &attr) != 0) return 0;
  ::pthread_attr_getstacksize(&attr, &size);
  ::pthread_attr_destroy(&attr);
  return size;
}

TEST(ThreadStacks, NewThreadsGetTheSetSize) {
  pthread_attr_t before;
  ASSERT_EQ(::pthread_getattr_default_np(&before), 0);
  set_default_thread_stack(kThreadStackBytes);
  size_t seen = 0;
  std::thread([&] { seen = this_threads_stack(); }).join();
  // Put the test program's default back for the tests after this one.
  ASSERT_EQ(::pthread_setattr_default_np(&before), 0);
  ::pthread_attr_destroy(&before);
  EXPECT_EQ(seen, kThreadStackBytes);
  // Below 2 MiB: no transparent huge page fits in the stack's mapping.
  EXPECT_LT(kThreadStackBytes, size_t{2} << 20);
}

TEST(ThreadStacks, ATooSmallStackIsAnError) {
  EXPECT_THROW(set_default_thread_stack(1), std::exception);
}

}  // namespace
}  // namespace kvmmio::vmm
