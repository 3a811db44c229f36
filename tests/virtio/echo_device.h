// SPDX-License-Identifier: BSD-2-Clause
// EchoDevice: a small VirtioDevice for tests, the fuzzer and the KVM tests.
// Each VMM-owned queue echoes: the bytes of a chain's device-readable part
// are copied into its device-writable part, the chain is returned with the
// number of bytes written, and a used-buffer interrupt follows when the ring
// asks for one. Queues listed in `backend_queues` are left to a "backend"
// (the test itself), as vhost queues would be.
//
// Everything it records is readable from other threads while it runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::virtio::test {

class EchoDevice : public VirtioDevice {
 public:
  // Not a registered virtio device type: no driver binds to it by accident.
  static constexpr uint32_t kDeviceId = 0xfff0;
  static constexpr uint64_t kEchoFeature = uint64_t{1} << 0;  // a device-type bit
  static constexpr uint32_t kConfigSize = 16;

  struct Options {
    uint32_t queues = 2;
    uint16_t max_size = 256;
    uint64_t features = kEchoFeature;
    uint32_t backend_queues = 0;  // bit n: a backend owns queue n
    bool queue_reset = true;      // offer VIRTIO_F_RING_RESET
    bool fail_activation = false;
    bool refuse_features = false;  // accept_features() says no
    uint64_t withheld = 0;         // withheld_transport_features()
  };

  EchoDevice(const GuestMemory& memory, Options options);
  explicit EchoDevice(const GuestMemory& memory) : EchoDevice(memory, Options{}) {}

  uint32_t device_id() const override { return kDeviceId; }
  uint64_t device_features() const override { return options_.features; }
  uint64_t withheld_transport_features() const override { return options_.withheld; }
  uint32_t num_queues() const override { return options_.queues; }
  uint16_t queue_max_size(uint32_t) const override { return options_.max_size; }
  uint32_t config_size() const override { return kConfigSize; }
  void read_config(uint32_t offset, std::span<uint8_t> data) override;
  void write_config(uint32_t offset, std::span<const uint8_t> data) override;
  bool accept_features(uint64_t features) override;
  bool backend_owns_queue(uint32_t queue) const override { return (options_.backend_queues >> queue) & 1; }
  bool activate(const DeviceActivation& activation) override;
  void queue_notify(uint32_t queue) override;
  void reset() override;
  bool supports_queue_reset() const override { return options_.queue_reset; }
  void reset_queue(uint32_t queue) override;
  void enable_queue(const ActiveQueue& queue) override;

  // Where device-initiated changes are reported before activation hands
  // the interrupt over (MmioTransport::interrupt()).
  void set_interrupt(VirtioInterrupt* interrupt) { interrupt_ = interrupt; }
  // A device-side configuration change (as a link-status change would be).
  void change_config(uint32_t offset, uint8_t value);

  // What happened.
  bool active() const { return active_; }
  uint64_t activated_features() const;
  std::vector<ActiveQueue> activated_queues() const;
  uint64_t notifies(uint32_t queue) const { return notifies_.at(queue).load(); }
  uint64_t chains() const { return chains_.load(); }
  uint64_t bytes_echoed() const { return bytes_.load(); }
  uint64_t resets() const { return resets_.load(); }
  uint64_t queue_resets() const { return queue_resets_.load(); }
  uint64_t enables() const { return enables_.load(); }
  uint64_t broken_pops() const { return broken_.load(); }
  // Waits until `chains()` reaches `n`; false on timeout.
  bool wait_for_chains(uint64_t n, int timeout_ms);

 private:
  void process(SplitQueue& ring);

  const GuestMemory& memory_;
  Options options_;
  uint8_t config_[kConfigSize] = {};
  mutable std::mutex mutex_;
  std::condition_variable progress_;
  std::atomic<bool> active_{false};
  DeviceActivation activation_;
  VirtioInterrupt* interrupt_ = nullptr;
  std::vector<SplitQueue*> rings_;  // by queue index; nullptr: not VMM-owned or not live
  std::vector<std::atomic<uint64_t>> notifies_;
  std::atomic<uint64_t> chains_{0}, bytes_{0}, resets_{0}, queue_resets_{0}, enables_{0}, broken_{0};
};

}  // namespace kvmmio::virtio::test
