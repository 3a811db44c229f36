// SPDX-License-Identifier: BSD-2-Clause
// ControlServer: the control socket (--api-socket PATH) on the control
// thread's event loop: one JSON request per line, each answered with one
// JSON line (control_protocol.h says which).
//
// The socket is created as the console's is (unix_socket.h): mode 0600
// before it listens, a stale socket file replaced, anything else at PATH
// refused; removed at destruction. With --user/--group it is given to
// that user (give_to()).
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
// - answers are never queued: a client whose socket has no room for one
//   (it does not read its answers) is not read from until it has; an
//   answer that still does not fit closes the client.
// Malformed requests are answered with an error, counted (errors) and
// logged rate-limited (LogLimit).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/base/unique_fd.h"
#include "vmm/control_protocol.h"
#include "vmm/stats.h"

namespace kvmmio::vmm {

#define KVMMIO_CONTROL_COUNTERS(C)                                                                   \
  C(requests, "request lines answered, errors included")                                          \
  C(errors, "requests answered with an error: not JSON, no cmd, an unknown cmd or key, too long") \
  C(clients, "clients accepted")                                                                   \
  C(refused_clients, "clients refused because the most (8) were connected")                        \
  C(dropped_clients, "clients closed by kvmmio: a line too long, or an answer that did not fit")
struct ControlCounters {
  KVMMIO_CONTROL_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_CONTROL_COUNTERS)
};

class ControlServer {
 public:
  static constexpr size_t kMaxClients = 8;
  static constexpr size_t kMaxLine = 4096;  // bytes before the newline

  // Creates the socket (UserError naming the fix when PATH is taken or
  // cannot be made). Nothing is served before start().
  explicit ControlServer(std::string path);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  const std::string& path() const { return path_; }
  // The socket file to `uid`:`gid` (-1: unchanged). UserError if not.
  void give_to(uid_t uid, gid_t gid);

  // Serves requests on `loop` for `vm` until stop(); `vm` must outlive it.
  void start(EventLoop& loop, VmControl& vm);
  // Closes every client and stops listening; not from the loop's callbacks.
  void stop();

  const ControlCounters& counters() const { return counters_; }

 private:
  struct Client {
    UniqueFd fd;
    std::string partial;  // a line's start, without a newline yet (<= kMaxLine)
    EventLoop::Registration watch;
  };
  void on_connection();
  void on_client(Client& client);
  // Sends one line; false (and the client dropped) if it did not all go.
  bool reply(Client& client, const std::string& line);
  void answer(Client& client, std::string_view request);
  void drop(Client& client, const char* why);

  std::string path_;
  UniqueFd listener_;
  ControlCounters counters_;
  LogLimit error_log_, refused_log_, drop_log_;
  EventLoop* loop_ = nullptr;
  VmControl* vm_ = nullptr;
  std::array<Client, kMaxClients> clients_;
  // Last: dropped first, so no callback runs on a half-destroyed server.
  EventLoop::Registration listen_watch_;
};

}  // namespace kvmmio::vmm
