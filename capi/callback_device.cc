// SPDX-License-Identifier: BSD-2-Clause
// CallbackDevice: the C API's device callbacks behind the VirtioDevice
// interface, and the queue and chain handles they work with.
#include "capi/callback_device.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace kvmmio::capi {
namespace {

constexpr uint32_t kMaxQueues = 64;
constexpr uint32_t kMaxQueueSize = 32768;
constexpr uint32_t kMaxConfig = 256;

}  // namespace

CallbackDevice::CallbackDevice(const GuestMemory& memory, const kvmmio_device_ops& ops, void* opaque)
    : memory_(memory), ops_(ops), name_(ops.name ? ops.name : "c-device"), opaque_(opaque) {
  ops_.name = nullptr;  // name_ holds the copy
  if (!ops.queue_notify) throw std::invalid_argument(name_ + ": the device has no queue_notify callback");
  if (ops.num_queues == 0 || ops.num_queues > kMaxQueues)
    throw std::invalid_argument(name_ + ": a device has 1 to 64 queues");
  if (ops.queue_max_size == 0 || ops.queue_max_size > kMaxQueueSize || !std::has_single_bit(ops.queue_max_size))
    throw std::invalid_argument(name_ + ": queue_max_size must be a power of two up to 32768");
  if (ops.config_size > kMaxConfig)
    throw std::invalid_argument(name_ + ": configuration space is at most 256 bytes");
}

void CallbackDevice::read_config(uint32_t offset, std::span<uint8_t> data) {
  if (!ops_.read_config) return VirtioDevice::read_config(offset, data);
  ops_.read_config(opaque_, offset, data.data(), static_cast<uint32_t>(data.size()));
}

void CallbackDevice::write_config(uint32_t offset, std::span<const uint8_t> data) {
  if (ops_.write_config) ops_.write_config(opaque_, offset, data.data(), static_cast<uint32_t>(data.size()));
}

bool CallbackDevice::activate(const virtio::DeviceActivation& activation) {
  lock_ = activation.lock;
  queues_.clear();
  queues_.resize(ops_.num_queues);
  for (const virtio::ActiveQueue& q : activation.queues) {
    if (q.index < queues_.size() && q.ring)
      queues_[q.index] = std::make_unique<kvmmio_queue>(q.index, *q.ring, *activation.interrupt, memory_);
  }
  if (ops_.activate && ops_.activate(opaque_, activation.features) != 0) {
    queues_.clear();
    return false;
  }
  return true;
}

void CallbackDevice::queue_notify(uint32_t queue) {
  if (kvmmio_queue* q = this->queue(queue)) ops_.queue_notify(opaque_, q);
}

void CallbackDevice::reset() {
  queues_.clear();
  if (ops_.reset) ops_.reset(opaque_);
}

kvmmio_queue* CallbackDevice::queue(uint32_t index) {
  return index < queues_.size() ? queues_[index].get() : nullptr;
}

}  // namespace kvmmio::capi

kvmmio_chain* kvmmio_queue::pop() {
  kvmmio_chain* chain;
  if (free_.empty()) {
    chains_.push_back(std::make_unique<kvmmio_chain>(memory));
    chain = chains_.back().get();
  } else {
    chain = free_.back();
    free_.pop_back();
  }
  if (ring.pop(chain->chain) == kvmmio::virtio::SplitQueue::PopResult::kChain) return chain;
  free_.push_back(chain);
  return nullptr;
}

void kvmmio_queue::push(kvmmio_chain* chain, uint32_t written) {
  ring.push_used(chain->chain.head, written);
  free_.push_back(chain);
}

bool kvmmio_queue::interrupt_if_wanted() {
  if (!ring.should_interrupt()) return false;
  interrupt.signal_used();
  return true;
}
