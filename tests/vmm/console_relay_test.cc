// SPDX-License-Identifier: BSD-2-Clause
// The --console destinations with real fds: a file's contents and mode,
// a pty read and written from its slave side, a unix socket's client
// connecting, leaving and coming back, the counters of what was dropped,
// and stdio in the background of its terminal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../virtio/harness.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/unique_fd.h"
#include "test_files.h"
#include "vmm/console/console_relay.h"
#include "vmm/console/console_setup.h"
#include "vmm/process/unix_socket.h"

namespace kvmmio::vmm {
namespace {

using virtio::test::eventually;
using Kind = ConsoleDestination::Kind;

void write_all(int fd, const std::string& s) {
  ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

// Reads `fd` until `n` bytes came or eventually()'s limit passed.
std::string read_n(int fd, size_t n) {
  std::string got;
  eventually([&] {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10) == 1 && (p.revents & POLLIN)) {
      char buf[4096];
      const ssize_t r = ::read(fd, buf, std::min(sizeof buf, n - got.size()));
      if (r > 0) got.append(buf, static_cast<size_t>(r));
      if (r == 0) return true;  // the other side closed: no more will come
    }
    return got.size() >= n;
  });
  return got;
}

TEST(ConsoleFile, IsCreated0600AndAppended) {
  test::TempDir dir;
  const std::string path = dir.file("console.log");
  const ConsoleDestination d{Kind::kFile, path};
  {
    ConsoleEnds ends = open_console(d, TerminalRole::kForeground);
    EXPECT_EQ(ends.in, -1) << "a file console has no input";
    EXPECT_FALSE(ends.stdio);
    ASSERT_EQ(::write(ends.out, "first\n", 6), 6);
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  {
    ConsoleEnds ends = open_console(d, TerminalRole::kForeground);
    ASSERT_EQ(::write(ends.out, "second\n", 7), 7);
  }
  const std::vector<uint8_t> bytes = test::read_file(path);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "first\nsecond\n");
}

TEST(ConsoleFile, UnwritablePathNamesTheFix) {
  const ConsoleDestination d{Kind::kFile, "/nonexistent-dir/console.log"};
  try {
    open_console(d, TerminalRole::kNotTerminal);
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("file=/nonexistent-dir/console.log"), std::string::npos) << msg;
    EXPECT_NE(msg.find("does its directory exist"), std::string::npos) << msg;
  }
}

TEST(ConsoleStdio, ReadsNoInputInTheBackgroundOfItsTerminal) {
  const ConsoleDestination d;  // stdio
  const ConsoleEnds bg = open_console(d, TerminalRole::kBackground);
  EXPECT_EQ(bg.in, -1);
  EXPECT_EQ(bg.out, STDOUT_FILENO);
  const ConsoleEnds fg = open_console(d, TerminalRole::kForeground);
  EXPECT_EQ(fg.in, STDIN_FILENO);
  EXPECT_TRUE(fg.escapes);
  const ConsoleEnds pipe = open_console(d, TerminalRole::kNotTerminal);
  EXPECT_EQ(pipe.in, STDIN_FILENO);
  EXPECT_FALSE(pipe.escapes);
}

