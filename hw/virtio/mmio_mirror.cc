// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport, regs=mirror: keeps the RegisterMirror page equal to what
// mmio_read would return for every readable register and the configuration
// space (docs/virtio-mmio.md "The register mirror").
//
// Who updates it, and when:
//  - after every trapped register or configuration write, under the device
//    lock, before the vCPU resumes (refresh_mirror, from mmio_write): the
//    selector registers, QueueReady, Status, reset and so on;
//  - a configuration change of the device's own (the tap's link going down)
//    publishes the configuration under the ConfigGeneration protocol;
//  - DEVICE_NEEDS_RESET and the config-change bit of InterruptStatus, which
//    can come from threads that do not hold the device lock, publish Status
//    and InterruptStatus only (atomics).
// mirror_mutex_ orders all of them.
//
// The ConfigGeneration protocol (modern layout): a driver reads ConfigGeneration, the
// fields, then ConfigGeneration again, and retries if the two differ
// (virtio 1.2 4.2.2.2). Reads are no longer trapped, so a change must never
// be seen half made with an unchanged generation: the generation is
// stepped (and cleaned to the point of coherency) before the bytes change
// and again after, so any read that overlaps the change sees a step.
#include <array>
#include <cstring>

#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::virtio {

void MmioTransport::refresh_mirror() {
  if (!mirror_) return;
  std::lock_guard mirror_guard(mirror_mutex_);
  publish_config_mirror();
  bool changed = false;
  for (uint32_t offset = 0; offset < reg::kConfig; offset += sizeof(uint32_t)) {
    const RegisterInfo* info = find_register(offset, options_.version);
    // Write-only registers and holes read as zeros (and are guest errors
    // when trapped; with the mirror the VMM cannot see such reads).
    const uint32_t value = info && info->access != RegAccess::kWrite ? read_register(*info) : 0;
    changed |= mirror_->update32(offset, value);
  }
  if (changed) counters_.mirror_updates.fetch_add(1, std::memory_order_relaxed);
  mirror_filled_ = true;
}

void MmioTransport::publish_config_mirror() {
  std::array<uint8_t, kConfigSpaceMax> config{};
  const uint32_t size = device_.config_size();
  if (size) device_.read_config(0, std::span(config).first(size));
  const auto now = std::span<const uint8_t>(config).first(size);
  const auto shown = mirror_->bytes(reg::kConfig, size);
  if (std::equal(now.begin(), now.end(), shown.begin())) return;
  // The legacy layout has no ConfigGeneration (4.2.4): its drivers read
  // the configuration as it is, trapped or not.
  const bool steps = mirror_filled_ && options_.version == kVersionModern;
  if (steps) mirror_->update32(reg::kConfigGeneration, config_generation_.fetch_add(1) + 1);
  mirror_->update(reg::kConfig, now);
  if (steps) mirror_->update32(reg::kConfigGeneration, config_generation_.fetch_add(1) + 1);
  counters_.mirror_updates.fetch_add(1, std::memory_order_relaxed);
}

void MmioTransport::publish_status_mirror() {
  if (!mirror_) return;
  std::lock_guard mirror_guard(mirror_mutex_);
  bool changed = mirror_->update32(reg::kStatus, status_.load());
  changed |= mirror_->update32(reg::kInterruptStatus, interrupt_status());
  if (changed) counters_.mirror_updates.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace kvmmio::virtio
