// SPDX-License-Identifier: BSD-2-Clause
// ConfigWindow: the device-specific configuration space at 0x100 as the
// guest reaches it (virtio 1.2 4.2.2 Config), and ConfigGeneration, which
// moves whenever the bytes may read differently (2.5.1).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "mmio_context.h"

namespace kvmmio::virtio {

class ConfigWindow {
 public:
  explicit ConfigWindow(TransportContext& ctx) : ctx_(ctx) {}

  // A guest access at `offset` into the window; refused (guest error,
  // reads as zeros) unless it is an aligned 8/16/32-bit access within the
  // device's config_size(). The device lock is held.
  void read(uint64_t offset, std::span<uint8_t> data);
  void write(uint64_t offset, std::span<const uint8_t> data);

  // From any thread: a change the device makes steps it too, through
  // DeviceState, which owns this window.
  uint32_t generation() const { return generation_.load(); }
  uint32_t step() { return generation_.fetch_add(1) + 1; }

 private:
  bool admits(uint64_t offset, uint64_t len, const char* verb);

  TransportContext& ctx_;
  std::atomic<uint32_t> generation_{0};
};

}  // namespace kvmmio::virtio
