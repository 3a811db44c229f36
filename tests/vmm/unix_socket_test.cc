// SPDX-License-Identifier: BSD-2-Clause
// The listening sockets' rules (unix_socket.h) over real sockets and
// directories: what may be replaced at PATH and what is refused, the mode
// whatever the umask, the probe that never blocks, the owner given before
// the socket appears; and, for the control socket and the console relay,
// that only root, kvmmio's user and --user's are served, and that idle
// control clients are closed so `quit` always gets through. CI runs these
// as root; the cases that need other users skip otherwise.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../virtio/harness.h"
#include "fake_vm_control.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "test_files.h"
#include "vmm/console/console_relay.h"
#include "vmm/control/control_server.h"
#include "vmm/process/unix_socket.h"

namespace kvmmio::vmm {
namespace {

using virtio::test::eventually;
using namespace std::chrono_literals;

constexpr uid_t kUser = 65534;   // --user
constexpr uid_t kOther = 65533;  // anybody else

// A socket bound at `path`, not listening yet.
UniqueFd bound_socket(const std::string& path) {
  UniqueFd s(::socket(AF_UNIX, SOCK_STREAM, 0));
  const sockaddr_un addr = unix_socket_address(path);
  EXPECT_EQ(::bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << path;
  return s;
}

// A socket file at `path` nobody listens on, as a killed kvmmio leaves it.
void make_stale_socket(const std::string& path) { bound_socket(path); }

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// The UserError's text, or "" when `f` threw none.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// Entries of `dir` (the private directories left behind would show).
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

TEST(UnixSocket, AListenerWithAFullBacklogIsInUseAndStartUpDoesNotWait) {
  test::TempDir dir;
  const std::string path = dir.file("api.sock");
  UniqueFd planted = bound_socket(path);
  ASSERT_EQ(::listen(planted.get(), 0), 0);
  const sockaddr_un addr = unix_socket_address(path);
  // Never accepted: connect until the backlog is full.
  std::vector<UniqueFd> waiting;
  for (int i = 0; i < 64; ++i) {
    UniqueFd c(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
    if (::connect(c.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ASSERT_EQ(errno, EAGAIN) << std::strerror(errno);
      break;
    }
    waiting.push_back(std::move(c));
  }
  ASSERT_LT(waiting.size(), 64u) << "the backlog never filled";
  const auto start = std::chrono::steady_clock::now();
  const std::string e = error_of([&] { UnixListener l(path, "--api-socket " + path, 8); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_NE(e.find("--api-socket " + path + ": " + path + " is in use"), std::string::npos) << e;
  EXPECT_NE(e.find("choose another path"), std::string::npos) << e;
  EXPECT_TRUE(is_socket(path)) << "the live socket was removed";
}

// A backend's socket (--fs socket=PATH): connected where something
// listens, and each other case named with its fix.
TEST(UnixSocket, AUserSocketIsConnectedWhereABackendListensAndNamedWhereNot) {
  test::TempDir dir;
  const std::string path = dir.file("backend.sock");
  const std::string fix = "start the backend first";
  std::string e = error_of([&] { connect_user_socket(path, "--fs x", fix); });
  EXPECT_NE(e.find("--fs x: " + path + ": No such file or directory; start the backend first"), std::string::npos)
      << e;
  make_stale_socket(path);
  e = error_of([&] { connect_user_socket(path, "--fs x", fix); });
  EXPECT_NE(e.find("nothing listens on it); start the backend first"), std::string::npos) << e;
  ASSERT_EQ(::unlink(path.c_str()), 0);
  UniqueFd listening = bound_socket(path);
  ASSERT_EQ(::listen(listening.get(), 1), 0);
  UniqueFd client = connect_user_socket(path, "--fs x", fix);
  ASSERT_TRUE(client);
  UniqueFd served(::accept4(listening.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(served);
  ASSERT_EQ(::write(client.get(), "x", 1), 1);
  char c = 0;
  EXPECT_EQ(::read(served.get(), &c, 1), 1);
  // A listener whose backlog is full does not hold the caller.
  const std::string full = dir.file("full.sock");
  UniqueFd stuck = bound_socket(full);
  ASSERT_EQ(::listen(stuck.get(), 0), 0);
  std::vector<UniqueFd> waiting;
  for (int i = 0; i < 4; ++i) {
    UniqueFd c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    const sockaddr_un a = unix_socket_address(full);
    if (::connect(c.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) break;
    waiting.push_back(std::move(c));
  }
  const auto start = std::chrono::steady_clock::now();
  e = error_of([&] { connect_user_socket(full, "--fs x", fix); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(e.find("takes no more connections"), std::string::npos) << e;
  // Not a socket: named as what it is.
  const std::string file = dir.file("file");
  test::write_file(file, {'x'});
  e = error_of([&] { connect_user_socket(file, "--fs x", fix); });
  EXPECT_NE(e.find("is a regular file, not a unix socket"), std::string::npos) << e;
}

// Where others can write, a link to a listening socket is not followed:
// another user could have planted it, pointing at any root's socket.
TEST(UnixSocket, AUserSocketThroughALinkWhereOthersCanWriteIsRefused) {
  test::TempDir dir;
  const std::string target = dir.file("real.sock");
  UniqueFd listening = bound_socket(target);
  ASSERT_EQ(::listen(listening.get(), 1), 0);
  test::TempDir open_dir;
  ASSERT_EQ(::chmod(open_dir.path().c_str(), 01777), 0);
  const std::string link = open_dir.file("planted.sock");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const std::string e = error_of([&] { connect_user_socket(link, "--fs x", "start it"); });
  EXPECT_NE(e.find("--fs x"), std::string::npos) << e;
  EXPECT_NE(e.find("link"), std::string::npos) << e;
  // Through a link in a directory only root can write, it is followed.
  test::TrustedDir trusted;
  if (const char* why = trusted.skip_reason()) GTEST_SKIP() << why;
  ASSERT_EQ(::symlink(target.c_str(), trusted.file("backend.sock").c_str()), 0);
  EXPECT_TRUE(connect_user_socket(trusted.file("backend.sock"), "--fs x", "start it"));
}

TEST(UnixSocket, AStaleSocketIsReplacedInADirectoryOnlyKvmmioCanWrite) {
  for (const mode_t mode : {0700, 0755}) {
    SCOPED_TRACE(mode);
    test::TempDir dir;
    ASSERT_EQ(::chmod(dir.file("").c_str(), mode), 0);
    const std::string path = dir.file("vm.sock");
    make_stale_socket(path);
    UnixListener l(path, "--api-socket " + path, 8);
    l.publish();
    EXPECT_TRUE(connect_unix_socket(path)) << std::strerror(errno);
  }
}

TEST(UnixSocket, AStaleSocketInADirectoryOthersCanWriteIsLeftAndNamed) {
  for (const mode_t mode : {01777, 0777, 0775}) {
    SCOPED_TRACE(mode);
    test::TempDir dir;
    ASSERT_EQ(::chmod(dir.file("").c_str(), mode), 0);
    // Group-writable counts when the group is not root's (user_path.h's
    // writable_by_others): nobody's group, as root (the test's owner) can.
    if (mode == 0775 && ::geteuid() == 0) {
      ASSERT_EQ(::chown(dir.file("").c_str(), -1, 65534), 0);
    }
    const std::string path = dir.file("vm.sock");
    make_stale_socket(path);
    UnixListener l(path, "--api-socket " + path, 8);  // the stale one is judged when it would be replaced
    const std::string e = error_of([&] { l.publish(); });
    EXPECT_NE(e.find("--api-socket " + path + ": " + path + " is a stale socket"), std::string::npos) << e;
    EXPECT_NE(e.find("in a directory other users can write"), std::string::npos) << e;
    EXPECT_NE(e.find("remove it yourself, or choose a path in a directory only you can write, e.g. /run/kvmmio"),
              std::string::npos)
        << e;
    EXPECT_TRUE(is_socket(path));
    EXPECT_FALSE(connect_unix_socket(path)) << "replaced";
  }
}

TEST(UnixSocket, AStaleSocketOfAnotherUserIsLeftButOneOfTheUserGivenIsReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make another user's socket";
  test::TempDir dir;
  const std::string path = dir.file("vm.sock");
  make_stale_socket(path);
  ASSERT_EQ(::lchown(path.c_str(), kOther, kOther), 0);
  {
    UnixListener l(path, "--api-socket " + path, 8);
    l.give_to(kUser, static_cast<gid_t>(-1));
    const std::string e = error_of([&] { l.publish(); });
    EXPECT_NE(e.find("is a stale socket (nothing listens on it) owned by uid 65533"), std::string::npos) << e;
  }
  // A socket of --user's own (its last run was killed) is replaced.
  ASSERT_EQ(::lchown(path.c_str(), kUser, kUser), 0);
  UnixListener l(path, "--api-socket " + path, 8);
  l.give_to(kUser, static_cast<gid_t>(-1));
  l.publish();
  EXPECT_TRUE(connect_unix_socket(path));
}

TEST(UnixSocket, ALinkAtPathIsRefusedAndItsTargetKeepsModeAndOwner) {
  test::TempDir dir;
  const std::string victim = dir.file("victim");
  test::write_file(victim, {'v'});
  ASSERT_EQ(::chmod(victim.c_str(), 0644), 0);
  struct stat before {};
  ASSERT_EQ(::stat(victim.c_str(), &before), 0);
  const std::string path = dir.file("vm.sock");
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  const std::string e = error_of([&] {
    UnixListener l(path, "--api-socket " + path, 8);
    l.give_to(::geteuid() == 0 ? kUser : static_cast<uid_t>(-1), static_cast<gid_t>(-1));
    l.publish();
  });
  EXPECT_NE(e.find(path + " exists and is not a socket; choose another path"), std::string::npos) << e;
  struct stat after {};
  ASSERT_EQ(::stat(victim.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode, before.st_mode);
  EXPECT_EQ(after.st_uid, before.st_uid);
  EXPECT_EQ(after.st_gid, before.st_gid);
  EXPECT_EQ(test::read_file(victim), std::vector<uint8_t>{'v'});
  struct stat link {};
  ASSERT_EQ(::lstat(path.c_str(), &link), 0);
  EXPECT_TRUE(S_ISLNK(link.st_mode)) << "the link was replaced";
}

TEST(UnixSocket, TheSocketAppearsMode0600WhateverTheUmaskAndOnlyWhenPublished) {
  test::TempDir dir;
  const std::string path = dir.file("vm.sock");
  const mode_t old = ::umask(0);
  std::optional<UnixListener> l;
  l.emplace(path, "--api-socket " + path, 8);
  ::umask(old);
  EXPECT_FALSE(connect_unix_socket(path)) << "reachable before publish()";
  const std::vector<std::string> made = entries(dir.file(""));
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].rfind(".kvmmio-", 0), 0u) << made[0];
  struct stat st {};
  ASSERT_EQ(::stat(dir.file(made[0]).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u) << "the private directory";
  l->publish();
  l->publish();  // the second time does nothing
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{"vm.sock"}) << "the private directory is left";
  l.reset();
  EXPECT_TRUE(entries(dir.file("")).empty()) << "the socket is left";
  // Never published: the private directory goes too.
  l.emplace(path, "--api-socket " + path, 8);
  l.reset();
  EXPECT_TRUE(entries(dir.file("")).empty());
}

TEST(UnixSocket, TheUserGivenOwnsItBeforeItAppears) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files away";
  test::TempDir dir;
  const std::string path = dir.file("vm.sock");
  UnixListener l(path, "--api-socket " + path, 8);
  l.give_to(kUser, kUser);
  l.publish();
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kUser);
  EXPECT_EQ(st.st_gid, kUser);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(UnixSocket, ADirectoryTooLongForThePrivateOneIsNamed) {
  test::TempDir dir;
  const size_t base = dir.file("").size();  // with the trailing slash
  // PATH fits in a socket address; DIR/.kvmmio-XXXXXX/s does not.
  const std::string deep = dir.file(std::string(100 - base, 'd'));
  ASSERT_EQ(::mkdir(deep.c_str(), 0700), 0);
  const std::string path = deep + "/a";
  ASSERT_LE(path.size(), kMaxUnixSocketPath);
  const std::string e = error_of([&] { UnixListener l(path, "--api-socket " + path, 8); });
  EXPECT_NE(e.find("private directory next to " + path), std::string::npos) << e;
  EXPECT_NE(e.find("choose a path in a shorter directory"), std::string::npos) << e;
}

// --- Only the owner is served ---------------------------------------------------

// Runs `f` in a child as `uid` (gid too) and returns its exit status.
int as_user(uid_t uid, const std::function<int()>& f) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Raw calls: only this thread exists in the child.
    if (::syscall(SYS_setresgid, uid, uid, uid) != 0 || ::syscall(SYS_setresuid, uid, uid, uid) != 0) _exit(100);
    _exit(f());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

// What `fd` says first (within 5 s; "" if it closed or said nothing).
std::string first_words(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 5000) != 1) return "";
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// 0: `request` answered; 1: closed without an answer; 11: no answer.
int ask(const std::string& path, const std::string& request) {
  UniqueFd c = connect_unix_socket(path);
  if (!c) return 10;
  if (::send(c.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size()))
    return 1;  // closed already
  pollfd p{c.get(), POLLIN, 0};
  if (::poll(&p, 1, 5000) != 1) return 11;
  return first_words(c.get()).empty() ? 1 : 0;
}

TEST(ControlServerPeers, AnotherUsersClientIsClosedAndTheGivenUserServed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as other users";
  test::TempDir dir;
  ASSERT_EQ(::chmod(dir.file("").c_str(), 0755), 0);
  const std::string path = dir.file("api.sock");
  EventLoop loop("control");
  test::FakeVmControl vm;
  ControlServer server(path);
  server.give_to(kUser, static_cast<gid_t>(-1));
  server.start(loop, vm);
  // What the mode would keep out anyway: the check does not depend on it.
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  EXPECT_EQ(as_user(kOther, [&] { return ask(path, "{\"cmd\":\"quit\"}\n"); }), 1);
  EXPECT_EQ(vm.quits, 0);
  EXPECT_EQ(server.counters().foreign_clients, 1u);
  EXPECT_EQ(as_user(kUser, [&] { return ask(path, "{\"cmd\":\"stats\"}\n"); }), 0);
  EXPECT_EQ(ask(path, "{\"cmd\":\"stats\"}\n"), 0) << "root";
  EXPECT_EQ(server.counters().clients, 2u);
  server.stop();
}

TEST(ConsoleRelayPeers, AnotherUsersClientIsClosedAndTheGivenUserAttaches) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as other users";
  test::TempDir dir;
  ASSERT_EQ(::chmod(dir.file("").c_str(), 0755), 0);
  const std::string path = dir.file("console.sock");
  ConsoleRelay relay(ConsoleDestination{ConsoleDestination::Kind::kSocket, path});
  relay.give_to(kUser, static_cast<gid_t>(-1));
  EventLoop loop;
  relay.start(loop);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  // A refused client sees its connection closed (a served one would wait).
  EXPECT_EQ(as_user(kOther, [&] { return ask(path, "x"); }), 1);
  EXPECT_EQ(relay.counters().foreign_connections.load(), 1u);
  EXPECT_EQ(relay.counters().connections.load(), 0u);
  EXPECT_EQ(as_user(kUser, [&] { return connect_unix_socket(path) ? 0 : 1; }), 0);
  EXPECT_TRUE(eventually([&] { return relay.counters().connections.load() == 1; }));
  relay.stop();
}

// --- Idle control clients ---------------------------------------------------------

TEST(ControlServerIdle, SilentClientsAreClosedAndQuitGetsThrough) {
  test::TempDir dir;
  const std::string path = dir.file("api.sock");
  EventLoop loop("control");
  test::FakeVmControl vm;
  constexpr auto kTimeout = 200ms;
  ControlServer server(path, kTimeout);
  server.start(loop, vm);
  std::vector<UniqueFd> idle;
  for (size_t i = 0; i < ControlServer::kMaxClients; ++i) {
    idle.push_back(connect_unix_socket(path));
    // Half of them stop mid-line: idle as well.
    if (i % 2) {
      ASSERT_EQ(::send(idle.back().get(), "{\"cmd\"", 6, MSG_NOSIGNAL), 6);
    }
  }
  ASSERT_TRUE(eventually([&] { return server.counters().clients == ControlServer::kMaxClients; }));
  UniqueFd ninth = connect_unix_socket(path);
  EXPECT_NE(first_words(ninth.get()).find("too many clients"), std::string::npos);
  EXPECT_EQ(server.counters().refused_clients, 1u);
  EXPECT_EQ(server.counters().idle_clients, 0u) << "closed before their time";
  ASSERT_TRUE(eventually([&] { return server.counters().idle_clients == ControlServer::kMaxClients; }));
  for (const UniqueFd& c : idle) EXPECT_NE(first_words(c.get()).find("no complete request for 200 ms"), std::string::npos);
  EXPECT_EQ(ask(path, "{\"cmd\":\"quit\"}\n"), 0);
  EXPECT_EQ(vm.quits, 1);
  server.stop();
}

TEST(ControlServerIdle, AClientThatKeepsAskingStays) {
  test::TempDir dir;
  const std::string path = dir.file("api.sock");
  EventLoop loop("control");
  test::FakeVmControl vm;
  ControlServer server(path, 150ms);
  server.start(loop, vm);
  UniqueFd c = connect_unix_socket(path);
  ASSERT_TRUE(c);
  const std::string request = "{\"cmd\":\"resume\"}\n";
  const auto until = std::chrono::steady_clock::now() + 600ms;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(::send(c.get(), request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
    char buf[256];
    ASSERT_GT(::recv(c.get(), buf, sizeof buf, 0), 0);
    ::usleep(40000);
  }
  EXPECT_EQ(server.counters().idle_clients, 0u);
  server.stop();
}

}  // namespace
}  // namespace kvmmio::vmm
