// SPDX-License-Identifier: BSD-2-Clause
// VirtioDevice: what a device model (virtio-console, virtio-net, ...) gives
// the transport, and what it gets back when the driver sets DRIVER_OK.
//
// The device owns its identity, its feature bits, its queues' maximum sizes
// and its configuration bytes. The transport owns everything guest-facing:
// registers, widths and offsets, the status state machine, feature
// negotiation, ConfigGeneration, ring validation, notifications and
// interrupts.
//
// Threading: the transport calls every method below holding the device
// lock (from a vCPU thread or the event-loop thread), so a device sees one
// call at a time. Activation hands the device that lock: a device that
// touches its queues from a thread of its own holds it meanwhile, and its
// event-loop callbacks run under it (DeviceLock::Watch). A device never
// sees its transport: what it may use comes with DeviceActivation.
//
// Backends (vhost): a device says which queues a backend owns. For those the
// transport does not poll the notify fd and does not process the ring;
// it hands the device the notify fd (the queue's ioeventfd) and the interrupt fd
// (the device's irqfd, or the relay's eventfd in irq=relay mode) to pass on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/export.h"
#include "kvmmio/virtio/queue_layout.h"
#include "kvmmio/virtio/split_queue.h"

namespace kvmmio::virtio {

// How a device raises interrupts and reports failure (4.2.2 InterruptStatus,
// 2.1.2 DEVICE_NEEDS_RESET). Implemented by the transport.
class KVMMIO_EXPORT VirtioInterrupt {
 public:
  // A used-buffer notification for a VMM-owned queue. Call it when
  // SplitQueue::should_interrupt() says so.
  virtual void signal_used() = 0;
  // The device changed its configuration: ConfigGeneration moves, and once
  // DRIVER_OK is set, InterruptStatus bit 1 is raised (4.2.2, 2.5.1).
  virtual void signal_config_change() = 0;
  // The device cannot go on (2.1.2): sets DEVICE_NEEDS_RESET and, once
  // DRIVER_OK is set, sends a configuration change notification.
  virtual void needs_reset(const char* why) = 0;

 protected:
  ~VirtioInterrupt() = default;
};

// One queue the driver made ready, as the device gets it.
struct KVMMIO_EXPORT ActiveQueue {
  uint32_t index = 0;
  QueueLayout layout;
  // The ring, for VMM-owned queues; nullptr when a backend owns the queue.
  // The pointer stays valid for the transport's lifetime; the ring is
  // stopped (pops nothing) whenever the queue is not live.
  SplitQueue* ring = nullptr;
  // Backend-owned queues only, else -1. The fds belong to the transport,
  // which keeps them open for its lifetime; the device uses them until its
  // reset()/reset_queue() returns.
  int notify_fd = -1;     // signalled when the guest notifies this queue (vhost's kick fd)
  int interrupt_fd = -1;  // write 1 to interrupt the guest for used buffers (vhost's call fd)
};

// What a device gets at DRIVER_OK: everything it may use until reset().
struct KVMMIO_EXPORT DeviceActivation {
  uint64_t features = 0;            // what the driver accepted
  std::vector<ActiveQueue> queues;  // the ready queues, by index
  VirtioInterrupt* interrupt = nullptr;
  // The device lock. Like the rings, it stays valid for the transport's
  // lifetime, across resets.
  DeviceLock* lock = nullptr;
};

// Receives a device's counters, one name and value at a time, in order.
using CounterVisitor = std::function<void(const char* name, uint64_t value)>;

class KVMMIO_EXPORT VirtioDevice {
 public:
  virtual ~VirtioDevice() = default;

  // Identity and capabilities (5 "Device Types", 6 "Reserved Feature Bits").
  virtual uint32_t device_id() const = 0;
  // Device-type feature bits. The transport adds the bits it implements
  // (VERSION_1 in modern mode, INDIRECT_DESC, EVENT_IDX, RING_RESET when
  // supports_queue_reset()) and drops transport bits it does not.
  virtual uint64_t device_features() const = 0;
  // Transport bits the transport must not offer for this device, whatever
  // its options say: a backend process that walks the rings itself and
  // lacks one (a vhost-user backend without EVENT_IDX) cannot honour it.
  virtual uint64_t withheld_transport_features() const { return 0; }
  virtual uint32_t num_queues() const = 0;
  // QueueNumMax of `queue` (< num_queues()): a power of two, <= 32768.
  virtual uint16_t queue_max_size(uint32_t queue) const = 0;

  // Configuration space (4.2.2 Config): the transport has checked that
  // [offset, offset + data.size()) lies within config_size() (<= 256).
  virtual uint32_t config_size() const { return 0; }
  virtual void read_config(uint32_t offset, std::span<uint8_t> data) {
    (void)offset;
    std::fill(data.begin(), data.end(), 0);
  }
  virtual void write_config(uint32_t offset, std::span<const uint8_t> data) {
    (void)offset;
    (void)data;
  }

  // At FEATURES_OK (modern) the transport has checked that `features` is a
  // subset of what it offered; a device may still refuse a combination
  // (2.2.2: then FEATURES_OK is not set).
  virtual bool accept_features(uint64_t features) {
    (void)features;
    return true;
  }

  // Whether a backend (vhost) processes `queue`'s ring.
  virtual bool backend_owns_queue(uint32_t queue) const {
    (void)queue;
    return false;
  }

  // DRIVER_OK: start. Return false if the device cannot (the transport then
  // sets DEVICE_NEEDS_RESET). Right after a successful activate(), the
  // transport calls queue_notify() once per VMM-owned queue, so buffers the
  // driver made available before DRIVER_OK are not missed.
  virtual bool activate(const DeviceActivation& activation) = 0;
  // The driver notified a VMM-owned queue (a trapped QueueNotify or a polled
  // ioeventfd).
  virtual void queue_notify(uint32_t queue) { (void)queue; }
  // Status 0: stop everything; drop every fd and queue pointer of the
  // activation. Called only after a successful activate().
  virtual void reset() = 0;

  // Per-queue stop and restart while DRIVER_OK (QueueReady = 0 or, with
  // VIRTIO_F_RING_RESET, QueueReset; then QueueReady = 1 again).
  virtual bool supports_queue_reset() const { return false; }
  virtual void reset_queue(uint32_t queue) { (void)queue; }
  virtual void enable_queue(const ActiveQueue& queue) { (void)queue; }

  // Statistics, from any thread (counters are atomics or fixed settings).
  // The guest errors the device found itself; the transport counts its
  // own, and a VMM reports the sum as the device's one guest_errors.
  virtual uint64_t guest_errors() const { return 0; }
  // The device's own settings and counters, in the order a VMM reports
  // them after the transport's (counter tables, kvmmio/base/counters.h).
  virtual void visit_counters(const CounterVisitor& visit) const { (void)visit; }
};

}  // namespace kvmmio::virtio
