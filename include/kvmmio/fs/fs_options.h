// SPDX-License-Identifier: BSD-2-Clause
// FsOptions: a shared folder's tag and its virtiofsd's socket (the kvmmio
// program's --fs tag=NAME,socket=PATH; the socket is connected when the
// device is made, by the path rules of every user-given path: the
// program's).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "kvmmio/base/export.h"
#include "kvmmio/vhost/vhost_user.h"

namespace kvmmio::fs {

struct KVMMIO_EXPORT FsOptions {
  // The name the guest mounts: mount -t virtiofs TAG /mnt. 1-36 bytes of
  // printable ASCII without spaces (the spec allows UTF-8; a tag typed on
  // a command line and in a guest's fstab is kept to what both take
  // without quoting).
  std::string tag;
  // The backend's vhost-user socket (virtiofsd --socket-path=PATH).
  std::string socket;
  // The longest wait for one of the backend's replies (reply_timeout_ms=,
  // 1 to 60000; VhostUserFrontend's default).
  std::chrono::milliseconds reply_timeout = vhost::VhostUserFrontend::kDefaultReplyTimeout;
};

// Why `tag` cannot be a tag, in words that follow the caller's name for it
// ("the tag must be 1 to 36 bytes long, not 40"), or "" when it can.
KVMMIO_EXPORT std::string tag_problem(std::string_view tag);

}  // namespace kvmmio::fs
