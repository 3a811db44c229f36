// SPDX-License-Identifier: BSD-2-Clause
// How often a thread of this process has gone to sleep in the kernel (its
// voluntary context switches): the positive sign that a thread waits
// instead of spinning or giving up, so a test can check "it is waiting"
// without sleeping a fixed time first and hoping it got there.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <string_view>

namespace kvmmio::virtio::test {

// -1 if the thread is gone (or /proc is not mounted).
inline long voluntary_sleeps(pid_t tid) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    constexpr std::string_view kKey = "voluntary_ctxt_switches:";
    if (line.starts_with(kKey)) return std::stol(line.substr(kKey.size()));
  }
  return -1;
}

}  // namespace kvmmio::virtio::test
