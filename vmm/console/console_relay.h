// SPDX-License-Identifier: BSD-2-Clause
// ConsoleRelay: the guest console on a pseudo-terminal (--console ...,pty)
// or a unix socket (--console ...,socket=PATH), for a VMM that runs like a
// service and a user who attaches later, leaves, and comes back.
//
// The console devices see one end of a socket pair (device_fd(): their
// input and output fd, as stdin/stdout would be); the relay, on an event
// loop, copies between the other end and the peer: the pty's master side,
// or the socket's one client.
//
// Output never waits for the peer, so nobody's terminal, and no attached
// client that stopped reading, can slow the guest down or make the VMM
// hold output: what the peer does not take at once (no client connected,
// a pty nobody reads whose buffer is full, a client's full socket) is
// dropped and counted (output_dropped). Input that the guest has no room
// for once the socket pair is full is dropped and counted too. Both are
// bounded by the kernel's buffers; the relay itself holds at most one
// read's bytes. Drops, clients coming and going and refused clients are
// logged rate-limited (LogLimit).
//
// pty: the relay keeps the slave side open itself, in raw mode, so the
// master never reads EIO (nor polls HUP) while nobody has the terminal
// open, and input from whoever opens it later arrives. Output written
// meanwhile waits in the terminal's buffer (some KiB) for the next reader.
//
// socket: created as the control socket's is (unix_socket.h): mode 0600
// from birth, in a private directory until publish() moves it to PATH; a
// stale socket file left by a kvmmio that died is replaced only where
// nobody else could have put it, anything else at PATH is refused. Only
// root, kvmmio's own user and --user's may attach (SO_PEERCRED): any
// other client is closed at once. One client at a time: a second one is
// told so and closed. The file is removed at destruction.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/base/unique_fd.h"
#include "vmm/console/console_destination.h"
#include "vmm/process/unix_socket.h"

namespace kvmmio::vmm {

#define KVMMIO_CONSOLE_RELAY_COUNTERS(C)                                                   \
  C(output_bytes, "console output passed to the pty or the socket's client")              \
  C(output_dropped, "console output dropped: no socket client, or the peer's buffer full") \
  C(input_bytes, "console input from the pty or the socket's client passed to the guest") \
  C(input_dropped, "console input dropped because the guest's side was full")              \
  C(connections, "socket clients accepted")                                                \
  C(refused_connections, "socket clients refused because another one was connected")       \
  C(foreign_connections, "socket clients of another user closed at once (only root, kvmmio's and --user's)")
struct ConsoleRelayCounters {
  KVMMIO_CONSOLE_RELAY_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_CONSOLE_RELAY_COUNTERS)
};

class ConsoleRelay {
 public:
  // At most this many bytes per read, and per callback.
  static constexpr size_t kChunk = 4096;

  // Opens the pty or the socket (kPty or kSocket; UserError naming the fix
  // when that fails). Nothing is relayed before start().
  explicit ConsoleRelay(const ConsoleDestination& destination);
  ~ConsoleRelay();
  ConsoleRelay(const ConsoleRelay&) = delete;
  ConsoleRelay& operator=(const ConsoleRelay&) = delete;

  // The console devices' end: input and output, non-blocking.
  int device_fd() const { return device_.get(); }
  // The pty's slave path (/dev/pts/N) or the socket's path.
  const std::string& path() const { return path_; }
  bool client_connected() const { return static_cast<bool>(client_); }

  // The pty's slave or the socket file to `uid`:`gid` (-1: unchanged), for
  // --user/--group: the user kvmmio becomes may attach. The socket's
  // before publish(). UserError if not.
  void give_to(uid_t uid, gid_t gid);
  // The socket appears at PATH (UserError naming the fix if PATH was
  // taken meanwhile); nothing for a pty. Needs the privileges that made
  // it: before confine.
  void publish() {
    if (listener_) listener_->publish();
  }

  // Relays on `loop` from now on, until stop() (or destruction);
  // publishes the socket first if not done yet.
  void start(EventLoop& loop);
  // Drops every watch; not from the loop's own callbacks.
  void stop();

  const ConsoleRelayCounters& counters() const { return counters_; }

 private:
  void open_pty();
  void on_device_output();
  void on_peer_input();
  void on_connection();
  void drop_client(const char* why);
  // The peer's fd, or -1: no client connected.
  int peer() const { return pty_master_ ? pty_master_.get() : client_.get(); }
  void dropped_output(size_t n, const char* why);

  ConsoleDestination::Kind kind_;
  std::string path_;
  UniqueFd device_, relay_;  // the socket pair
  UniqueFd pty_master_, pty_slave_;
  std::optional<UnixListener> listener_;  // removes the socket file
  UniqueFd client_;
  ConsoleRelayCounters counters_;
  LogLimit output_drop_log_, input_drop_log_, refused_log_, client_log_;
  // Output dropped for want of a client is said once per wait for one
  // (a VM started in the background with a console socket nobody attaches
  // to drops its whole boot log, which the rate limit alone would still
  // print a line of every 1000 writes); set again when a client connects.
  bool told_no_client_ = false;
  EventLoop* loop_ = nullptr;
  // Last: dropped first, so no callback runs on a half-destroyed relay.
  EventLoop::Registration output_watch_, peer_watch_, listen_watch_;
};

}  // namespace kvmmio::vmm
