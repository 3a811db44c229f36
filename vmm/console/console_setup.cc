// SPDX-License-Identifier: BSD-2-Clause
// The console devices' fds for each --console destination (see the header).
#include "vmm/console/console_setup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/user_path.h"

namespace kvmmio::vmm {

void ConsoleEnds::give_to(uid_t uid, gid_t gid) {
  if (file && created_file && ::fchown(file.get(), uid, gid) != 0)
    throw UserError(std::string("--console ...,file=: cannot give the file to --user/--group: ") +
                    std::strerror(errno));
  if (relay) relay->give_to(uid, gid);
}

namespace {

// Appended: a restarted VM's console follows the last one's, as a log
// does. Opened by the rule of kvmmio/base/user_path.h: created with O_EXCL
// (mode 0600: a guest's console can show secrets), or an existing file,
// FIFO or terminal that root or the --user owns where other users can
// write. O_NONBLOCK stays: a FIFO without a reader is refused at once
// (ENXIO) rather than hanging here, and the console waits for room itself.
UniqueFd open_console_file(const ConsoleDestination& destination, bool& created) {
  constexpr int kFlags = O_WRONLY | O_APPEND | O_NONBLOCK;
  const std::string shown = "--console ...," + destination.to_string();
  PathPlace place = find_user_path(destination.path, shown);
  UniqueFd fd = create_in_place(place, kFlags, 0600);
  created = static_cast<bool>(fd);
  if (!fd && errno == EEXIST) {  // there already: its owner and mode stay
    const FoundFile found = find_in_place(std::move(place), shown);
    const mode_t mode = found.st.st_mode;
    if (found.exists() && !S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISCHR(mode))
      throw UserError(shown + ": " + file_kind(mode) +
                      ", not a file, FIFO or terminal to write; give a file's path");
    fd = open_found(found, shown, kFlags);
  }
  if (fd) return fd;
  const int err = errno;
  throw UserError(shown + ": cannot open " + destination.path + " for writing: " +
                  std::strerror(err) +
                  (err == ENXIO ? " (a FIFO needs its reader first)"
                                : " (does its directory exist and may you write there?)"));
}

}  // namespace

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
      ends.file = open_console_file(destination, ends.created_file);
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
