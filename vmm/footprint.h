// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's own footprint: the memory it holds outside guest RAM and its
// thread count, for --stats ("footprint"; issue #24's per-VM overhead).
//
// Memory, over every mapping in /proc/self/smaps except those inside an
// excluded range (guest RAM: its host mappings, from GuestMemory):
// - Rss: the pages resident now, shared ones included (the binary's text,
//   libc), read the way `ps` reads it;
// - private (Private_Clean + Private_Dirty, the unique set size): the
//   pages no other process maps, what one more VM adds to a host that
//   already runs kvmmio. Its text is shared with the other kvmmio
//   processes and drops out; a kvmmio alone on its host counts its text
//   here too. (On a tmpfs with 2 MiB huge pages, as in the nested
//   platform's L1, Rss counts 2 MiB of text at once.)
// Threads: /proc/self/status's Threads line.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace kvmmio::vmm {

struct Footprint {
  uint64_t rss_outside_guest_ram_kib = 0;
  uint64_t private_outside_guest_ram_kib = 0;
  uint64_t threads = 0;
};

// [begin, end) host address ranges whose mappings are not counted.
using HostRange = std::pair<uintptr_t, uintptr_t>;

// Reads /proc/self; zeros for what cannot be read (never throws: the stats
// are written on the way out too).
Footprint measure_footprint(std::span<const HostRange> excluded);

// The parsers, on the files' text (for tests).
uint64_t rss_kib_outside(std::string_view smaps, std::span<const HostRange> excluded);
uint64_t private_kib_outside(std::string_view smaps, std::span<const HostRange> excluded);
uint64_t threads_of(std::string_view status);

}  // namespace kvmmio::vmm
