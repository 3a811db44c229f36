// SPDX-License-Identifier: BSD-2-Clause
// The unix stream sockets kvmmio listens on (--console ...,socket=PATH and
// --api-socket PATH): one way to create them, so both get the same
// guarantees and the same messages.
//
// kvmmio usually runs as root and PATH may be in a directory other users
// can write (/tmp), so nothing is done by PATH that another user could
// redirect between two steps:
// - the socket is bound with umask 0177 (born mode 0600: no chmod by
//   path) inside a private directory kvmmio makes next to PATH (mode 0700,
//   .kvmmio-XXXXXX in PATH's directory); it listens there, and is given
//   to --user/--group there, where nobody else can reach it;
// - publish() moves it to PATH with renameat2(RENAME_NOREPLACE), relative
//   to PATH's directory opened once, and removes the private directory:
//   PATH appears already listening and owned by whom it should be;
// - a stale socket at PATH (one nobody listens on: its kvmmio was killed)
//   is removed first, but only when nobody else could have put it there:
//   its directory is writable by no other user and the socket is owned
//   by root, kvmmio's user or --user's. Anything else at PATH (a live
//   socket, a link, a file, a directory) is refused with a message naming
//   the fix. Whether something listens is probed without blocking, so a
//   listener planted with a full backlog cannot hang the start-up.
// Clients are served only if they run as root, as kvmmio's user or as
// --user's (SO_PEERCRED): the mode 0600 already keeps others out, this is
// the check that does not depend on it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "kvmmio/base/log_limit.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {

// sun_path holds the path and its terminating NUL.
constexpr size_t kMaxUnixSocketPath = sizeof(sockaddr_un{}.sun_path) - 1;

// UsageError (starting with `shown`, e.g. "--api-socket /x") when `path`
// is empty or too long for a unix socket.
void check_unix_socket_path(const std::string& path, const std::string& shown);

sockaddr_un unix_socket_address(const std::string& path);

// Connects a blocking client socket; an invalid fd (errno set) on failure.
UniqueFd connect_unix_socket(const std::string& path);

// Connects to a socket a user named (a vhost-user backend's), by the rule
// of every user-given path (kvmmio/base/user_path.h): walked without
// following links the rule refuses, another user's socket refused where
// others can write, then connected through the walked file itself
// (/proc/self/fd), so nothing can be swapped in between; never waiting
// for a listener that takes no more connections. The socket is
// non-blocking. UserError
// starting with `shown` for anything but a listening socket, ending with
// `fix` (how to start the listener) where nothing listens there.
UniqueFd connect_user_socket(const std::string& path, const std::string& shown, const std::string& fix);

class UnixListener {
 public:
  // Checks PATH (UserError starting with `shown`, naming the fix, when it
  // is taken) and listens (non-blocking, close-on-exec) in the private
  // directory; nobody can connect before publish().
  UnixListener(std::string path, std::string shown, int backlog);
  // Removes PATH if it is still this socket, or the private directory.
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  bool published() const { return published_; }

  // Before publish(): the socket file to `uid`:`gid` (-1: unchanged), for
  // --user/--group; `uid` may connect from then on. UserError if not.
  void give_to(uid_t uid, gid_t gid);
  // Moves the socket to PATH (see above); does nothing the second time.
  // UserError naming the fix when PATH is taken by then.
  void publish();

  // Accepts one client. One of another user is closed at once, counted in
  // `refused` and logged rate-limited; invalid fd then, as when there was
  // nothing to accept.
  UniqueFd accept(std::atomic<uint64_t>& refused);

 private:
  // The private directory and the socket in it, removed unless published.
  struct PrivateDir {
    int parent = -1;  // the listener's dir_
    std::string name;
    UniqueFd fd;  // O_PATH
    ~PrivateDir();
  };
  enum class AtPath { kNothing, kStale };
  // What is at PATH; UserError for anything that may not be replaced
  // (a stale socket only when `judge_stale`: --user may be unknown yet).
  AtPath inspect(bool judge_stale);
  bool trusted(uid_t uid) const;
  void make_private_dir(const std::string& prefix);

  std::string path_, shown_, name_;  // name_: PATH's last component
  UniqueFd dir_;                      // PATH's directory, O_PATH
  PrivateDir private_;
  UniqueFd fd_;
  dev_t dev_ = 0;  // the socket file, to remove only our own
  ino_t ino_ = 0;
  bool published_ = false;
  uid_t euid_;
  std::optional<uid_t> user_;  // --user's uid, once given
  LogLimit refused_log_;
};

}  // namespace kvmmio::vmm
