// SPDX-License-Identifier: BSD-2-Clause
// --fs specifications (the socket is connected when the device is made).
#include <string>

#include "kvmmio/base/error.h"
#include "vmm/cli/device_specs.h"
#include "vmm/process/parse.h"

namespace kvmmio::vmm {

using fs::FsOptions;

FsOptions parse_fs_spec(std::string_view spec) {
  const std::string shown = "--fs " + std::string(spec);
  const std::string example = "e.g. --fs tag=share,socket=/run/virtiofsd.sock";
  FsOptions o;
  bool have_tag = false, have_socket = false;
  // parse_key_values refuses an empty list, an item without '=' and a key
  // given twice, each naming what was typed.
  for (const auto& [key, value] : parse_key_values(spec, shown)) {
    if (key == "tag") {
      if (const std::string problem = fs::tag_problem(value); !problem.empty())
        throw UserError(shown + ": " + problem + "; " + example);
      o.tag = std::string(value);
      have_tag = true;
    } else if (key == "socket") {
      if (value.empty()) throw UserError(shown + ": socket= is empty; " + example);
      o.socket = std::string(value);
      have_socket = true;
    } else if (key == "reply_timeout_ms") {
      o.reply_timeout = std::chrono::milliseconds(
          parse_uint(value, "--fs reply_timeout_ms=" + std::string(value), 1,
                     vhost::VhostUserFrontend::kMaxReplyTimeout.count()));
    } else {
      throw UserError(shown + ": unknown key '" + std::string(key) +
                      "': --fs takes tag=NAME (what the guest mounts), socket=PATH (the backend's "
                      "vhost-user socket) and reply_timeout_ms=N, " + example);
    }
  }
  if (!have_tag) throw UserError(shown + ": no tag: give the name the guest mounts, " + example);
  if (!have_socket)
    throw UserError(shown + ": no socket: give the vhost-user socket of a running virtiofsd, " + example);
  return o;
}

}  // namespace kvmmio::vmm
