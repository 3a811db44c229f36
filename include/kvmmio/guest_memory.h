// SPDX-License-Identifier: BSD-2-Clause
// GuestMemory: the guest's RAM, as shared host mappings, and the ONE checked
// accessor through which all device code reaches it.
//
// RAM comes from kvmmio (a memfd it creates and maps) or from an embedder
// that already has it (RamMapping: a host address it mapped, or an fd and
// offset kvmmio maps), as a VMM that owns its VM hands it over
// (docs/embedding.md, "Adopting the embedder's VM").
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

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

// Guest RAM the embedder already has: [gpa, gpa + size) of guest physical
// space, either at `host` (its own mapping, page-aligned, which it keeps
// mapped for the region's life) or in `fd` from `offset` (a memfd, a
// hugetlbfs or shared-memory file: kvmmio maps it shared itself). Exactly
// one of the two.
struct KVMMIO_EXPORT RamMapping {
  uint64_t gpa = 0;
  uint64_t size = 0;
  void* host = nullptr;
  int fd = -1;
  uint64_t offset = 0;  // with `fd`: where the region starts in it (page-aligned)
};

// One RAM region: [gpa, gpa + size) of guest physical space, mapped shared at
// `host` (so vhost, a snapshot or another process can map the same pages).
// kvmmio's own RAM is a memfd it creates, maps and owns; an embedder's
// RamMapping is mapped by kvmmio from its fd (a dup of which the region
// keeps) or stays the embedder's mapping, which the region only borrows.
class KVMMIO_EXPORT RamRegion {
 public:
  RamRegion(uint64_t gpa, uint64_t size);        // a new memfd of kvmmio's
  explicit RamRegion(const RamMapping& mapping);  // the embedder's RAM
  ~RamRegion();
  RamRegion(const RamRegion&) = delete;
  RamRegion& operator=(const RamRegion&) = delete;

  uint64_t gpa() const { return gpa_; }
  uint64_t size() const { return size_; }
  uint64_t end() const { return gpa_ + size_; }  // one past the last byte
  uint8_t* host() const { return host_; }
  // The file behind the region, where there is one (-1 for an embedder's
  // host mapping), and where the region starts in it.
  int memfd() const { return memfd_.get(); }
  uint64_t fd_offset() const { return fd_offset_; }
  // Whether kvmmio made the mapping (and unmaps it): false for an
  // embedder's host mapping.
  bool owns_mapping() const { return owns_mapping_; }

 private:
  void map_shared(uint64_t offset);  // maps memfd_ at `offset`, MADV_DONTDUMP

  uint64_t gpa_;
  uint64_t size_;
  UniqueFd memfd_;
  uint64_t fd_offset_ = 0;
  uint8_t* host_ = nullptr;
  bool owns_mapping_ = true;
};

class KVMMIO_EXPORT GuestMemory {
 public:
  // Adds RAM at [gpa, gpa + size). Page-aligned, non-empty, non-overlapping
  // and non-wrapping, or std::invalid_argument. Only before vCPUs run.
  const RamRegion& add_ram(uint64_t gpa, uint64_t size);
  // Adds the embedder's RAM, by the same rules; also std::invalid_argument
  // unless exactly one of host and fd is given, page-aligned (host address,
  // fd offset). std::system_error when the fd cannot be mapped.
  const RamRegion& add_ram(const RamMapping& mapping);

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
  // Checks [gpa, gpa + size) against the rules above and the regions so far.
  void check_new_range(uint64_t gpa, uint64_t size) const;
  const RamRegion& insert(std::unique_ptr<RamRegion> region);

  std::vector<std::unique_ptr<RamRegion>> regions_;  // sorted by gpa
};

}  // namespace kvmmio
