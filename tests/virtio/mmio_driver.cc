// SPDX-License-Identifier: BSD-2-Clause
// MmioDriver: Linux's virtio_mmio register sequences, step by step.
#include "mmio_driver.h"

#include <cstring>

#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio::test {

uint32_t MmioDriver::read(uint32_t offset) {
  uint8_t data[4];
  device_.mmio_read(offset, data);
  uint32_t v;
  std::memcpy(&v, data, sizeof(v));
  return v;
}

void MmioDriver::write(uint32_t offset, uint32_t value) {
  uint8_t data[4];
  std::memcpy(data, &value, sizeof(value));
  device_.mmio_write(offset, data);
}

bool MmioDriver::probe() {
  if (read(reg::kMagicValue) != kMagic) return false;
  version_ = read(reg::kVersion);
  if (version_ < kVersionLegacy || version_ > kVersionModern) return false;
  device_id_ = read(reg::kDeviceId);
  if (device_id_ == 0) return false;  // a placeholder
  (void)read(reg::kVendorId);
  if (version_ == kVersionLegacy) write(reg::kGuestPageSize, page_size_);
  return true;
}

void MmioDriver::reset() { write(reg::kStatus, 0); }

uint32_t MmioDriver::status() { return read(reg::kStatus) & 0xff; }

void MmioDriver::add_status(uint32_t bits) { write(reg::kStatus, status() | bits); }

uint64_t MmioDriver::device_features() {
  write(reg::kDeviceFeaturesSel, 1);
  uint64_t features = uint64_t{read(reg::kDeviceFeatures)} << 32;
  write(reg::kDeviceFeaturesSel, 0);
  return features | read(reg::kDeviceFeatures);
}

void MmioDriver::write_driver_features(uint64_t features) {
  write(reg::kDriverFeaturesSel, 1);
  write(reg::kDriverFeatures, static_cast<uint32_t>(features >> 32));
  write(reg::kDriverFeaturesSel, 0);
  write(reg::kDriverFeatures, static_cast<uint32_t>(features));
}

std::optional<uint64_t> MmioDriver::initialize(uint64_t wanted) {
  reset();
  add_status(status::kAcknowledge);
  add_status(status::kDriver);
  const uint64_t features = device_features() & wanted;
  if (version_ == kVersionModern && !feature::has(features, feature::kVersion1)) return std::nullopt;
  write_driver_features(features);
  if (feature::has(features, feature::kVersion1)) {  // virtio_features_ok()
    add_status(status::kFeaturesOk);
    if (!(status() & status::kFeaturesOk)) return std::nullopt;
  }
  return features;
}

std::optional<QueueLayout> MmioDriver::setup_queue(uint32_t index, uint64_t ring_gpa, uint32_t size) {
  write(reg::kQueueSel, index);
  if (read(version_ == kVersionLegacy ? reg::kQueuePfn : reg::kQueueReady)) return std::nullopt;
  const uint32_t max = read(reg::kQueueNumMax);
  if (max == 0) return std::nullopt;
  const uint32_t num = size ? size : max;
  QueueLayout layout;
  layout.size = num;
  layout.desc = ring_gpa;
  layout.avail = ring_gpa + desc_table_bytes(num);
  layout.used = (layout.avail + avail_ring_bytes(num) + page_size_ - 1) & ~uint64_t{page_size_ - 1};
  write(reg::kQueueNum, num);
  if (version_ == kVersionLegacy) {
    const uint64_t pfn = ring_gpa / page_size_;
    if (pfn >> 32) return std::nullopt;
    write(reg::kQueueAlign, page_size_);
    write(reg::kQueuePfn, static_cast<uint32_t>(pfn));
  } else {
    write(reg::kQueueDescLow, static_cast<uint32_t>(layout.desc));
    write(reg::kQueueDescHigh, static_cast<uint32_t>(layout.desc >> 32));
    write(reg::kQueueDriverLow, static_cast<uint32_t>(layout.avail));
    write(reg::kQueueDriverHigh, static_cast<uint32_t>(layout.avail >> 32));
    write(reg::kQueueDeviceLow, static_cast<uint32_t>(layout.used));
    write(reg::kQueueDeviceHigh, static_cast<uint32_t>(layout.used >> 32));
    write(reg::kQueueReady, 1);
  }
  return layout;
}

bool MmioDriver::del_queue(uint32_t index) {
  write(reg::kQueueSel, index);
  if (version_ == kVersionLegacy) {
    write(reg::kQueuePfn, 0);
    return true;
  }
  write(reg::kQueueReady, 0);
  return read(reg::kQueueReady) == 0;  // Linux WARN_ONs otherwise
}

void MmioDriver::notify(uint32_t queue) { write(reg::kQueueNotify, queue); }

uint32_t MmioDriver::interrupt() {
  const uint32_t status = read(reg::kInterruptStatus);
  write(reg::kInterruptAck, status);
  return status;
}

uint32_t MmioDriver::config_generation() {
  return version_ == kVersionLegacy ? 0 : read(reg::kConfigGeneration);
}

uint32_t MmioDriver::read_config(uint32_t offset, uint32_t width) {
  uint8_t data[4] = {};
  if (version_ == kVersionLegacy) {
    // Legacy: byte by byte (vm_get, version 1).
    for (uint32_t i = 0; i < width; ++i) device_.mmio_read(reg::kConfig + offset + i, {data + i, 1});
  } else {
    device_.mmio_read(reg::kConfig + offset, {data, width});
  }
  uint32_t v = 0;
  std::memcpy(&v, data, width);
  return v;
}

void MmioDriver::write_config(uint32_t offset, uint32_t width, uint32_t value) {
  uint8_t data[4];
  std::memcpy(data, &value, sizeof(value));
  if (version_ == kVersionLegacy) {
    for (uint32_t i = 0; i < width; ++i) device_.mmio_write(reg::kConfig + offset + i, {data + i, 1});
  } else {
    device_.mmio_write(reg::kConfig + offset, {data, width});
  }
}

}  // namespace kvmmio::virtio::test
