// SPDX-License-Identifier: BSD-2-Clause
// FsOptions' check of a tag (see the header).
#include "kvmmio/fs/fs_options.h"

#include <string>

#include "kvmmio/base/error.h"
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

}  // namespace kvmmio::fs
