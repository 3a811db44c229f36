// SPDX-License-Identifier: BSD-2-Clause
// RegisterMirror: the page, its updates and the cache clean that publishes
// them (see the header for why the clean is needed).
#include "kvmmio/virtio/register_mirror.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace kvmmio::virtio {

void clean_dcache_to_poc(const void* addr, size_t size) {
#if defined(__aarch64__)
  // CTR_EL0.DminLine: log2 of the smallest data cache line, in 4-byte words.
  uint64_t ctr;
  asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
  const uintptr_t line = uintptr_t{4} << ((ctr >> 16) & 0xf);
  const uintptr_t end = reinterpret_cast<uintptr_t>(addr) + size;
  for (uintptr_t a = reinterpret_cast<uintptr_t>(addr) & ~(line - 1); a < end; a += line)
    asm volatile("dc cvac, %0" : : "r"(a) : "memory");
  // Complete before any later store: the next update must not become
  // visible to the guest ahead of this one.
  asm volatile("dsb sy" : : : "memory");
#else
  (void)addr;
  (void)size;
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

RegisterMirror::RegisterMirror(size_t window, CacheClean clean) : window_(window), clean_(std::move(clean)) {
  const long host_page = ::sysconf(_SC_PAGESIZE);
  page_size_ = static_cast<size_t>(host_page > 0 ? host_page : 4096);
  if (window_ == 0 || window_ > page_size_ || window_ % sizeof(uint32_t))
    throw std::invalid_argument("register mirror: the window must fit one host page");
  // Shared: a fork (the benchmarks isolate runs in child processes) must not
  // turn the page KVM maps into a copy-on-write private one.
  void* p = ::mmap(nullptr, page_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap register mirror");
  page_ = static_cast<uint8_t*>(p);
}

RegisterMirror::~RegisterMirror() { ::munmap(page_, page_size_); }

bool RegisterMirror::update(uint32_t offset, std::span<const uint8_t> bytes) {
  if (offset > window_ || bytes.size() > window_ - offset)
    throw std::out_of_range("register mirror: update beyond the window");
  if (std::memcmp(page_ + offset, bytes.data(), bytes.size()) == 0) return false;
  if (offset % sizeof(uint32_t) == 0 && bytes.size() % sizeof(uint32_t) == 0) {
    for (size_t i = 0; i < bytes.size(); i += sizeof(uint32_t)) {
      uint32_t word;
      std::memcpy(&word, bytes.data() + i, sizeof(word));
      std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(page_ + offset + i))
          .store(word, std::memory_order_relaxed);
    }
  } else {
    for (size_t i = 0; i < bytes.size(); ++i)
      std::atomic_ref<uint8_t>(page_[offset + i]).store(bytes[i], std::memory_order_relaxed);
  }
  clean_(page_ + offset, bytes.size());
  ++updates_;
  return true;
}

bool RegisterMirror::update32(uint32_t offset, uint32_t value) {
  if (offset % sizeof(uint32_t)) throw std::invalid_argument("register mirror: unaligned register");
  uint8_t bytes[sizeof(value)];
  std::memcpy(bytes, &value, sizeof(value));
  return update(offset, bytes);
}

uint32_t RegisterMirror::read32(uint32_t offset) const {
  if (offset % sizeof(uint32_t) || offset + sizeof(uint32_t) > window_)
    throw std::out_of_range("register mirror: read beyond the window");
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(page_ + offset)).load(std::memory_order_relaxed);
}

}  // namespace kvmmio::virtio
