// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's own footprint: the memory it holds outside guest RAM and its
// thread count, for --stats ("footprint"; issue #24's per-VM overhead).
//
// Memory: the sum of Rss over every mapping in /proc/self/smaps except
// those inside an excluded range (guest RAM: its host mappings, from
// GuestMemory). Rss counts the pages resident now, shared ones included
// (the binary's text, libc): what this VMM adds to the host, read the
// way `ps` and the measurements read it. Threads: /proc/self/
// status's Threads line.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace kvmmio::vmm {

struct Footprint {
  uint64_t rss_outside_guest_ram_kib = 0;
  uint64_t threads = 0;
};

// [begin, end) host address ranges whose mappings are not counted.
using HostRange = std::pair<uintptr_t, uintptr_t>;

// Reads /proc/self; zeros for what cannot be read (never throws: the stats
// are written on the way out too).
Footprint measure_footprint(std::span<const HostRange> excluded);

// The parsers, on the files' text (for tests).
uint64_t rss_kib_outside(std::string_view smaps, std::span<const HostRange> excluded);
uint64_t threads_of(std::string_view status);

}  // namespace kvmmio::vmm
