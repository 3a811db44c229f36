// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's threads get the stack thread_stacks.h sets, std::thread too;
// with the arena limit set, many threads allocating at once share at most
// that many arenas (so glibc never has to ask for the CPU count).
#include "vmm/process/thread_stacks.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <pthread.h>

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

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

// Arenas in use: malloc_info's XML has one <heap nr="N"> per arena.
int arenas_in_use() {
  char* text = nullptr;
  size_t size = 0;
  FILE* f = ::open_memstream(&text, &size);
  if (!f) return -1;
  ::malloc_info(0, f);
  std::fclose(f);
  int heaps = 0;
  for (std::string_view rest(text, size); rest.find("<heap nr=") != std::string_view::npos;) {
    rest.remove_prefix(rest.find("<heap nr=") + 1);
    ++heaps;
  }
  std::free(text);
  return heaps;
}

// The arenas in use while `threads` threads are alive and have allocated
// at once (an exited thread's arena would be reused: none leaves before
// the count).
int arenas_with_threads_allocating(int threads) {
  std::barrier allocated(threads + 1);
  std::barrier counted(threads + 1);
  std::vector<std::thread> all;
  for (int i = 0; i < threads; ++i)
    all.emplace_back([&] {
      void* volatile p = std::malloc(4096);
      allocated.arrive_and_wait();
      counted.arrive_and_wait();
      std::free(p);
    });
  allocated.arrive_and_wait();
  const int n = arenas_in_use();
  counted.arrive_and_wait();
  for (auto& t : all) t.join();
  return n;
}

TEST(ThreadStacks, ManyAllocatingThreadsShareTheLimitedArenas) {
  // In a process of its own: the limit stays there.
  EXPECT_EXIT(
      {
        set_malloc_arenas(kMallocArenas);
        const int n = arenas_with_threads_allocating(16);
        std::exit(n >= 1 && n <= kMallocArenas ? 0 : 10 + n);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kvmmio::vmm
