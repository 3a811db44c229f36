// SPDX-License-Identifier: BSD-2-Clause
// UsageError: a problem with what the user gave kvmmio (an option, a path,
// a name), whose message names it, what is wrong and the fix. main() prints
// it and exits with status 2 (exit_status.h). Every room of the program
// throws it, so it sits in the lowest.
#pragma once

#include "kvmmio/base/error.h"

namespace kvmmio::vmm {

class UsageError : public UserError {
 public:
  using UserError::UserError;
};

}  // namespace kvmmio::vmm
