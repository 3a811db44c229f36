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

}  // namespace kvmmio
