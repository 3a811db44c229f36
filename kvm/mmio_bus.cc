// SPDX-License-Identifier: BSD-2-Clause
// MMIO address decoding: claims at set-up, lock-free lookups at run time.
#include "kvmmio/mmio_bus.h"

#include <algorithm>
#include <stdexcept>

namespace kvmmio {

void MmioBus::claim(uint64_t base, uint64_t size, MmioDevice& device, std::string name) {
  if (size == 0 || base + size < base)
    throw std::invalid_argument("MMIO claim for " + name + " is empty or wraps");
  for (const auto& [b, c] : claims_) {
    if (base < b + c.size && b < base + size)
      throw std::invalid_argument("MMIO claim for " + name + " overlaps " + c.name);
  }
  claims_.emplace(base, Claim{size, &device, std::move(name)});
}

const MmioBus::Claim* MmioBus::find(uint64_t addr, uint64_t len, uint64_t* base) const {
  auto it = claims_.upper_bound(addr);
  if (it == claims_.begin()) return nullptr;
  --it;
  const uint64_t offset = addr - it->first;
  if (offset >= it->second.size || len > it->second.size - offset) return nullptr;
  *base = it->first;
  return &it->second;
}

bool MmioBus::read(uint64_t addr, std::span<uint8_t> data) {
  uint64_t base;
  if (const Claim* c = find(addr, data.size(), &base)) {
    c->device->mmio_read(addr - base, data);
    return true;
  }
  std::fill(data.begin(), data.end(), 0);
  errors_.report("read of %zu bytes at unclaimed address 0x%llx", data.size(),
                 static_cast<unsigned long long>(addr));
  return false;
}

bool MmioBus::write(uint64_t addr, std::span<const uint8_t> data) {
  uint64_t base;
  if (const Claim* c = find(addr, data.size(), &base)) {
    c->device->mmio_write(addr - base, data);
    return true;
  }
  errors_.report("write of %zu bytes at unclaimed address 0x%llx", data.size(),
                 static_cast<unsigned long long>(addr));
  return false;
}

}  // namespace kvmmio
