// SPDX-License-Identifier: BSD-2-Clause
// Thread names (kvmmio/base/thread_name.h): cut to Linux's 15 bytes, and
// the event loop's thread is "evloop" (docs/usage.md, "Threads").
#include "kvmmio/base/thread_name.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"

namespace kvmmio {
namespace {

TEST(ThreadName, NamesTheCallingThreadWithinFifteenBytes) {
  std::string short_name, long_name;
  std::thread([&] {
    name_this_thread("relay");
    short_name = this_thread_name();
    name_this_thread("a-name-longer-than-fifteen");
    long_name = this_thread_name();
  }).join();
  EXPECT_EQ(short_name, "relay");
  EXPECT_EQ(long_name, "a-name-longer-t");
  EXPECT_EQ(long_name.size(), kMaxThreadName);
}

// The name of the thread that runs `loop`'s callbacks.
std::string name_seen_by(EventLoop& loop) {
  EventFd fd;
  std::string name;
  auto watch = loop.watch_eventfd(fd.fd(), [&name](uint64_t) { name = this_thread_name(); });
  fd.signal();
  loop.flush();
  return name;
}

TEST(ThreadName, TheEventLoopThreadIsEvloop) {
  EventLoop loop;
  EXPECT_EQ(name_seen_by(loop), "evloop");
}

// kvmmio's control loop (signals, console input) is a second EventLoop.
TEST(ThreadName, AnEventLoopCanBeNamedForItsJob) {
  EventLoop loop("control");
  EXPECT_EQ(name_seen_by(loop), "control");
}

}  // namespace
}  // namespace kvmmio
