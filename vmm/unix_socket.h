// SPDX-License-Identifier: BSD-2-Clause
// The unix stream sockets kvmmio listens on (--console ...,socket=PATH and
// --api-socket PATH): one way to create them, so both get the same
// guarantees and the same messages.
//
// listen_unix_socket() binds PATH, makes it mode 0600 before listen() (so
// no other user ever connects, whatever the umask), and replaces a stale
// socket file left by a kvmmio that was killed (one nobody listens on);
// anything else at PATH (a live socket, a regular file, a directory) is
// refused with a message naming the fix.
#pragma once

#include <sys/un.h>

#include <string>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {

// sun_path holds the path and its terminating NUL.
constexpr size_t kMaxUnixSocketPath = sizeof(sockaddr_un{}.sun_path) - 1;

// UsageError (starting with `shown`, e.g. "--api-socket /x") when `path`
// is empty or too long for a unix socket.
void check_unix_socket_path(const std::string& path, const std::string& shown);

sockaddr_un unix_socket_address(const std::string& path);

// The listening socket (non-blocking, close-on-exec). UserError starting
// with `shown` when PATH is taken or cannot be created. The caller removes
// PATH when it is done (unlink), once the socket is bound.
UniqueFd listen_unix_socket(const std::string& path, const std::string& shown, int backlog);

// Connects a blocking client socket; an invalid fd (errno set) on failure.
UniqueFd connect_unix_socket(const std::string& path);

}  // namespace kvmmio::vmm
