// SPDX-License-Identifier: BSD-2-Clause
// MmioDriver: drives a virtio-mmio register file exactly as Linux's
// drivers/virtio/virtio_mmio.c (and the virtio core around it) does: the
// same registers, in the same order, with the same widths. Each method names
// the Linux function it mirrors. Works on any MmioDevice: the transport in
// unit tests, or the one a KVM test guest also talks to.
#pragma once

#include <cstdint>
#include <optional>

#include "kvmmio/mmio_bus.h"
#include "kvmmio/virtio/queue_layout.h"

namespace kvmmio::virtio::test {

class MmioDriver {
 public:
  // `page_size`: the guest's PAGE_SIZE, written to GuestPageSize and
  // QueueAlign by a legacy driver, and the vring alignment of both.
  explicit MmioDriver(MmioDevice& device, uint32_t page_size = 4096)
      : device_(device), page_size_(page_size) {}

  uint32_t read(uint32_t offset);
  void write(uint32_t offset, uint32_t value);

  // virtio_mmio_probe(): magic, version (1 or 2), DeviceID (0: no device),
  // VendorID; a legacy driver then writes GuestPageSize. False if Linux
  // would not bind.
  bool probe();
  uint32_t version() const { return version_; }
  uint32_t device_id() const { return device_id_; }

  // vm_reset(), vm_get_status(), virtio_add_status().
  void reset();
  uint32_t status();
  void add_status(uint32_t bits);

  // vm_get_features(): word 1, then word 0. vm_finalize_features(): the
  // same for DriverFeatures.
  uint64_t device_features();
  void write_driver_features(uint64_t features);

  // virtio_dev_probe() up to the driver's own probe: reset, ACKNOWLEDGE,
  // DRIVER, negotiate `wanted & offered` (a modern driver insists on
  // VERSION_1), FEATURES_OK and its read-back (modern only). Returns the
  // features, or nullopt where Linux would fail the probe.
  std::optional<uint64_t> initialize(uint64_t wanted);

  // vm_setup_vq(): select, check it is not in use, read QueueNumMax, lay the
  // ring out at ring_gpa, write QueueNum, then QueueAlign + QueuePFN
  // (legacy) or the three addresses + QueueReady (modern). `size` 0 means
  // QueueNumMax. nullopt where Linux would fail.
  std::optional<QueueLayout> setup_queue(uint32_t index, uint64_t ring_gpa, uint32_t size = 0);
  // vm_del_vq(): QueuePFN = 0, or QueueReady = 0 and its read-back.
  bool del_queue(uint32_t index);

  // virtio_device_ready().
  void driver_ok() { add_status(kDriverOkBit); }
  // vm_notify().
  void notify(uint32_t queue);
  // vm_interrupt(): read InterruptStatus, write it to InterruptACK; returns
  // what was read.
  uint32_t interrupt();
  // vm_generation() and a vm_get() of one byte/half/word of config.
  uint32_t config_generation();
  uint32_t read_config(uint32_t offset, uint32_t width);
  void write_config(uint32_t offset, uint32_t width, uint32_t value);

 private:
  static constexpr uint32_t kDriverOkBit = 4;
  MmioDevice& device_;
  uint32_t page_size_;
  uint32_t version_ = 0;
  uint32_t device_id_ = 0;
};

}  // namespace kvmmio::virtio::test
