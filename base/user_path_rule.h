// SPDX-License-Identifier: BSD-2-Clause
// The rule's refusals (user_path.h), worded in one place for the walk
// (user_path.cc) and the file at its end (user_file.cc).
#pragma once

#include <sys/types.h>

#include <string>

namespace kvmmio::user_path_rule {

// UserError: the symbolic link `name` in `dir`, below `untrusted_at`.
[[noreturn]] void refuse_link(const std::string& shown, const std::string& name,
                              const std::string& dir, const std::string& untrusted_at);
// UserError: a file owned by `uid` in `dir`, below `untrusted_at`.
[[noreturn]] void refuse_owner(const std::string& shown, uid_t uid, const std::string& dir,
                               const std::string& untrusted_at);

}  // namespace kvmmio::user_path_rule
