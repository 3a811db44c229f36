// SPDX-License-Identifier: BSD-2-Clause
// GuestMemory: the guest's RAM, as memfd-backed shared host mappings, and the
// ONE checked accessor through which all device code reaches it.
//
// Guest physical addresses and lengths come from the guest and are untrusted:
// span() refuses any range that wraps, or is not wholly inside one region.
// There is no other way to turn a guest address into a host pointer.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

// One RAM region: [gpa, gpa + size) of guest physical space, backed by a
// memfd mapped shared at `host` (so vhost, a snapshot or another process can
// map the same pages). Owns the fd and the mapping.
class RamRegion {
 public:
  RamRegion(uint64_t gpa, uint64_t size);
  ~RamRegion();
  RamRegion(const RamRegion&) = delete;
  RamRegion& operator=(const RamRegion&) = delete;

  uint64_t gpa() const { return gpa_; }
  uint64_t size() const { return size_; }
  uint64_t end() const { return gpa_ + size_; }  // one past the last byte
  uint8_t* host() const { return host_; }
  int memfd() const { return memfd_.get(); }

 private:
  uint64_t gpa_;
  uint64_t size_;
  UniqueFd memfd_;
  uint8_t* host_ = nullptr;
};

class GuestMemory {
 public:
  // Adds RAM at [gpa, gpa + size). Page-aligned, non-empty, non-overlapping
  // and non-wrapping, or std::invalid_argument. Only before vCPUs run.
  const RamRegion& add_ram(uint64_t gpa, uint64_t size);

  const std::vector<std::unique_ptr<RamRegion>>& regions() const { return regions_; }

  // The checked accessor: the host bytes of [gpa, gpa + len), or nullopt if
  // the range wraps or is not inside a single region. len == 0 is allowed
  // (an empty span) when gpa lies in a region or at its end.
  std::optional<std::span<uint8_t>> span(uint64_t gpa, uint64_t len) const;

  // Copies through span(); false (and nothing copied) if refused.
  bool read(uint64_t gpa, void* dst, uint64_t len) const;
  bool write(uint64_t gpa, const void* src, uint64_t len) const;

  template <typename T>
  std::optional<T> load(uint64_t gpa) const {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    if (!read(gpa, &value, sizeof(T))) return std::nullopt;
    return value;
  }
  template <typename T>
  bool store(uint64_t gpa, const T& value) const {
    static_assert(std::is_trivially_copyable_v<T>);
    return write(gpa, &value, sizeof(T));
  }

 private:
  std::vector<std::unique_ptr<RamRegion>> regions_;  // sorted by gpa
};

}  // namespace kvmmio
