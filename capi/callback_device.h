// SPDX-License-Identifier: BSD-2-Clause
// CallbackDevice: a VirtioDevice made of the C API's kvmmio_device_ops, and
// the kvmmio_queue and kvmmio_chain handles its callbacks get: a ready
// queue's ring and the chains popped from it (kvmmio/kvmmio.h). Internal to
// the library; the C functions that use these are in capi/kvmmio.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvmmio/guest_memory.h"
#include "kvmmio/kvmmio.h"
#include "kvmmio/virtio/descriptor_chain.h"
#include "kvmmio/virtio/split_queue.h"
#include "kvmmio/virtio/virtio_device.h"

// The C header's opaque types are these (global namespace, as declared there).
struct kvmmio_chain {
  explicit kvmmio_chain(const kvmmio::GuestMemory& memory) : memory(memory) {}
  const kvmmio::GuestMemory& memory;  // where its buffers are
  kvmmio::virtio::DescriptorChain chain;
};

// One ready queue of an active CallbackDevice, from activate() to reset().
struct kvmmio_queue {
  kvmmio_queue(uint32_t index, kvmmio::virtio::SplitQueue& ring, kvmmio::virtio::VirtioInterrupt& interrupt,
               const kvmmio::GuestMemory& memory)
      : index(index), ring(ring), interrupt(interrupt), memory(memory) {}

  // The next chain, or nullptr (empty, or broken: the ring reported it).
  kvmmio_chain* pop();
  // Returns `chain` to the driver and to the pool of chains.
  void push(kvmmio_chain* chain, uint32_t written);
  // Raises the used-buffer interrupt if the driver wants one.
  bool interrupt_if_wanted();

  const uint32_t index;
  kvmmio::virtio::SplitQueue& ring;
  kvmmio::virtio::VirtioInterrupt& interrupt;
  const kvmmio::GuestMemory& memory;

 private:
  // Every chain the queue has handed out; pops reuse the pushed ones, so
  // the steady state does not allocate.
  std::vector<std::unique_ptr<kvmmio_chain>> chains_;
  std::vector<kvmmio_chain*> free_;
};

namespace kvmmio::capi {

class CallbackDevice final : public virtio::VirtioDevice {
 public:
  // `ops` as the caller gave it, already widened to this library's struct.
  // std::invalid_argument for ops the transport could not present (no
  // queue_notify, no queues or more than 64, a queue size that is not a
  // power of two up to 32768, configuration space beyond 256 bytes).
  CallbackDevice(const GuestMemory& memory, const kvmmio_device_ops& ops, void* opaque);

  const std::string& name() const { return name_; }

  uint32_t device_id() const override { return ops_.device_id; }
  uint64_t device_features() const override { return ops_.features; }
  uint32_t num_queues() const override { return ops_.num_queues; }
  uint16_t queue_max_size(uint32_t) const override { return ops_.queue_max_size; }
  uint32_t config_size() const override { return ops_.config_size; }
  void read_config(uint32_t offset, std::span<uint8_t> data) override;
  void write_config(uint32_t offset, std::span<const uint8_t> data) override;
  bool activate(const virtio::DeviceActivation& activation) override;
  void queue_notify(uint32_t queue) override;
  void reset() override;

  // Under the device lock: a ready queue while active, else nullptr.
  kvmmio_queue* queue(uint32_t index);
  // The device lock, known from the first activation on (nullptr before).
  DeviceLock* lock() const { return lock_; }

 private:
  const GuestMemory& memory_;
  kvmmio_device_ops ops_;
  std::string name_;
  void* opaque_;
  std::vector<std::unique_ptr<kvmmio_queue>> queues_;  // by index; nullptr: not ready
  DeviceLock* lock_ = nullptr;
};

}  // namespace kvmmio::capi
