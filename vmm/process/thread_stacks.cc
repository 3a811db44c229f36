// SPDX-License-Identifier: BSD-2-Clause
// The default stack size of new threads and glibc's arena limit (see the
// header).
#include "vmm/process/thread_stacks.h"

#include <malloc.h>
#include <pthread.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include "kvmmio/base/error.h"

namespace kvmmio::vmm {

void set_default_thread_stack(size_t bytes) {
  pthread_attr_t attr;
  int err = ::pthread_attr_init(&attr);
  if (err == 0) err = ::pthread_attr_setstacksize(&attr, bytes);
  if (err == 0) err = ::pthread_setattr_default_np(&attr);
  ::pthread_attr_destroy(&attr);
  if (err != 0) {
    errno = err;
    throw_errno("pthread_setattr_default_np (a thread stack of " + std::to_string(bytes) +
                " bytes)");
  }
}

void set_malloc_arenas(int arenas) {
  if (::mallopt(M_ARENA_MAX, arenas) != 1)
    throw std::runtime_error("mallopt(M_ARENA_MAX, " + std::to_string(arenas) + ") failed");
}

}  // namespace kvmmio::vmm
