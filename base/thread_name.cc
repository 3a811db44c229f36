// SPDX-License-Identifier: BSD-2-Clause
// Thread names through pthread_setname_np (see thread_name.h).
#include "kvmmio/base/thread_name.h"

#include <pthread.h>

namespace kvmmio {

void name_this_thread(std::string_view name) {
  const std::string cut(name.substr(0, kMaxThreadName));
  ::pthread_setname_np(::pthread_self(), cut.c_str());
}

std::string this_thread_name() {
  char buf[kMaxThreadName + 1] = {};
  if (::pthread_getname_np(::pthread_self(), buf, sizeof buf) != 0) return "";
  return buf;
}

}  // namespace kvmmio
