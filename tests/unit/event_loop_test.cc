// SPDX-License-Identifier: BSD-2-Clause
// EventLoop: dispatch, and registrations that can be dropped at any time.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <system_error>
#include <vector>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "../virtio/harness.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"

namespace kvmmio {
namespace {

using namespace std::chrono_literals;
using virtio::test::eventually;

TEST(EventLoop, PassesTheEventFdCounterToTheCallback) {
  EventLoop loop;
  EventFd fd;
  std::atomic<uint64_t> total{0};
  auto watch = loop.watch_eventfd(fd.fd(), [&](uint64_t n) { total += n; });
  fd.signal(3);
  ASSERT_TRUE(eventually([&] { return total == 3; }));
  fd.signal(2);
  ASSERT_TRUE(eventually([&] { return total == 5; }));
  EXPECT_FALSE(fd.take().has_value());  // the loop drained it
}

TEST(EventLoop, GenericWatchLeavesReadingToTheCallback) {
  EventLoop loop;
  EventFd fd;
  std::atomic<int> calls{0};
  auto watch = loop.watch(fd.fd(), [&] {
    fd.take();
    ++calls;
  });
  fd.signal();
  ASSERT_TRUE(eventually([&] { return calls == 1; }));
}

TEST(EventLoop, NoCallbacksAfterTheRegistrationIsGone) {
  EventLoop loop;
  EventFd fd;
  std::atomic<int> calls{0};
  {
    auto watch = loop.watch_eventfd(fd.fd(), [&](uint64_t) { ++calls; });
  }
  fd.signal();
  loop.flush();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(fd.take().value_or(0), 1u);  // nobody read it
}

TEST(EventLoop, DroppingARegistrationWaitsForItsRunningCallback) {
  EventLoop loop;
  EventFd fd;
  std::atomic<bool> started{false}, finished{false};
  std::optional<EventLoop::Registration> watch = loop.watch_eventfd(fd.fd(), [&](uint64_t) {
    started = true;
    std::this_thread::sleep_for(200ms);  // a long callback; nothing is asserted on timing
    finished = true;
  });
  fd.signal();
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  watch.reset();
  EXPECT_TRUE(finished);  // what the callback used may now be freed
}

TEST(EventLoop, ACallbackMayDropItsOwnRegistration) {
  EventLoop loop;
  EventFd fd;
  std::atomic<int> calls{0};
  std::mutex mutex;  // orders the assignment below before the callback's reset
  std::optional<EventLoop::Registration> watch;
  {
    std::lock_guard lock(mutex);
    watch = loop.watch_eventfd(fd.fd(), [&](uint64_t) {
      ++calls;
      std::lock_guard inner(mutex);
      watch.reset();  // from the loop thread: must not wait for itself
    });
  }
  fd.signal();
  ASSERT_TRUE(eventually([&] { return calls == 1; }));
  fd.signal();
  loop.flush();
  EXPECT_EQ(calls, 1);
}

TEST(EventLoop, ClosingTheWatchedFdCannotRedirectTheWatch) {
  // The loop watches its own dup: a new fd that reuses the closed number
  // is not mistaken for the watched one.
  EventLoop loop;
  std::atomic<int> calls{0};
  auto original = std::make_unique<EventFd>();
  auto watch = loop.watch_eventfd(original->fd(), [&](uint64_t) { ++calls; });
  const int number = original->fd();
  original.reset();
  EventFd reused;
  ASSERT_EQ(reused.fd(), number);
  reused.signal();
  loop.flush();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(reused.take().value_or(0), 1u);
}

// flush() is what the negative checks above rest on: everything ready when
// it is called has been dispatched when it returns, with no waiting.
TEST(EventLoop, FlushRunsTheCallbacksOfEveryReadyFd) {
  EventLoop loop;
  EventFd a, b, idle;
  std::atomic<uint64_t> got_a{0}, got_b{0};
  std::atomic<int> idle_calls{0};
  auto wa = loop.watch_eventfd(a.fd(), [&](uint64_t n) { got_a += n; });
  auto wb = loop.watch(b.fd(), [&] { got_b += b.take().value_or(0); });
  auto wi = loop.watch_eventfd(idle.fd(), [&](uint64_t) { ++idle_calls; });
  for (int round = 1; round <= 100; ++round) {
    a.signal();
    b.signal(2);
    loop.flush();
    ASSERT_EQ(got_a, static_cast<uint64_t>(round));
    ASSERT_EQ(got_b, 2u * round);
  }
  EXPECT_EQ(idle_calls, 0);
}

TEST(EventLoop, FlushIsRefusedFromACallback) {
  EventLoop loop;
  EventFd fd;
  std::atomic<bool> refused{false};
  auto watch = loop.watch_eventfd(fd.fd(), [&](uint64_t) {
    try {
      loop.flush();
    } catch (const std::logic_error&) {
      refused = true;
    }
  });
  fd.signal();
  loop.flush();
  EXPECT_TRUE(refused);
}

TEST(EventLoop, CountsDispatches) {
  EventLoop loop;
  EventFd a, b;
  auto wa = loop.watch_eventfd(a.fd(), [](uint64_t) {});
  auto wb = loop.watch_eventfd(b.fd(), [](uint64_t) {});
  a.signal();
  ASSERT_TRUE(eventually([&] { return loop.dispatches() == 1; }));
  b.signal();
  ASSERT_TRUE(eventually([&] { return loop.dispatches() == 2; }));
}

TEST(EventLoop, WritableWatchFiresOnlyOnceAFullPipeHasRoom) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  UniqueFd rd(fds[0]), wr(fds[1]);
  std::vector<char> chunk(4096, 'x');
  while (::write(wr.get(), chunk.data(), chunk.size()) > 0) {
  }
  ASSERT_EQ(errno, EAGAIN);  // full
  EventLoop loop;
  std::atomic<int> calls{0};
  EventLoop::Registration watch;
  watch = loop.watch_writable(wr.get(), [&] {
    ++calls;
    watch = {};  // level triggered: a writable watch drops itself once served
  });
  loop.flush();
  EXPECT_EQ(calls, 0) << "a full pipe reported room";
  std::vector<char> sink(65536);
  while (::read(rd.get(), sink.data(), sink.size()) > 0) {
  }
  ASSERT_TRUE(eventually([&] { return calls == 1; }));
  loop.flush();
  EXPECT_EQ(calls, 1);
}

TEST(EventLoop, WritableWatchRefusesFilesThatNeverWait) {
  EventLoop loop;
  UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(null);
  try {
    auto watch = loop.watch_writable(null.get(), [] {});
    FAIL() << "epoll accepted /dev/null";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EPERM);
  }
}

}  // namespace
}  // namespace kvmmio
