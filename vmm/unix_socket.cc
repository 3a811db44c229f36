// SPDX-License-Identifier: BSD-2-Clause
// Listening unix sockets (see the header).
#include "vmm/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"
#include "vmm/options.h"

namespace kvmmio::vmm {
namespace {

// A socket file nobody listens on any more (its kvmmio died): connecting is
// refused.
bool stale_socket(const std::string& path) {
  UniqueFd probe = connect_unix_socket(path);
  return !probe && errno == ECONNREFUSED;
}

}  // namespace

void check_unix_socket_path(const std::string& path, const std::string& shown) {
  if (path.empty()) throw UsageError(shown + ": needs a path, e.g. /run/kvmmio/vm0.sock");
  if (path.size() > kMaxUnixSocketPath)
    throw UsageError(shown + ": the socket path is " + std::to_string(path.size()) +
                     " bytes; a unix socket path has at most " + std::to_string(kMaxUnixSocketPath) +
                     ": choose a shorter one (e.g. in /run or /tmp)");
}

sockaddr_un unix_socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // The length was checked when the option was parsed; cut, never overrun.
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size(), kMaxUnixSocketPath));
  return addr;
}

UniqueFd connect_unix_socket(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fd;
  const sockaddr_un addr = unix_socket_address(path);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    fd.reset();
    errno = err;
  }
  return fd;
}

UniqueFd listen_unix_socket(const std::string& path, const std::string& shown, int backlog) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw UserError(shown + ": " + path + " exists and is not a socket; choose another path");
    if (!stale_socket(path))
      throw UserError(shown + ": " + path +
                      " is in use (something listens on it, another kvmmio?); choose another path");
    ::unlink(path.c_str());
  }
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener) throw_errno(shown + ": socket");
  const sockaddr_un addr = unix_socket_address(path);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw UserError(shown + ": cannot create " + path + ": " + std::strerror(errno) +
                    " (does its directory exist and is it writable?)");
  // Before listen(): until then nobody can connect, whatever the umask gave.
  if (::chmod(path.c_str(), 0600) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    throw UserError(shown + ": chmod 0600 " + path + ": " + std::strerror(err));
  }
  if (::listen(listener.get(), backlog) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    errno = err;
    throw_errno(shown + ": listen");
  }
  return listener;
}

}  // namespace kvmmio::vmm
