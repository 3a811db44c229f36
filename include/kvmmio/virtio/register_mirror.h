// SPDX-License-Identifier: BSD-2-Clause
// RegisterMirror: a host page holding what every readable register of one
// virtio-mmio device would read as, for KvmMmioSlot to map into the guest
// as a read-only KVM memory slot over the device's register window
// (regs=mirror, docs/virtio-mmio.md "The register mirror"). Guest reads are
// then plain memory reads with no exit; guest writes still fault to KVM's
// MMIO path, where ioeventfds match them or they exit to the VMM as before.
//
// The page is written only by its transport (mmio_mirror.cc, and
// mmio_interrupts.cc for a configuration change), only where a value
// changed, one writer at a time (the transport's mirror mutex): under the
// device lock after a trapped write, and without it when the device needs a
// reset (then Status and InterruptStatus) or raises a configuration change
// from its own threads (then also the configuration and ConfigGeneration).
// Every update is followed by a clean of the touched cache lines to the
// point of coherency: the guest maps the window as Device memory, so its
// loads bypass the caches and would otherwise read stale RAM while the new
// value sits in the VMM's cache. The clean ends
// with a barrier, so updates reach the guest in the order they are made
// (the ConfigGeneration protocol relies on that).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "kvmmio/base/export.h"

namespace kvmmio::virtio {

// Cleans [addr, addr + size) from the data caches to the point of coherency
// and waits for it to complete: DC CVAC per cache line, then DSB SY, on
// arm64 (EL0 may do this: Linux sets SCTLR_EL1.UCI); nothing on x86-64,
// whose caches are coherent with every access a guest can make here.
KVMMIO_EXPORT void clean_dcache_to_poc(const void* addr, size_t size);

class KVMMIO_EXPORT RegisterMirror {
 public:
  using CacheClean = std::function<void(const void* addr, size_t size)>;

  // One zeroed host page (the host's page size, at least `window` bytes).
  // `clean` is clean_dcache_to_poc unless a test watches the cleans.
  explicit RegisterMirror(size_t window, CacheClean clean = clean_dcache_to_poc);
  ~RegisterMirror();
  RegisterMirror(const RegisterMirror&) = delete;
  RegisterMirror& operator=(const RegisterMirror&) = delete;

  // The whole page, for the VMM's read-only memory slot.
  std::span<const uint8_t> page() const { return {page_, page_size_}; }
  size_t window() const { return window_; }

  // Makes [offset, offset + bytes.size()) of the page read as `bytes`,
  // then cleans what changed. Returns whether anything changed. `offset`
  // and the size stay within window(); 32-bit fields are written with
  // single aligned stores, so a guest never sees half of one.
  bool update(uint32_t offset, std::span<const uint8_t> bytes);
  bool update32(uint32_t offset, uint32_t value);
  uint32_t read32(uint32_t offset) const;
  std::span<const uint8_t> bytes(uint32_t offset, size_t size) const { return {page_ + offset, size}; }

  // Updates that changed something (each one cleaned).
  uint64_t updates() const { return updates_; }

 private:
  uint8_t* page_ = nullptr;
  size_t page_size_ = 0;
  size_t window_ = 0;
  CacheClean clean_;
  uint64_t updates_ = 0;
};

}  // namespace kvmmio::virtio
