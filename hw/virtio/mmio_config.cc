// SPDX-License-Identifier: BSD-2-Clause
// ConfigWindow: the access rules of the configuration space (4.2.2.2).
#include "mmio_config.h"

#include <cinttypes>

namespace kvmmio::virtio {

bool ConfigWindow::admits(uint64_t offset, uint64_t len, const char* verb) {
  // 8-, 16- and 32-bit naturally aligned accesses; 64-bit fields are
  // accessed as two 32-bit halves (4.2.2.2).
  if ((len != 1 && len != 2 && len != 4) || offset % len) {
    ctx_.guest_error("%" PRIu64 "-byte config %s at +0x%" PRIx64 ": not an aligned 8/16/32-bit access", len,
                     verb, offset);
    return false;
  }
  if (offset + len > ctx_.device.config_size()) {
    ctx_.guest_error("config %s at +0x%" PRIx64 " beyond the %u-byte configuration space", verb, offset,
                     ctx_.device.config_size());
    return false;
  }
  return true;
}

void ConfigWindow::read(uint64_t offset, std::span<uint8_t> data) {
  if (admits(offset, data.size(), "read")) ctx_.device.read_config(static_cast<uint32_t>(offset), data);
}

void ConfigWindow::write(uint64_t offset, std::span<const uint8_t> data) {
  if (!admits(offset, data.size(), "write")) return;
  ctx_.device.write_config(static_cast<uint32_t>(offset), data);
  // The configuration may now read differently: a driver re-reading it
  // under ConfigGeneration must see the change (2.5.1).
  step();
}

}  // namespace kvmmio::virtio
