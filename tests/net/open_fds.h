// SPDX-License-Identifier: BSD-2-Clause
// open_fds(): how many fds this process has open, for tests that check a
// set-up and tear-down cycle leaks none.
#pragma once

#include <dirent.h>

namespace kvmmio::test {

inline int open_fds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (::readdir(d)) ++n;
  ::closedir(d);
  return n;
}

}  // namespace kvmmio::test
