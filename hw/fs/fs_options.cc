// SPDX-License-Identifier: BSD-2-Clause
// --fs parsing (see the header).
#include "kvmmio/fs/fs_options.h"

#include <string>

#include "kvmmio/base/error.h"
#include "kvmmio/base/parse.h"
#include "kvmmio/fs/virtio_fs_spec.h"

namespace kvmmio::fs {

std::string tag_problem(std::string_view tag) {
  if (tag.empty() || tag.size() > spec::kTagSize)
    return "the tag must be 1 to " + std::to_string(spec::kTagSize) + " bytes long, not " +
           std::to_string(tag.size());
  for (char c : tag)
    if (c <= ' ' || c > '~')
      return "the tag '" + std::string(tag) +
             "' has a space or a character outside printable ASCII; the guest mounts it by name (mount -t "
             "virtiofs TAG DIR): use letters, digits and punctuation";
  return "";
}

FsOptions FsOptions::parse(std::string_view spec) {
  const std::string shown = "--fs " + std::string(spec);
  const std::string example = "e.g. --fs tag=share,socket=/run/virtiofsd.sock";
  FsOptions o;
  bool have_tag = false, have_socket = false;
  // parse_key_values refuses an empty list, an item without '=' and a key
  // given twice, each naming what was typed.
  for (const auto& [key, value] : parse_key_values(spec, shown)) {
    if (key == "tag") {
      if (const std::string problem = tag_problem(value); !problem.empty())
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

}  // namespace kvmmio::fs
