// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's footprint from /proc/self (see the header).
#include "vmm/footprint.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <initializer_list>
#include <string>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {
namespace {

// The whole file: /proc files report no size, so read to the end. smaps
// grows with the mappings (some KiB for kvmmio); the cap bounds a read
// that something went wrong with.
std::string read_proc(const char* path) {
  constexpr size_t kCap = 4 << 20;
  std::string text;
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return text;
  char buf[16384];
  while (text.size() < kCap) {
    const ssize_t r = ::read(fd.get(), buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    text.append(buf, static_cast<size_t>(r));
  }
  return text;
}

uint64_t number_after(std::string_view line, std::string_view key, int base = 10) {
  if (line.substr(0, key.size()) != key) return 0;
  std::string_view rest = line.substr(key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  uint64_t v = 0;
  std::from_chars(rest.data(), rest.data() + rest.size(), v, base);
  return v;
}

// A mapping's header: "start-end perms offset dev inode [path]", in hex.
bool mapping_header(std::string_view line, uintptr_t* start, uintptr_t* end) {
  const char* p = line.data();
  const char* e = p + line.size();
  auto r1 = std::from_chars(p, e, *start, 16);
  if (r1.ec != std::errc() || r1.ptr == e || *r1.ptr != '-') return false;
  auto r2 = std::from_chars(r1.ptr + 1, e, *end, 16);
  return r2.ec == std::errc() && r2.ptr != e && *r2.ptr == ' ';
}

bool inside(uintptr_t start, uintptr_t end, std::span<const HostRange> excluded) {
  for (const auto& [b, e] : excluded)
    if (start >= b && end <= e) return true;
  return false;
}

template <typename F>
void each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

}  // namespace

namespace {

// The sum of the fields named in keys (each "Name:") over the mappings
// outside the excluded ranges.
uint64_t kib_outside(std::string_view smaps, std::span<const HostRange> excluded,
                     std::initializer_list<std::string_view> keys) {
  uint64_t total = 0;
  bool counted = false;
  each_line(smaps, [&](std::string_view line) {
    uintptr_t start = 0, end = 0;
    if (mapping_header(line, &start, &end)) {
      counted = !inside(start, end, excluded);
      return;
    }
    if (!counted) return;
    for (std::string_view key : keys) total += number_after(line, key);  // 0 unless the line is key's
  });
  return total;
}

}  // namespace

uint64_t rss_kib_outside(std::string_view smaps, std::span<const HostRange> excluded) {
  return kib_outside(smaps, excluded, {"Rss:"});
}

uint64_t private_kib_outside(std::string_view smaps, std::span<const HostRange> excluded) {
  return kib_outside(smaps, excluded, {"Private_Clean:", "Private_Dirty:"});
}

uint64_t threads_of(std::string_view status) {
  uint64_t threads = 0;
  each_line(status, [&](std::string_view line) {
    if (line.substr(0, 8) == "Threads:") threads = number_after(line, "Threads:");
  });
  return threads;
}

Footprint measure_footprint(std::span<const HostRange> excluded) {
  Footprint f;
  const std::string smaps = read_proc("/proc/self/smaps");
  f.rss_outside_guest_ram_kib = rss_kib_outside(smaps, excluded);
  f.private_outside_guest_ram_kib = private_kib_outside(smaps, excluded);
  f.threads = threads_of(read_proc("/proc/self/status"));
  return f;
}

}  // namespace kvmmio::vmm
