// SPDX-License-Identifier: BSD-2-Clause
// QueueSet: the device's queues, one of the transport's three owners
// (mmio_parts.h): QueueSel, each queue's registers (written only through
// the typed setters below), which queues are live, their rings, and their
// notify fds. It calls no other part: what activation decides (the ring
// features, the interrupt fd a backend writes) is handed to it. Every
// method but the constructor runs with the device lock held (polled
// notifies take it through their watch).
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

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvmmio/virtio/virtio_device.h"
#include "mmio_context.h"
#include "mmio_queue_state.h"

namespace kvmmio::virtio {

// What DRIVER_OK hands the queues: the ring features the driver accepted,
// and the fd a backend writes to interrupt the guest (the irqfd, or the
// irq=relay eventfd).
struct QueueActivation {
  SplitQueue::Features rings;
  int interrupt_fd = -1;
};

// The queue address registers of the modern layout (4.2.2), each a pair of
// 32-bit halves.
enum class QueueAddress { kDesc, kDriver, kDevice };

class QueueSet {
 public:
  // Throws std::invalid_argument for queue sizes the transport cannot
  // present. The rings report broken guest rings to `faults`.
  QueueSet(TransportContext& ctx, QueueFaultSink& faults);

  // The notify fds: assigned (and VMM-owned ones watched) once, as the
  // transport is built; dropped once, as it goes, after the device let go.
  void attach_notify_fds();
  void detach_notify_fds();

  uint32_t size() const { return static_cast<uint32_t>(queues_.size()); }
  // QueueSel: any value; the selected queue (read only), or nullptr when
  // it does not exist.
  void select(uint32_t index) { selected_ = index; }
  uint32_t selected_index() const { return selected_; }
  const QueueState* selected() const { return selected_ < queues_.size() ? &queues_[selected_] : nullptr; }
  // GuestPageSize (legacy): kept across resets, Linux writes it once at probe.
  uint32_t guest_page_size() const { return guest_page_size_; }
  void set_guest_page_size(uint32_t size) { guest_page_size_ = size; }

  // The selected queue's set-up registers (QueueNum, the address halves,
  // QueueAlign), checked when it goes live. Each is refused (false) while
  // the queue is live (4.2.2.2) or when no queue is selected.
  bool set_size(uint32_t num);
  bool set_address(QueueAddress which, bool high_half, uint32_t value);
  bool set_align(uint32_t align);
  // The layout the selected queue's modern registers describe (unchecked).
  QueueLayout modern_layout() const;

  // The selected queue goes live with `layout` (validated by the caller;
  // `pfn` is legacy's QueuePFN, 0 in the modern layout); once active the
  // device gets it at once. No-op without a selected queue.
  void go_live(const QueueLayout& layout, uint32_t pfn = 0);
  // The selected queue stops: the device lets go of it, its ring pops
  // nothing. With `reset_registers` (QueueReset, 2.6.1) its registers
  // return to their reset values too.
  void stop_selected(bool reset_registers = false);

  // DRIVER_OK: the live queues' rings configured with `activation`'s ring
  // features, as the device's activation lists them.
  std::vector<ActiveQueue> start_live(const QueueActivation& activation);
  // The device refused to start: every ring stopped again.
  void abort_start();
  // The device started: queues going live from now on reach it at once,
  // and buffers made available before DRIVER_OK (with notifies nobody
  // acted on) are looked at.
  void activated();
  // The device was reset or stopped: no queue reaches it any more.
  void deactivated();
  // Status 0: every queue stopped, its registers reset; notify fds stay.
  void reset();

  // Whether a backend writes the irqfd behind the VMM (irq=irqfd, a
  // backend-owned queue live, the device active): InterruptStatus cannot
  // know of its used buffers then. From any thread.
  bool backend_bypass() const { return bypass_.load(); }

  // A QueueNotify write that arrived as an MMIO exit.
  void notify_trapped(uint32_t value);

 private:
  QueueState* selected_mutable() { return selected_ < queues_.size() ? &queues_[selected_] : nullptr; }
  void stop(QueueState& q);
  void start_ring(QueueState& q, const QueueActivation& activation);
  ActiveQueue active_queue(QueueState& q, const QueueActivation& activation);
  void update_bypass();
  std::string attach_notify_fd(QueueState& q);  // why it traps, or empty
  void notify_polled(uint32_t index);

  TransportContext& ctx_;
  std::vector<QueueState> queues_;
  uint32_t selected_ = 0;  // QueueSel
  uint32_t guest_page_size_ = kLegacyDefaultPageSize;
  // From start_live() to activated() or abort_start(), then from
  // activated() until deactivated() or reset(): the device runs with these.
  std::optional<QueueActivation> starting_, active_;
  std::atomic<bool> bypass_{false};
};

}  // namespace kvmmio::virtio
