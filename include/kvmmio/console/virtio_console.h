// SPDX-License-Identifier: BSD-2-Clause
// VirtioConsole: the virtio-console device (virtio 1.2 section 5.3, device
// ID 3) with one port and no VIRTIO_CONSOLE_F_MULTIPORT: Linux's
// virtio_console binds it as hvc0.
//
// Queues (5.3.2): receiveq 0 (host input into guest buffers), transmitq 1
// (guest output). Both are the VMM's:
//  - TX runs when the guest notifies (queue_notify, device lock held) and
//    writes each chain's bytes to the output fd without waiting: when the
//    fd is full, the chain stays unfinished and an EventLoop watch resumes
//    it once the fd has room. The event-loop thread never blocks on a
//    stalled reader; the guest sees its buffers come back later, as on a
//    slow line. Output the fd cannot take is never buffered by the VMM: it
//    stays in the guest's own buffers (tx_stalls counts the waits), or,
//    once the fd is gone, is dropped (output_dropped). Per dispatch TX
//    writes at most kTxBytesPerDispatch bytes and kTxChainsPerDispatch
//    chains, then re-queues itself on the event loop (DeferredWork), so a
//    chain whose descriptors repeat the same guest bytes up to 4 GiB costs
//    the loop one budget per turn, not seconds.
//  - RX takes at most kRxChainsPerDispatch buffers per receive() call; when
//    it stops there with input left, it calls the space callback at once,
//    so the caller comes back on a later turn.
//  - RX is the ConsoleInputSink side: receive() (any thread but the
//    transport's callbacks) fills the guest's receiveq buffers in order and
//    takes only what fits; the rest waits at the caller until the guest
//    posts buffers (the RX notify calls the space callback). No input is
//    dropped.
// The guest is hostile: a transmitq chain with device-writable buffers or a
// receiveq chain with device-readable ones is a guest error and the device
// enters DEVICE_NEEDS_RESET (the ring's own checks, e.g. buffers outside
// RAM, come from SplitQueue through the transport).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>

#include "kvmmio/base/export.h"
#include "kvmmio/console/input_sink.h"
#include "kvmmio/base/counters.h"
#include "kvmmio/base/deferred_work.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/base/log.h"
#include "kvmmio/virtio/descriptor_chain.h"
#include "kvmmio/virtio/queue_drain.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::console {

// What the device did; read by the VMM's stats output.
#define KVMMIO_CONSOLE_COUNTERS(C)                                                  \
  C(tx_bytes, "guest output written to the output fd (stdout)")                    \
  C(rx_bytes, "host input placed in guest buffers")                                \
  C(tx_stalls, "times output waited for room in the output fd")                    \
  C(rx_waits, "times input waited for the guest to post receive buffers")          \
  C(output_dropped, "output bytes dropped because the output fd is gone")          \
  C(budget_yields, "times TX or RX stopped at its work budget per dispatch and "     \
                   "left the rest to a later turn of the event loop")               \
  C(activations, "DRIVER_OK count (driver resets + 1)")
struct KVMMIO_EXPORT ConsoleCounters {
  KVMMIO_CONSOLE_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_CONSOLE_COUNTERS)
};

class KVMMIO_EXPORT VirtioConsole final : public virtio::VirtioDevice, public ConsoleInputSink {
 public:
  static constexpr uint32_t kDeviceId = 3;
  static constexpr uint32_t kReceiveQueue = 0;
  static constexpr uint32_t kTransmitQueue = 1;
  static constexpr uint16_t kQueueSize = 128;
  // struct virtio_console_config (5.3.4): cols, rows, max_nr_ports, emerg_wr.
  static constexpr uint32_t kConfigSize = 12;
  // Work budgets: what one dispatch (a notify, room in the output fd, a
  // resumption, one receive() call) does at most before it yields to the
  // rest of the event loop (DeferredWork; docs/security.md).
  static constexpr uint64_t kTxBytesPerDispatch = 64 * 1024;
  static constexpr unsigned kTxChainsPerDispatch = 64;
  static constexpr unsigned kRxChainsPerDispatch = 64;

  // `output_fd` (not owned) receives the guest's output; `loop` resumes
  // output that had to wait for room.
  VirtioConsole(const GuestMemory& memory, EventLoop& loop, int output_fd);
  ~VirtioConsole() override;
  VirtioConsole(const VirtioConsole&) = delete;
  VirtioConsole& operator=(const VirtioConsole&) = delete;

  const ConsoleCounters& counters() const { return counters_; }
  // Guest errors the device itself found (the transport counts its own).
  uint64_t guest_errors() const override { return errors_.count(); }
  void visit_counters(const virtio::CounterVisitor& visit) const override { counters_.each(visit); }

  // ConsoleInputSink. Takes the device lock: never call it from inside a
  // transport callback.
  size_t receive(std::span<const uint8_t> bytes) override;
  void set_rx_space_callback(std::function<void()> callback) override;

  // VirtioDevice
  uint32_t device_id() const override { return kDeviceId; }
  uint64_t device_features() const override { return 0; }
  uint32_t num_queues() const override { return 2; }
  uint16_t queue_max_size(uint32_t) const override { return kQueueSize; }
  uint32_t config_size() const override { return kConfigSize; }
  void read_config(uint32_t offset, std::span<uint8_t> data) override;
  bool activate(const virtio::DeviceActivation& activation) override;
  void queue_notify(uint32_t queue) override;
  void reset() override;

 private:
  // Everything below is guarded by the device lock.
  void transmit();
  virtio::ChainStep send_chain(const virtio::DescriptorChain& chain, uint64_t budget);
  size_t write_output(std::span<const uint8_t> bytes);
  // Arms the output watch; false if the fd cannot be watched.
  bool wait_for_output_room();
  void on_output_room();
  void fail(const char* why);
  void space_available();

  const GuestMemory& memory_;
  EventLoop& loop_;
  int output_fd_;
  ConsoleCounters counters_;
  GuestErrorLog errors_{"virtio-console"};
  bool output_broken_ = false;  // EPIPE etc.: output is dropped from then on

  // Guards the space callback, and the hand-over of the device lock:
  // input can arrive before the first activation, which brings the lock.
  std::mutex input_mutex_;
  std::function<void()> space_callback_;
  // From the first activation on: the lock outlives resets. Written holding
  // both locks (activate()), so either is enough to read it.
  DeviceLock* lock_ = nullptr;
  bool refused_before_activation_ = false;
  bool input_waiting_ = false;  // receive() refused input since the last RX notify

  // Between activate() and reset():
  virtio::SplitQueue* rx_ = nullptr;
  virtio::SplitQueue* tx_ = nullptr;
  virtio::VirtioInterrupt* interrupt_ = nullptr;
  bool failed_ = false;  // DEVICE_NEEDS_RESET: touch no ring until reset
  // Budget stops count a yield; TX's also schedule tx_resume_, RX's caller
  // comes back by itself.
  virtio::QueueDrain rx_drain_;
  virtio::QueueDrain tx_drain_;
  bool tx_pending_ = false;           // the drain's chain is partly written (paused or unfinished)
  uint64_t tx_offset_ = 0;            // bytes of it already written
  std::unique_ptr<DeferredWork> tx_resume_;  // TX past its budget
  DeviceLock::Watch output_watch_;    // last: dropped first
};

}  // namespace kvmmio::console