TEST(ConsolePty, RelaysBothWaysThroughTheSlave) {
  ConsoleRelay relay(ConsoleDestination{Kind::kPty, {}});
  EXPECT_EQ(relay.path().rfind("/dev/pts/", 0), 0u) << relay.path();
  EventLoop loop;
  relay.start(loop);
  // Written before anyone opened the terminal: it waits in the pty's buffer.
  write_all(relay.device_fd(), "early ");
  loop.flush();
  UniqueFd user(::open(relay.path().c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
  ASSERT_TRUE(user) << relay.path();
  write_all(relay.device_fd(), "guest says hi\n");
  EXPECT_EQ(read_n(user.get(), 20), "early guest says hi\n");
  ASSERT_EQ(::write(user.get(), "ls\r", 3), 3);
  EXPECT_EQ(read_n(relay.device_fd(), 3), "ls\r");
  // The user leaves and comes back: input still arrives.
  user.reset();
  UniqueFd again(::open(relay.path().c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
  ASSERT_TRUE(again);
  ASSERT_EQ(::write(again.get(), "x", 1), 1);
  EXPECT_EQ(read_n(relay.device_fd(), 1), "x");
  loop.flush();  // counted after the write the reader saw
  EXPECT_EQ(relay.counters().output_bytes.load(), 20u);
  EXPECT_EQ(relay.counters().input_bytes.load(), 4u);
  relay.stop();
}

TEST(ConsolePty, OutputNobodyReadsIsDroppedNotBuffered) {
  ConsoleRelay relay(ConsoleDestination{Kind::kPty, {}});
  EventLoop loop;
  relay.start(loop);
  // Far more than any pty buffer: the relay must keep reading (the guest
  // never waits) and drop what the terminal cannot hold.
  const std::string chunk(4096, 'o');
  uint64_t sent = 0;
  for (int i = 0; i < 256; ++i) {
    ssize_t w;
    while ((w = ::send(relay.device_fd(), chunk.data(), chunk.size(), MSG_NOSIGNAL)) < 0 &&
           errno == EAGAIN)
      loop.flush();
    ASSERT_GT(w, 0);
    sent += static_cast<uint64_t>(w);
  }
  EXPECT_TRUE(eventually([&] {
    return relay.counters().output_bytes.load() + relay.counters().output_dropped.load() == sent;
  }));
  EXPECT_GT(relay.counters().output_dropped.load(), 0u);
  EXPECT_LT(relay.counters().output_bytes.load(), sent);
  relay.stop();
}

TEST(ConsoleSocket, ClientsComeAndGoOneAtATime) {
  test::TempDir dir;
  const std::string path = dir.file("console.sock");
  ConsoleRelay relay(ConsoleDestination{Kind::kSocket, path});
  EventLoop loop;
  relay.start(loop);  // publishes it
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Nobody connected: dropped and counted, not held.
  write_all(relay.device_fd(), "lost");
  EXPECT_TRUE(eventually([&] { return relay.counters().output_dropped.load() == 4; }));

  UniqueFd first = connect_unix_socket(path);
  ASSERT_TRUE(first);
  EXPECT_TRUE(eventually([&] { return relay.counters().connections.load() == 1; }));
  write_all(relay.device_fd(), "hello");
  EXPECT_EQ(read_n(first.get(), 5), "hello");
  write_all(first.get(), "input");
  EXPECT_EQ(read_n(relay.device_fd(), 5), "input");

  // A second client is told and closed; the first keeps the console.
  UniqueFd second = connect_unix_socket(path);
  ASSERT_TRUE(second);
  const std::string busy = read_n(second.get(), 64);
  EXPECT_NE(busy.find("has a client already"), std::string::npos) << busy;
  EXPECT_EQ(relay.counters().refused_connections.load(), 1u);
  write_all(relay.device_fd(), "still");
  EXPECT_EQ(read_n(first.get(), 5), "still");

  // The first leaves; output meanwhile is dropped; a new one takes over.
  first.reset();
  loop.flush();
  EXPECT_TRUE(eventually([&] { loop.flush(); return !relay.client_connected(); }));
  write_all(relay.device_fd(), "gone");
  EXPECT_TRUE(eventually([&] { return relay.counters().output_dropped.load() == 8; }));
  UniqueFd third = connect_unix_socket(path);
  ASSERT_TRUE(third);
  EXPECT_TRUE(eventually([&] { return relay.counters().connections.load() == 2; }));
  write_all(relay.device_fd(), "back");
  EXPECT_EQ(read_n(third.get(), 4), "back");
  // Counted after the send the client saw: wait for the relay's turn to end.
  loop.flush();
  EXPECT_EQ(relay.counters().output_bytes.load(), 14u);
  EXPECT_EQ(relay.counters().input_bytes.load(), 5u);
  relay.stop();
}

// A VM in the background whose console socket nobody attaches to drops
// its whole boot log: that is said once, and again only after a client
// came and went, never per write.
TEST(ConsoleSocket, OutputWithoutAClientIsSaidOncePerWait) {
  std::vector<std::string> lines;
  std::mutex lines_mutex;
  set_log_sink([&](LogLevel, std::string_view message) {
    std::lock_guard lock(lines_mutex);
    if (message.find("no client connected") != std::string_view::npos) lines.emplace_back(message);
  });
  struct RestoreSink {
    ~RestoreSink() { set_log_sink({}); }
  } restore;
  auto said = [&] {
    std::lock_guard lock(lines_mutex);
    return lines.size();
  };

  test::TempDir dir;
  const std::string path = dir.file("console.sock");
  ConsoleRelay relay(ConsoleDestination{Kind::kSocket, path});
  EventLoop loop;
  relay.start(loop);
  for (int i = 0; i < 50; ++i) {
    write_all(relay.device_fd(), "x");
    // One read of the relay per write, as a boot's many small writes come.
    ASSERT_TRUE(eventually([&] { return relay.counters().output_dropped.load() == static_cast<uint64_t>(i + 1); }));
  }
  EXPECT_EQ(said(), 1u);
  EXPECT_NE(lines.at(0).find("dropped until one connects (counted in --stats)"), std::string::npos) << lines.at(0);

  UniqueFd client = connect_unix_socket(path);
  ASSERT_TRUE(client);
  EXPECT_TRUE(eventually([&] { return relay.counters().connections.load() == 1; }));
  client.reset();
  EXPECT_TRUE(eventually([&] { loop.flush(); return !relay.client_connected(); }));
  write_all(relay.device_fd(), "yy");
  EXPECT_TRUE(eventually([&] { return relay.counters().output_dropped.load() == 52; }));
  write_all(relay.device_fd(), "z");
  EXPECT_TRUE(eventually([&] { return relay.counters().output_dropped.load() == 53; }));
  EXPECT_EQ(said(), 2u);
  relay.stop();
}

TEST(ConsoleSocket, FileIsRemovedAtTheEndAndAStaleOneReplaced) {
  test::TempDir dir;
  const std::string path = dir.file("console.sock");
  {
    // A socket file nobody listens on, as a killed kvmmio leaves it.
    UniqueFd stale(::socket(AF_UNIX, SOCK_STREAM, 0));
    const sockaddr_un addr = unix_socket_address(path);
    ASSERT_EQ(::bind(stale.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  }
  {
    ConsoleRelay relay(ConsoleDestination{Kind::kSocket, path});
    EventLoop loop;
    relay.start(loop);
    EXPECT_TRUE(connect_unix_socket(path));
    relay.stop();
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the socket file is left behind";
}

TEST(ConsoleSocket, PathInUseOrNotASocketNamesTheFix) {
  test::TempDir dir;
  const std::string path = dir.file("console.sock");
  ConsoleRelay live(ConsoleDestination{Kind::kSocket, path});
  live.publish();
  try {
    ConsoleRelay again(ConsoleDestination{Kind::kSocket, path});
    ADD_FAILURE() << "a second relay took a socket in use";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("choose another path"), std::string::npos) << e.what();
  }
  const std::string plain = dir.file("plain");
  test::write_file(plain, {1, 2, 3});
  try {
    ConsoleRelay relay(ConsoleDestination{Kind::kSocket, plain});
    ADD_FAILURE() << "a regular file was replaced";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a socket"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_file(plain).size(), 3u);
}

// --user: what kvmmio made is given to the user it becomes; a file that
// was there keeps its owner.
TEST(ConsoleOwner, WhatKvmmioMadeGoesToTheUserItBecomes) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files away";
  constexpr uid_t kUid = 65534;
  constexpr gid_t kGid = 65534;
  test::TempDir dir;
  auto owner = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return std::pair<uid_t, gid_t>(st.st_uid, st.st_gid);
  };
  {
    ConsoleEnds made = open_console({Kind::kFile, dir.file("new.log")}, TerminalRole::kNotTerminal);
    made.give_to(kUid, kGid);
    EXPECT_EQ(owner(dir.file("new.log")), std::make_pair(kUid, kGid));
  }
  test::write_file(dir.file("old.log"), {'x'});
  {
    ConsoleEnds existing = open_console({Kind::kFile, dir.file("old.log")}, TerminalRole::kNotTerminal);
    existing.give_to(kUid, kGid);
    EXPECT_EQ(owner(dir.file("old.log")).first, 0u) << "an existing file changed owner";
  }
  {
    ConsoleEnds sock = open_console({Kind::kSocket, dir.file("c.sock")}, TerminalRole::kNotTerminal);
    sock.give_to(kUid, static_cast<gid_t>(-1));
    sock.relay->publish();  // given before it appears
    EXPECT_EQ(owner(dir.file("c.sock")).first, kUid);
  }
  ConsoleEnds pty = open_console({Kind::kPty, {}}, TerminalRole::kNotTerminal);
  pty.give_to(kUid, kGid);
  EXPECT_EQ(owner(pty.relay->path()).first, kUid);
}

}  // namespace
}  // namespace kvmmio::vmm
