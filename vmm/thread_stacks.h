// SPDX-License-Identifier: BSD-2-Clause
// The stack size of kvmmio's own threads (vCPUs, the event and control
// loops, the disk engines), set once before the first is started.
//
// glibc gives a new thread a stack of RLIMIT_STACK, 8 MiB by default. With
// transparent huge pages on ("always", as in the nested platform's L1 and
// on many hosts), a stack mapping that happens to be 2 MiB-aligned gets a
// whole 2 MiB huge page at its first touch: measured in L1, one of a
// one-vCPU kvmmio's three thread stacks held 2048 KiB where the others
// held 12 (docs/benchmarks.md, "Footprint"). A smaller stack cannot hold
// an aligned 2 MiB page, and kvmmio's threads need a few KiB: no recursion,
// no big buffer on any thread's stack.
#pragma once

#include <cstddef>

namespace kvmmio::vmm {

// 256 KiB: tens of times what kvmmio's threads use, an eighth of a huge page.
inline constexpr size_t kThreadStackBytes = 256 << 10;

// Makes `bytes` the default stack size of threads created from now on
// (std::thread too: pthread_setattr_default_np). Throws on failure.
void set_default_thread_stack(size_t bytes);

}  // namespace kvmmio::vmm
