// SPDX-License-Identifier: BSD-2-Clause
// Error reporting for set-up paths: system calls that fail throw
// std::system_error carrying errno and a message that names what failed.
// Per-access paths (guest MMIO, rings) never throw; they log guest errors.
#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

#include "kvmmio/base/export.h"

namespace kvmmio {

// Throws std::system_error for the current errno, prefixed with `what`.
[[noreturn]] inline void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// A problem the user can fix (missing device, unsupported host feature,
// bad option). The message names the problem and the fix.
class KVMMIO_EXPORT UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whose words a UserError's message uses when it names what was set and
// the setting that would fix it: the kvmmio program's command line
// ("--disk a.img: ...: give ro=on (--disk a.img,ro=on) ...") or the C
// API's config structs ("kvmmio_blk_config.path a.img: ...: set
// kvmmio_blk_config.read_only = 1 ..."). The options of a device whose
// messages name its settings carry it (DiskOptions, NetOptions).
enum class Wording { kCommandLine, kCApi };

}  // namespace kvmmio
