// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's footprint from /proc/self/status and guest RAM's memfds (see
// the header for the formulas and how close they are).
#include "vmm/stats/footprint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <initializer_list>
#include <string>
#include <utility>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {
namespace {

// The whole file: /proc files report no size, so read to the end. status
// is some 1.5 KiB; the cap bounds a read that something went wrong with.
std::string read_proc(const char* path) {
  constexpr size_t kCap = 64 << 10;
  std::string text;
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return text;
  char buf[4096];
  while (text.size() < kCap) {
    const ssize_t r = ::read(fd.get(), buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    text.append(buf, static_cast<size_t>(r));
  }
  return text;
}

// The number after "Key:" and blanks; the unit (" kB") is not read.
bool number_after(std::string_view line, std::string_view key, uint64_t* v) {
  if (line.substr(0, key.size()) != key) return false;
  std::string_view rest = line.substr(key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  *v = 0;
  std::from_chars(rest.data(), rest.data() + rest.size(), *v);
  return true;
}

}  // namespace

StatusMemory parse_status(std::string_view status) {
  StatusMemory m;
  while (!status.empty()) {
    const size_t nl = status.find('\n');
    const std::string_view line = status.substr(0, nl);
    for (auto [key, field] : {std::pair{"RssAnon:", &m.rss_anon_kib}, std::pair{"RssFile:", &m.rss_file_kib},
                              std::pair{"RssShmem:", &m.rss_shmem_kib}, std::pair{"Threads:", &m.threads}})
      if (number_after(line, key, field)) break;
    if (nl == std::string_view::npos) break;
    status.remove_prefix(nl + 1);
  }
  return m;
}

// st_blocks counts 512-byte units of the pages a shmem file holds,
// resident or swapped out; never more than its region here.
uint64_t guest_ram_kib(std::span<const GuestRamFile> guest_ram) {
  uint64_t kib = 0;
  for (const GuestRamFile& g : guest_ram) {
    struct stat st {};
    if (g.fd < 0 || ::fstat(g.fd, &st) != 0 || st.st_blocks < 0) continue;
    kib += std::min(static_cast<uint64_t>(st.st_blocks) / 2, g.size / 1024);
  }
  return kib;
}

Footprint footprint_of(const StatusMemory& s, uint64_t guest_kib) {
  // Guest RAM is RssShmem but for kvmmio's own few shared pages (and its
  // text, from a tmpfs): what is left once it is taken away, never less
  // than nothing.
  const uint64_t other_shmem = s.rss_shmem_kib > guest_kib ? s.rss_shmem_kib - guest_kib : 0;
  Footprint f;
  f.rss_outside_guest_ram_kib = s.rss_anon_kib + s.rss_file_kib + other_shmem;
  f.private_outside_guest_ram_kib = s.rss_anon_kib;
  f.threads = s.threads;
  return f;
}

Footprint measure_footprint(std::span<const GuestRamFile> guest_ram) {
  // Guest RAM first: pages the guest touches in between then count as
  // kvmmio's (an overestimate of a few pages) rather than make the
  // subtraction take kvmmio's own.
  const uint64_t guest_kib = guest_ram_kib(guest_ram);
  return footprint_of(parse_status(read_proc("/proc/self/status")), guest_kib);
}

}  // namespace kvmmio::vmm
