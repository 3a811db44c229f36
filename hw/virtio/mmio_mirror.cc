// SPDX-License-Identifier: BSD-2-Clause
// MirrorPublisher, regs=mirror: keeps the RegisterMirror page equal to what
// mmio_read would return for every readable register and the configuration
// space (docs/virtio-mmio.md "The register mirror").
//
// Who updates it, and when:
//  - after every trapped register or configuration write, under the device
//    lock, before the vCPU resumes (refresh, from MmioTransport::mmio_write):
//    the selector registers, QueueReady, Status, reset and so on;
//  - a configuration change of the device's own (the tap's link going down)
//    publishes the configuration under the ConfigGeneration protocol;
//  - DEVICE_NEEDS_RESET and the config-change bit of InterruptStatus, which
//    can come from threads that do not hold the device lock, publish Status
//    and InterruptStatus only (atomics).
// mutex_ orders all of them.
//
// The ConfigGeneration protocol (modern layout): a driver reads ConfigGeneration, the
// fields, then ConfigGeneration again, and retries if the two differ
// (virtio 1.2 4.2.2.2). Reads are no longer trapped, so a change must never
// be seen half made with an unchanged generation: the generation is
// stepped (and cleaned to the point of coherency) before the bytes change
// and again after, so any read that overlaps the change sees a step.
#include "mmio_mirror.h"

#include <array>
#include <cstring>


namespace kvmmio::virtio {

MirrorPublisher::MirrorPublisher(TransportContext& ctx, MirrorSource& source) : ctx_(ctx), source_(source) {
  if (ctx_.options.regs != RegsMode::kMirror) return;
  page_ = std::make_unique<RegisterMirror>(kMmioWindowSize, ctx_.env.mirror_clean ? ctx_.env.mirror_clean
                                                                                  : clean_dcache_to_poc);
}

void MirrorPublisher::refresh() {
  if (!page_) return;
  std::lock_guard guard(mutex_);
  publish_config();
  bool changed = false;
  for (uint32_t offset = 0; offset < reg::kConfig; offset += sizeof(uint32_t)) {
    const RegisterInfo* info = find_register(offset, ctx_.options.version);
    // Write-only registers and holes read as zeros (and are guest errors
    // when trapped; with the mirror the VMM cannot see such reads).
    const uint32_t value = info && info->access != RegAccess::kWrite ? source_.register_value(*info) : 0;
    changed |= page_->update32(offset, value);
  }
  if (changed) ctx_.counters.mirror_updates.fetch_add(1, std::memory_order_relaxed);
  filled_ = true;
}

void MirrorPublisher::publish_config_change() {
  if (!page_) return;
  std::lock_guard guard(mutex_);
  publish_config();
  if (ctx_.options.version == kVersionModern) page_->update32(reg::kConfigGeneration, source_.config_generation());
}

void MirrorPublisher::publish_config() {
  std::array<uint8_t, kConfigSpaceMax> config{};
  const uint32_t size = ctx_.device.config_size();
  if (size) ctx_.device.read_config(0, std::span(config).first(size));
  const auto now = std::span<const uint8_t>(config).first(size);
  const auto shown = page_->bytes(reg::kConfig, size);
  if (std::equal(now.begin(), now.end(), shown.begin())) return;
  // The legacy layout has no ConfigGeneration (4.2.4): its drivers read
  // the configuration as it is, trapped or not.
  const bool steps = filled_ && ctx_.options.version == kVersionModern;
  if (steps) page_->update32(reg::kConfigGeneration, source_.step_config_generation());
  page_->update(reg::kConfig, now);
  if (steps) page_->update32(reg::kConfigGeneration, source_.step_config_generation());
  ctx_.counters.mirror_updates.fetch_add(1, std::memory_order_relaxed);
}

void MirrorPublisher::publish_status() {
  if (!page_) return;
  std::lock_guard guard(mutex_);
  bool changed = page_->update32(reg::kStatus, source_.device_status());
  changed |= page_->update32(reg::kInterruptStatus, source_.interrupt_status());
  if (changed) ctx_.counters.mirror_updates.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace kvmmio::virtio
