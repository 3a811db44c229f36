// SPDX-License-Identifier: BSD-2-Clause
// --console destinations: stdio, file=PATH, pty, socket=PATH, socket (a
// named VM's).
#include "vmm/console/console_destination.h"

#include "vmm/process/usage_error.h"
#include "vmm/process/unix_socket.h"

namespace kvmmio::vmm {

std::string ConsoleDestination::to_string() const {
  switch (kind) {
    case Kind::kStdio: return "stdio";
    case Kind::kFile: return "file=" + path;
    case Kind::kPty: return "pty";
    case Kind::kSocket: return "socket=" + path;
  }
  return "?";
}

std::optional<ConsoleDestination> parse_console_destination(std::string_view item,
                                                            const std::string& shown) {
  ConsoleDestination d;
  const size_t eq = item.find('=');
  const std::string_view key = item.substr(0, eq);
  const std::string value(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
  if (key == "stdio" || key == "pty") {
    if (eq != std::string_view::npos)
      throw UsageError(shown + ": " + std::string(key) + " takes no value; give it alone, e.g. --console serial," +
                       std::string(key));
    d.kind = key == "pty" ? ConsoleDestination::Kind::kPty : ConsoleDestination::Kind::kStdio;
    return d;
  }
  if (key != "file" && key != "socket") return std::nullopt;
  if (key == "socket" && eq == std::string_view::npos) {
    // A named VM's console socket: its path comes from --name (options.cc).
    d.kind = ConsoleDestination::Kind::kSocket;
    return d;
  }
  if (value.empty())
    throw UsageError(shown + ": " + std::string(key) + "= needs a path, e.g. --console serial," +
                     std::string(key) + (key == "file" ? "=guest.log" : "=/run/kvmmio/vm0.console"));
  if (key == "file") {
    d.kind = ConsoleDestination::Kind::kFile;
  } else {
    check_unix_socket_path(value, shown);
    d.kind = ConsoleDestination::Kind::kSocket;
  }
  d.path = value;
  return d;
}

}  // namespace kvmmio::vmm
