// SPDX-License-Identifier: BSD-2-Clause
// ConsoleEnds: the fds the console devices use for a --console destination,
// and whatever must live as long as they do (the output file, the relay).
//   stdio   stdin and stdout. Input is read unless stdin is the
//           controlling terminal of a kvmmio running in the background
//           (kvmmio run ... &): then the terminal is left to the shell
//           and no input is read (reading would stop kvmmio with SIGTTIN,
//           or fail with it ignored). Ctrl-A escapes where stdin is a
//           terminal; raw mode is RawTerminal's decision.
//   file    output appended to PATH (created mode 0600: a guest's console
//           can show secrets), opened by the rule of
//           kvmmio/base/user_path.h; no input.
//   pty     ConsoleRelay; the /dev/pts path is printed on stderr.
//   socket  ConsoleRelay; the socket's path is printed on stderr.
// Ctrl-A escapes are a terminal user's: a pty or socket passes Ctrl-A to
// the guest as it is (stop such a VM with a signal).
#pragma once

#include <sys/types.h>

#include <memory>

#include "kvmmio/base/unique_fd.h"
#include "vmm/console/console_destination.h"
#include "vmm/console/console_relay.h"
#include "vmm/process/raw_terminal.h"

namespace kvmmio::vmm {

struct ConsoleEnds {
  int in = -1;  // -1: no console input
  int out = -1;
  bool escapes = false;
  bool stdio = false;  // the terminal may be taken over (RawTerminal on stdin)
  UniqueFd file;
  bool created_file = false;  // by kvmmio now: given to --user (an existing one keeps its owner)
  std::unique_ptr<ConsoleRelay> relay;

  // --user/--group: the console file kvmmio created, its pty or socket
  // belongs to the user kvmmio becomes (-1: unchanged), who can then read
  // or attach to it without root. UserError if it cannot be given.
  void give_to(uid_t uid, gid_t gid);
};

// Opens the destination; UserError naming the fix when it cannot.
// `stdin_role` is terminal_role(STDIN_FILENO), passed in for the tests.
ConsoleEnds open_console(const ConsoleDestination& destination, TerminalRole stdin_role);

}  // namespace kvmmio::vmm
