// SPDX-License-Identifier: BSD-2-Clause
// Guest RAM regions (kvmmio's memfds, or the embedder's mappings) and the
// checked accessor.
#include "kvmmio/guest_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kvmmio/base/error.h"

namespace kvmmio {
namespace {

uint64_t page_size() { return static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace

RamRegion::RamRegion(uint64_t gpa, uint64_t size) : gpa_(gpa), size_(size) {
  memfd_ = UniqueFd(::memfd_create("kvmmio-ram", MFD_CLOEXEC));
  if (!memfd_) throw_errno("memfd_create for guest RAM");
  if (::ftruncate(memfd_.get(), static_cast<off_t>(size)) != 0)
    throw_errno("ftruncate guest RAM memfd");
  map_shared(0);
}

RamRegion::RamRegion(const RamMapping& m) : gpa_(m.gpa), size_(m.size) {
  if (m.host) {
    // The embedder's mapping: borrowed as it is (its core-dump policy too).
    host_ = static_cast<uint8_t*>(m.host);
    owns_mapping_ = false;
    return;
  }
  memfd_ = UniqueFd(::fcntl(m.fd, F_DUPFD_CLOEXEC, 0));
  if (!memfd_) throw_errno("dup of the guest RAM fd " + std::to_string(m.fd));
  map_shared(m.offset);
}

void RamRegion::map_shared(uint64_t offset) {
  void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd_.get(),
                   static_cast<off_t>(offset));
  if (p == MAP_FAILED) throw_errno("mmap guest RAM");
  // Guest memory stays out of any core file of the VMM (docs/security.md).
  if (::madvise(p, size_, MADV_DONTDUMP) != 0) {
    const int err = errno;
    ::munmap(p, size_);  // the constructor throws: no destructor will
    errno = err;
    throw_errno("madvise MADV_DONTDUMP for guest RAM");
  }
  // Transparent huge pages where the host gives them to shared memory
  // (/sys/kernel/mm/transparent_hugepage/shmem_enabled "advise" or more;
  // Debian's default is "never", and then this changes nothing): KVM then
  // maps the guest with block mappings, and the guest's first touches of
  // its RAM cost one stage-2 fault per 2 MiB instead of per page. On the
  // nested arm64 platform an L2 boot to power-off took 5.5 s instead of
  // 9.1 (docs/usage.md, "Huge pages"). A refusal (no THP in the kernel)
  // is not an error: the RAM works the same with small pages.
  (void)::madvise(p, size_, MADV_HUGEPAGE);
  host_ = static_cast<uint8_t*>(p);
  fd_offset_ = offset;
}

RamRegion::~RamRegion() {
  if (host_ && owns_mapping_) ::munmap(host_, size_);
}

void GuestMemory::check_new_range(uint64_t gpa, uint64_t size) const {
  if (size == 0 || gpa % page_size() || size % page_size())
    throw std::invalid_argument("guest RAM must be non-empty and page-aligned");
  // end() must be representable: a region may not reach 2^64.
  if (gpa + size <= gpa) throw std::invalid_argument("guest RAM range wraps");
  for (const auto& r : regions_) {
    if (gpa < r->end() && r->gpa() < gpa + size)
      throw std::invalid_argument("guest RAM ranges overlap");
  }
}

const RamRegion& GuestMemory::insert(std::unique_ptr<RamRegion> region) {
  const RamRegion& ref = *region;
  regions_.push_back(std::move(region));
  std::sort(regions_.begin(), regions_.end(),
            [](const auto& a, const auto& b) { return a->gpa() < b->gpa(); });
  return ref;
}

const RamRegion& GuestMemory::add_ram(uint64_t gpa, uint64_t size) {
  check_new_range(gpa, size);
  return insert(std::make_unique<RamRegion>(gpa, size));
}

const RamRegion& GuestMemory::add_ram(const RamMapping& m) {
  check_new_range(m.gpa, m.size);
  if ((m.host != nullptr) == (m.fd >= 0))
    throw std::invalid_argument("guest RAM mapping: give either a host address or an fd, not both or neither");
  if (m.host && reinterpret_cast<uintptr_t>(m.host) % page_size())
    throw std::invalid_argument("guest RAM mapping: the host address must be page-aligned");
  if (m.fd >= 0 && m.offset % page_size())
    throw std::invalid_argument("guest RAM mapping: the fd offset must be page-aligned");
  return insert(std::make_unique<RamRegion>(m));
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
