// SPDX-License-Identifier: BSD-2-Clause
// Where the guest console goes (--console ...,DEST): the VMM's stdin and
// stdout (stdio, the default), an output file, a pseudo-terminal to attach
// to later, or a unix socket clients connect to. Parsing only: opening is
// ConsoleRelay's (pty, socket) and run_command's (stdio, file) job.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvmmio::vmm {

struct ConsoleDestination {
  enum class Kind { kStdio, kFile, kPty, kSocket };
  Kind kind = Kind::kStdio;
  std::string path;  // kFile, kSocket

  // "stdio", "file=PATH", "pty", "socket=PATH" (what --console takes back).
  std::string to_string() const;
};

// One item of --console's comma list: the destination it names, or
// nullopt when the item is no destination (a transport key such as
// version=1). `shown` prefixes error messages (UsageError).
std::optional<ConsoleDestination> parse_console_destination(std::string_view item,
                                                            const std::string& shown);

}  // namespace kvmmio::vmm
