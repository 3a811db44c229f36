// SPDX-License-Identifier: BSD-2-Clause
// Thread names: every thread kvmmio starts is named after its job (vcpu0,
// evloop, ...), so top -H, ps -L, perf and /proc/PID/task/*/comm tell them
// apart. docs/usage.md, "Threads", lists the names.
#pragma once

#include <string>
#include <string_view>

#include "kvmmio/base/export.h"

namespace kvmmio {

// Linux keeps 15 bytes of a thread's name (TASK_COMM_LEN 16 with the NUL).
inline constexpr size_t kMaxThreadName = 15;

// Names the calling thread `name`, cut to kMaxThreadName bytes. Failure
// (no /proc, a seccomp filter) is ignored: a name is a help, not a need.
KVMMIO_EXPORT void name_this_thread(std::string_view name);

// The calling thread's name ("" if it cannot be read).
KVMMIO_EXPORT std::string this_thread_name();

}  // namespace kvmmio
