// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's own footprint: the memory it holds outside guest RAM and its
// thread count, for --stats and the control socket's "stats"
// ("footprint"; the per-VM overhead).
//
// Cheap enough for every request: one read of /proc/self/status, whose
// counters the kernel keeps as pages are mapped and unmapped, and one
// fstat per guest RAM memfd; no walk over guest RAM's pages. (Summing
// /proc/self/smaps over every mapping but guest RAM's, as this once did,
// makes the kernel walk guest RAM's page tables too: 35 ms of CPU per
// request with 1 GiB of touched guest RAM in small pages, growing with
// it; this takes some 20 us, whatever guest RAM holds.)
//
// From status's RssAnon, RssFile and RssShmem (KiB) and guest RAM's
// resident size G (its memfds' allocated blocks, fstat's st_blocks):
// - rss_outside_guest_ram_kib = RssAnon + RssFile + max(0, RssShmem - G):
//   the pages resident now, shared ones included (the binary's text,
//   libc), read the way `ps` reads them, less guest RAM's;
// - private_outside_guest_ram_kib = RssAnon: the anonymous pages (heap,
//   stacks, the copied-on-write pages of the binary's and libraries'
//   data), which are this process's alone: what one more VM adds to a
//   host that already runs kvmmio. File pages (text, read-only data) are
//   left out, whoever else maps them (the other kvmmio processes share
//   them), so the figure does not depend on what else the host runs; so
//   is shared memory, which holds a binary's text when it runs from a
//   tmpfs (as on the nested platform's L1) beside kvmmio's own few pages
//   (the virtio register mirror's, one per device).
// How close:
// - guest RAM is a memfd only this process maps (kvmmio's own), so every
//   guest page mapped here is one of its allocated blocks. A block not
//   mapped here (swapped out, a huge page mapped in part) makes G larger
//   than guest RAM's share of RssShmem; the difference is taken from the
//   rest of RssShmem, and at most that (the clamp at 0): the Rss figure
//   is then low by up to that much;
// - the kernel's counters are approximate: per-CPU batches since Linux
//   6.2, per-thread caches before (up to 64 pages per thread): some
//   hundred KiB at most. An exact figure needs smaps (or smaps_rollup),
//   which walks guest RAM.
// Threads: /proc/self/status's Threads line.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace kvmmio::vmm {

struct Footprint {
  uint64_t rss_outside_guest_ram_kib = 0;
  uint64_t private_outside_guest_ram_kib = 0;
  uint64_t threads = 0;
};

// A guest RAM memfd and the size of its region (a file larger than its
// region counts no more than the region: an fd given with an offset).
struct GuestRamFile {
  int fd = -1;
  uint64_t size = 0;
};

// Reads /proc/self/status and fstats `guest_ram`'s files; zeros for what
// cannot be read (never throws: the stats are written on the way out
// too). Only open and read of /proc/self/status and fstat: calls the
// control and main threads' seccomp filters allow.
Footprint measure_footprint(std::span<const GuestRamFile> guest_ram);

// The parts, for tests.
struct StatusMemory {
  uint64_t rss_anon_kib = 0;
  uint64_t rss_file_kib = 0;
  uint64_t rss_shmem_kib = 0;
  uint64_t threads = 0;
};
StatusMemory parse_status(std::string_view status);
uint64_t guest_ram_kib(std::span<const GuestRamFile> guest_ram);
Footprint footprint_of(const StatusMemory& status, uint64_t guest_ram_kib);

}  // namespace kvmmio::vmm
