// SPDX-License-Identifier: BSD-2-Clause
// The console devices' fds for each --console destination (see the header).
#include "vmm/console_setup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"

namespace kvmmio::vmm {

void ConsoleEnds::give_to(uid_t uid, gid_t gid) {
  if (file && created_file && ::fchown(file.get(), uid, gid) != 0)
    throw UserError(std::string("--console ...,file=: cannot give the file to --user/--group: ") +
                    std::strerror(errno));
  if (relay) relay->give_to(uid, gid);
}

ConsoleEnds open_console(const ConsoleDestination& destination, TerminalRole stdin_role) {
  ConsoleEnds ends;
  switch (destination.kind) {
    case ConsoleDestination::Kind::kStdio:
      ends.stdio = true;
      ends.out = STDOUT_FILENO;
      if (stdin_role == TerminalRole::kBackground) {
        KVMMIO_LOG_INFO("kvmmio runs in the background of its terminal: the guest console gets "
                        "no input from it (for a console to attach to later, use --console "
                        "...,pty or socket=PATH)");
      } else {
        ends.in = STDIN_FILENO;
        ends.escapes = stdin_role != TerminalRole::kNotTerminal;
      }
      break;
    case ConsoleDestination::Kind::kFile:
      // Appended: a restarted VM's console follows the last one's, as a log
      // does. O_NONBLOCK: a FIFO without a reader is refused at once (ENXIO)
      // rather than hanging here; the console waits for room itself.
      {
        constexpr int kFlags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
        // Created here, or there already (then its owner and mode stay).
        ends.file.reset(::open(destination.path.c_str(), kFlags | O_CREAT | O_EXCL, 0600));
        ends.created_file = static_cast<bool>(ends.file);
        if (!ends.file && errno == EEXIST) ends.file.reset(::open(destination.path.c_str(), kFlags));
      }
      if (!ends.file)
        throw UserError("--console ...," + destination.to_string() + ": cannot open " +
                        destination.path + " for writing: " + std::strerror(errno) +
                        " (does its directory exist and may you write there?)");
      ends.out = ends.file.get();
      break;
    case ConsoleDestination::Kind::kPty:
    case ConsoleDestination::Kind::kSocket:
      ends.relay = std::make_unique<ConsoleRelay>(destination);
      ends.in = ends.out = ends.relay->device_fd();
      // Not a log line: the user needs it whatever --log-level says.
      std::fprintf(stderr, "kvmmio: guest console on %s %s\n",
                   destination.kind == ConsoleDestination::Kind::kPty ? "pty" : "socket",
                   ends.relay->path().c_str());
      std::fflush(stderr);
      break;
  }
  return ends;
}

}  // namespace kvmmio::vmm
