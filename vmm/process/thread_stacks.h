// SPDX-License-Identifier: BSD-2-Clause
// What kvmmio's own threads (vCPUs, the event and control loops, the disk
// engines) get from glibc, set once before the first is started: their
// stack size, and the number of malloc arenas they share.
//
// Arenas: glibc gives threads arenas of their own up to M_ARENA_TEST (8 on
// 64-bit), then asks how many CPUs there are to set the limit, in whichever
// thread needs the next one. From glibc 2.39 (Debian 13) that question
// reads /sys/devices/system/cpu/online: an openat, which a confined
// thread's seccomp filter does not allow. On a Debian 13 board a
// two-vCPU guest with two disks (9 threads) was killed by an openat in a
// disk's io_uring thread, which this explains. A limit set beforehand
// (M_ARENA_MAX) means glibc never asks; four arenas also keep each VM's
// memory small.
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

// At most this many malloc arenas (see above).
inline constexpr int kMallocArenas = 4;

// Sets glibc's M_ARENA_MAX. Throws on failure.
void set_malloc_arenas(int arenas);

}  // namespace kvmmio::vmm
