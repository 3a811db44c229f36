// SPDX-License-Identifier: BSD-2-Clause
// QueueSet: the device's queues: QueueSel, which queues are live, their
// rings, and their notify fds. Every method but the constructor runs with
// the device lock held (polled notifies take it through their watch).
//
// Notify fds are assigned once, when the transport is built, and stay for
// its lifetime: a QueueReady write costs the host no KVM_IOEVENTFD ioctl
// and no watch, however often the guest repeats it. Liveness gates what a
// notify does instead: a notify of a queue that is not live is drained and
// ignored (a spurious notification is harmless, 2.7.10), and a
// backend-owned queue's fd reaches its backend only while the queue is live
// and the device active (a kick that waited meanwhile is one spurious kick
// for the backend).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvmmio/virtio/virtio_device.h"
#include "mmio_context.h"
#include "mmio_queue_state.h"

namespace kvmmio::virtio {

class DeviceLifecycle;
class FeatureNegotiation;
class TransportInterrupts;

class QueueSet {
 public:
  // Throws std::invalid_argument for queue sizes the transport cannot
  // present. The rings report broken guest rings to `faults`.
  QueueSet(TransportContext& ctx, const FeatureNegotiation& features, const DeviceLifecycle& lifecycle,
           TransportInterrupts& interrupts, QueueFaultSink& faults);

  // The notify fds: assigned (and VMM-owned ones watched) once, as the
  // transport is built; dropped once, as it goes, after the device let go.
  void attach_notify_fds();
  void detach_notify_fds();

  uint32_t size() const { return static_cast<uint32_t>(queues_.size()); }
  // QueueSel: any value; the selected queue, or nullptr when it does not exist.
  void select(uint32_t index) { selected_ = index; }
  uint32_t selected_index() const { return selected_; }
  QueueState* selected() { return selected_ < queues_.size() ? &queues_[selected_] : nullptr; }
  // GuestPageSize (legacy): kept across resets, Linux writes it once at probe.
  uint32_t guest_page_size() const { return guest_page_size_; }
  void set_guest_page_size(uint32_t size) { guest_page_size_ = size; }

  // `q` goes live with `layout` (validated); after DRIVER_OK the device
  // gets it at once.
  void go_live(QueueState& q, const QueueLayout& layout);
  // `q` stops: the device lets go of it, its ring pops nothing.
  void stop(QueueState& q);

  // DRIVER_OK: the live queues' rings configured with the negotiated ring
  // features, as the device's activation lists them.
  std::vector<ActiveQueue> start_live();
  // The device refused to start: every ring stopped again.
  void stop_rings();
  // After activation: buffers made available before DRIVER_OK came with
  // notifies nobody acted on.
  void notify_vmm_owned();
  // Status 0: every queue stopped, its registers reset; notify fds stay.
  void reset();
  // Tells the interrupts whether a backend writes the irqfd behind the VMM.
  void update_bypass();

  // A QueueNotify write that arrived as an MMIO exit.
  void notify_trapped(uint32_t value);

 private:
  void start_ring(QueueState& q);
  ActiveQueue active_queue(QueueState& q);
  std::string attach_notify_fd(QueueState& q);  // why it traps, or empty
  void notify_polled(uint32_t index);

  TransportContext& ctx_;
  const FeatureNegotiation& features_;
  const DeviceLifecycle& lifecycle_;
  TransportInterrupts& interrupts_;
  std::vector<QueueState> queues_;
  uint32_t selected_ = 0;  // QueueSel
  uint32_t guest_page_size_ = kLegacyDefaultPageSize;
};

}  // namespace kvmmio::virtio
