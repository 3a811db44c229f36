// SPDX-License-Identifier: BSD-2-Clause
// ControlServer: the control socket (--api-socket PATH) on the control
// thread's event loop: one JSON request per line, each answered with one
// JSON line (control_protocol.h says which).
//
// The socket is created as the console's is (unix_socket.h): mode 0600
// from birth, in a private directory until publish() moves it to PATH, a
// stale socket file replaced only where nobody else could have put it,
// anything else at PATH refused; removed at destruction. With
// --user/--group it is given to that user (give_to()) before it appears.
// Only root, kvmmio's own user and --user's may talk to it (SO_PEERCRED):
// any other client is closed at once.
//
// A client is as hostile as the guest, so everything it can make kvmmio
// do is bounded (docs/security.md, "Budgets and bounds"):
// - at most kMaxClients at once; one more is told so and closed;
// - a request line has at most kMaxLine bytes; a longer one is answered
//   with an error and the client closed (nothing more is buffered);
// - per callback, at most one request: a peek and one read of at most
//   kMaxLine + 1 bytes, and one reply; a client that sends many requests
//   at once is served one per turn of the loop, between the signals and
//   the other clients;
// - a client that completes no request for kIdleTimeout is closed (one
//   timer for all of them, on the loop), so silent or trickling clients
//   cannot keep `kvmmio ctl ... quit` out for long;
// - answers are never queued: a client whose socket has no room for one
//   (it does not read its answers) is not read from until it has; an
//   answer that still does not fit closes the client.
// Malformed requests are answered with an error, counted (errors) and
// logged rate-limited (LogLimit).
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/base/unique_fd.h"
#include "vmm/control/control_protocol.h"
#include "vmm/stats/stats.h"
#include "vmm/process/unix_socket.h"

namespace kvmmio::vmm {

#define KVMMIO_CONTROL_COUNTERS(C)                                                                   \
  C(requests, "request lines answered, errors included")                                          \
  C(errors, "requests answered with an error: not JSON, no cmd, an unknown cmd or key, too long") \
  C(clients, "clients accepted")                                                                   \
  C(refused_clients, "clients refused because the most (8) were connected")                        \
  C(dropped_clients, "clients closed by kvmmio: a line too long, or an answer that did not fit")    \
  C(idle_clients, "clients closed after 10 s without a complete request")                          \
  C(foreign_clients, "clients of another user closed at once (only root, kvmmio's and --user's)")
struct ControlCounters {
  KVMMIO_CONTROL_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_CONTROL_COUNTERS)
};

class ControlServer {
 public:
  static constexpr size_t kMaxClients = 8;
  static constexpr size_t kMaxLine = 4096;  // bytes before the newline
  // A client is closed when it has completed no request for this long
  // since it connected or since its last answer. `kvmmio ctl` sends its
  // one request at once; an interactive client (socat) must keep typing.
  static constexpr std::chrono::milliseconds kIdleTimeout{10000};

  // Creates the socket in its private directory (UserError naming the fix
  // when PATH is taken or cannot be made). Nothing is served before
  // start(). `idle_timeout`: kIdleTimeout but in tests.
  explicit ControlServer(std::string path, std::chrono::milliseconds idle_timeout = kIdleTimeout);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  const std::string& path() const { return path_; }
  // Before publish(): the socket file to `uid`:`gid` (-1: unchanged), and
  // `uid` may connect. UserError if not.
  void give_to(uid_t uid, gid_t gid);
  // The socket appears at PATH (UserError naming the fix if PATH was
  // taken meanwhile). Needs the privileges that made it: before confine.
  void publish() { listener_.publish(); }

  // What `info` answers besides the VM's state; before start().
  void set_identity(VmIdentity identity) { identity_ = std::move(identity); }
  // Serves requests on `loop` for `vm` until stop() (publishing first if
  // not done yet); `vm` must outlive it.
  void start(EventLoop& loop, VmControl& vm);
  // Closes every client and stops listening; not from the loop's callbacks.
  void stop();

  const ControlCounters& counters() const { return counters_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Client {
    UniqueFd fd;
    std::string partial;  // a line's start, without a newline yet (<= kMaxLine)
    Clock::time_point idle_since;  // connected, or last answered
    EventLoop::Registration watch;
  };
  void on_connection();
  // Closes the clients idle for idle_timeout_, and arms the timer for the
  // next one to become so (disarmed when nobody is connected).
  void on_idle_timer();
  void arm_idle_timer();
  void on_client(Client& client);
  // Sends one line; false (and the client dropped) if it did not all go.
  bool reply(Client& client, const std::string& line);
  void answer(Client& client, std::string_view request);
  void drop(Client& client, const char* why);

  std::string path_;
  UnixListener listener_;
  std::chrono::milliseconds idle_timeout_;
  UniqueFd idle_timer_;  // made before confinement: the control class may only set it
  ControlCounters counters_;
  LogLimit error_log_, refused_log_, drop_log_, idle_log_;
  bool idle_timer_armed_ = false;
  EventLoop* loop_ = nullptr;
  VmControl* vm_ = nullptr;
  VmIdentity identity_;
  std::array<Client, kMaxClients> clients_;
  // Last: dropped first, so no callback runs on a half-destroyed server.
  EventLoop::Registration listen_watch_, idle_watch_;
};

static_assert(ControlServer::kIdleTimeout == std::chrono::seconds(10), "idle_clients' meaning says 10 s");

}  // namespace kvmmio::vmm
