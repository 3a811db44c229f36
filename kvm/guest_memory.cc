// SPDX-License-Identifier: BSD-2-Clause
// Guest RAM regions (memfd + shared mapping) and the checked accessor.
#include "kvmmio/guest_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "kvmmio/base/error.h"

namespace kvmmio {

RamRegion::RamRegion(uint64_t gpa, uint64_t size) : gpa_(gpa), size_(size) {
  memfd_ = UniqueFd(::memfd_create("kvmmio-ram", MFD_CLOEXEC));
  if (!memfd_) throw_errno("memfd_create for guest RAM");
  if (::ftruncate(memfd_.get(), static_cast<off_t>(size)) != 0)
    throw_errno("ftruncate guest RAM memfd");
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                   memfd_.get(), 0);
  if (p == MAP_FAILED) throw_errno("mmap guest RAM");
  host_ = static_cast<uint8_t*>(p);
  // Guest memory stays out of any core file of the VMM (docs/security.md).
  if (::madvise(p, size, MADV_DONTDUMP) != 0) throw_errno("madvise MADV_DONTDUMP for guest RAM");
}

RamRegion::~RamRegion() {
  if (host_) ::munmap(host_, size_);
}

const RamRegion& GuestMemory::add_ram(uint64_t gpa, uint64_t size) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (size == 0 || gpa % page || size % page)
    throw std::invalid_argument("guest RAM must be non-empty and page-aligned");
  // end() must be representable: a region may not reach 2^64.
  if (gpa + size <= gpa) throw std::invalid_argument("guest RAM range wraps");
  for (const auto& r : regions_) {
    if (gpa < r->end() && r->gpa() < gpa + size)
      throw std::invalid_argument("guest RAM ranges overlap");
  }
  auto region = std::make_unique<RamRegion>(gpa, size);
  const RamRegion& ref = *region;
  regions_.push_back(std::move(region));
  std::sort(regions_.begin(), regions_.end(),
            [](const auto& a, const auto& b) { return a->gpa() < b->gpa(); });
  return ref;
}

std::optional<std::span<uint8_t>> GuestMemory::span(uint64_t gpa, uint64_t len) const {
  const uint64_t last = gpa + len;
  if (last < gpa) return std::nullopt;  // wraps around the address space
  for (const auto& r : regions_) {
    // Written so that no sum can overflow: gpa >= r.gpa, then compare sizes.
    if (gpa < r->gpa()) continue;
    const uint64_t offset = gpa - r->gpa();
    if (offset > r->size() || (offset == r->size() && len > 0)) continue;
    if (len > r->size() - offset) return std::nullopt;  // runs past the region
    return std::span<uint8_t>(r->host() + offset, len);
  }
  return std::nullopt;
}

bool GuestMemory::read(uint64_t gpa, void* dst, uint64_t len) const {
  auto s = span(gpa, len);
  if (!s) return false;
  std::memcpy(dst, s->data(), len);
  return true;
}

bool GuestMemory::write(uint64_t gpa, const void* src, uint64_t len) const {
  auto s = span(gpa, len);
  if (!s) return false;
  std::memcpy(s->data(), src, len);
  return true;
}

}  // namespace kvmmio
