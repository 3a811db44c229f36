// SPDX-License-Identifier: BSD-2-Clause
// EchoDevice: echoes each chain's readable bytes into its writable part.
#include "echo_device.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace kvmmio::virtio::test {

EchoDevice::EchoDevice(const GuestMemory& memory, Options options)
    : memory_(memory), options_(options), rings_(options.queues, nullptr), notifies_(options.queues) {
  for (uint32_t i = 0; i < kConfigSize; ++i) config_[i] = static_cast<uint8_t>(0xc0 + i);
}

void EchoDevice::read_config(uint32_t offset, std::span<uint8_t> data) {
  std::lock_guard lock(mutex_);
  std::memcpy(data.data(), config_ + offset, data.size());
}

void EchoDevice::write_config(uint32_t offset, std::span<const uint8_t> data) {
  std::lock_guard lock(mutex_);
  std::memcpy(config_ + offset, data.data(), data.size());
}

void EchoDevice::change_config(uint32_t offset, uint8_t value) {
  {
    std::lock_guard lock(mutex_);
    config_[offset % kConfigSize] = value;
  }
  if (interrupt_) interrupt_->signal_config_change();
}

bool EchoDevice::accept_features(uint64_t) { return !options_.refuse_features; }

bool EchoDevice::activate(const DeviceActivation& activation) {
  if (options_.fail_activation) return false;
  std::lock_guard lock(mutex_);
  activation_ = activation;
  interrupt_ = activation.interrupt;
  for (const ActiveQueue& q : activation.queues) rings_.at(q.index) = q.ring;
  active_ = true;
  return true;
}

void EchoDevice::reset() {
  std::lock_guard lock(mutex_);
  std::fill(rings_.begin(), rings_.end(), nullptr);
  activation_.queues.clear();
  active_ = false;
  ++resets_;
}

void EchoDevice::reset_queue(uint32_t queue) {
  std::lock_guard lock(mutex_);
  rings_.at(queue) = nullptr;
  ++queue_resets_;
}

void EchoDevice::enable_queue(const ActiveQueue& queue) {
  std::lock_guard lock(mutex_);
  rings_.at(queue.index) = queue.ring;
  ++enables_;
}

uint64_t EchoDevice::activated_features() const {
  std::lock_guard lock(mutex_);
  return activation_.features;
}

std::vector<ActiveQueue> EchoDevice::activated_queues() const {
  std::lock_guard lock(mutex_);
  return activation_.queues;
}

void EchoDevice::queue_notify(uint32_t queue) {
  SplitQueue* ring;
  {
    std::lock_guard lock(mutex_);
    ++notifies_.at(queue);
    ring = rings_.at(queue);
  }
  if (ring) process(*ring);
}

void EchoDevice::process(SplitQueue& ring) {
  DescriptorChain chain;
  std::vector<uint8_t> data;
  for (;;) {
    const SplitQueue::PopResult r = ring.pop(chain);
    if (r == SplitQueue::PopResult::kBroken) ++broken_;
    if (r != SplitQueue::PopResult::kChain) break;
    data.resize(std::min<uint64_t>(chain.readable_bytes, 1 << 16));
    const size_t in = read_from_chain(memory_, chain, 0, data);
    const size_t out = write_to_chain(memory_, chain, 0, {data.data(), in});
    ring.push_used(chain.head, static_cast<uint32_t>(out));
    bytes_ += out;
    {
      std::lock_guard lock(mutex_);
      ++chains_;
    }
    progress_.notify_all();
    if (ring.should_interrupt() && activation_.interrupt) activation_.interrupt->signal_used();
  }
}

bool EchoDevice::wait_for_chains(uint64_t n, int timeout_ms) {
  std::unique_lock lock(mutex_);
  return progress_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return chains_ >= n; });
}

}  // namespace kvmmio::virtio::test
