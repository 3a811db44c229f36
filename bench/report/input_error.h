// SPDX-License-Identifier: BSD-2-Clause
// The one error net_report's readers throw: the input is wrong, and the
// message already says where ("RAW:LINE: what is wrong"). The program exits
// with status 2 on it.
#pragma once

#include <stdexcept>
#include <string>

#include "bench/report/records.h"

namespace kvmmio::report {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  InputError(const Source& at, const std::string& what) : std::runtime_error(at.str() + ": " + what) {}
};

}  // namespace kvmmio::report
