// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport: one virtio-mmio device as the guest sees it (virtio 1.2
// section 4.2): the register file, modern (Version 2, 4.2.2) or legacy
// (Version 1, 4.2.4), in front of a VirtioDevice.
//
// It owns the guest-facing side: register widths and directions, the
// status state machine (device_status.h), feature negotiation, queue set-up
// and validation, ConfigGeneration, and the two hot paths:
//  - notifications: one ioeventfd per live queue at base + 0x50 (4 bytes,
//    datamatch = queue index), polled on the EventLoop for VMM-owned queues
//    and handed to the backend for backend-owned ones; QueueNotify writes
//    that still arrive as MMIO exits are handled too (notify=trap, or no
//    ioeventfd);
//  - interrupts: one irqfd per device. In irq=irqfd mode everyone, VMM and
//    backend, writes it directly; in irq=relay mode backends write a relay
//    eventfd that the EventLoop forwards. docs/virtio-mmio.md explains why
//    InterruptStatus reports the used-buffer bit whenever a backend bypasses
//    the VMM;
//  - register reads (regs=mirror, the default): a RegisterMirror page that
//    always reads as the registers would, for whoever builds the transport
//    to map read-only over the window (mmio_mirror.cc), so a guest's reads
//    cost no exit. KvmMmioSlot (kvm_mmio_slot.h) maps it and assigns the
//    InterruptACK ioeventfd the mirror expects; a transport used without
//    one (no KVM at hand) is given regs=trap.
//
// Guest mistakes never throw: they are counted, logged rate-limited, and
// ignored (or, for broken rings, answered with DEVICE_NEEDS_RESET).
// Register accesses, polled notifies and the device's own threads are
// serialised by one DeviceLock per device.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/base/token_bucket.h"
#include "kvmmio/mmio_bus.h"
#include "kvmmio/virtio/notify_fd_source.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/register_mirror.h"
#include "kvmmio/virtio/split_queue.h"
#include "kvmmio/virtio/transport_options.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::virtio {

// What the VMM did for this device; read by the VMM's stats output.
#define KVMMIO_TRANSPORT_COUNTERS(C)                                                                  \
  C(guest_errors, "guest mistakes the transport found: bad register accesses, invalid status "       \
                  "writes, malformed rings")                                                          \
  C(notifies_trapped, "QueueNotify writes that arrived as MMIO exits")                                \
  C(notifies_polled, "VMM wake-ups on a queue's ioeventfd it polls")                                  \
  C(interrupts_injected, "interrupts the VMM raised itself by writing the irqfd (used buffers or "    \
                         "configuration)")                                                            \
  C(interrupts_relayed, "irq=relay: backend interrupts the VMM forwarded")                            \
  C(config_interrupts, "configuration-change interrupts (also in interrupts_injected)")               \
  C(needs_reset, "times the device entered DEVICE_NEEDS_RESET")                                      \
  C(register_reads, "register and configuration reads that arrived as MMIO exits (none with "     \
                    "regs=mirror once the VMM maps the mirror)")                                           \
  C(mirror_updates, "regs=mirror: times the register mirror page changed (after a trapped write, a "  \
                    "configuration change or DEVICE_NEEDS_RESET)")
struct KVMMIO_EXPORT TransportCounters {
  KVMMIO_TRANSPORT_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_TRANSPORT_COUNTERS)
};

// What the transport is wired to.
struct KVMMIO_EXPORT TransportEnv {
  const GuestMemory& memory;
  EventFd& irq;           // raises the device's interrupt: the irqfd's eventfd (edge SPI)
  uint64_t base = 0;      // guest physical address of the register window
  NotifyFdSource* notify_fds = nullptr;  // nullptr: no ioeventfds, QueueNotify traps
  EventLoop* loop = nullptr;    // polls VMM-owned notify fds and the relay; outlives the transport
  std::string name = "virtio-mmio";  // names the device in guest-error messages
  // regs=mirror: how the mirror's updates are cleaned to the point of
  // coherency; empty = clean_dcache_to_poc. Tests watch the cleans here.
  RegisterMirror::CacheClean mirror_clean = {};
  // The time the set-up storm bounds (kActivationsPerSecond,
  // kQueueStartsPerSecond) are measured in; empty = the steady clock.
  // Tests drive their own to check the rates at exact times.
  TokenBucket::TimeSource clock = {};
};

class KVMMIO_EXPORT MmioTransport final : public MmioDevice, private VirtioInterrupt, private QueueFaultSink {
 public:
  // Set-up storms (docs/security.md): each activation (DRIVER_OK: vhost
  // instances opened, watches made) and each queue going live (an ioeventfd
  // assigned, a watch made) costs the host work. Beyond these rates the
  // driver's write is refused as a guest error with DEVICE_NEEDS_RESET; a
  // reset after the storm works again.
  static constexpr double kActivationBurst = 64, kActivationsPerSecond = 16;
  static constexpr double kQueueStartBurst = 1024, kQueueStartsPerSecond = 256;

  // Throws std::invalid_argument for a device the transport cannot present
  // (too many queues, bad queue sizes, config larger than 256 bytes) or
  // irq=relay without an EventLoop. `device` must outlive the transport.
  MmioTransport(VirtioDevice& device, TransportEnv env, TransportOptions options = {});
  ~MmioTransport() override;
  MmioTransport(const MmioTransport&) = delete;
  MmioTransport& operator=(const MmioTransport&) = delete;

  void mmio_read(uint64_t offset, std::span<uint8_t> data) override;
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override;

  uint64_t base() const { return env_.base; }
  static constexpr uint64_t window_size() { return kMmioWindowSize; }
  uint64_t notify_address() const { return env_.base + reg::kQueueNotify; }
  const TransportOptions& options() const { return options_; }
  // kTrap when asked for, or when there is no NotifyFdSource or EventLoop.
  NotifyMode notify_mode() const { return notify_mode_; }
  const TransportCounters& counters() const { return counters_; }
  // regs=mirror: the page to map read-only at base() (KvmMmioSlot does);
  // nullptr with regs=trap. It reads, word by word and byte by byte, as mmio_read would.
  const RegisterMirror* mirror() const { return mirror_.get(); }

  // For device-initiated configuration changes before activation hands
  // the interrupt over (tests).
  VirtioInterrupt& interrupt() { return *this; }

  // Snapshots for tests and stats.
  uint32_t device_status() const { return status_.load(); }
  uint64_t driver_features() const;
  // The interrupt fd: what a backend writes to interrupt the guest.
  int interrupt_fd() const;

 private:
  struct QueueState;

  // mmio_transport.cc: dispatch, common registers, config window
  const RegisterInfo* register_for(uint64_t offset, size_t size, bool write);
  uint32_t read_register(const RegisterInfo& info);
  void write_register(const RegisterInfo& info, uint32_t value);
  void write_locked(uint64_t offset, std::span<const uint8_t> data);
  void read_config(uint64_t offset, std::span<uint8_t> data);
  void write_config(uint64_t offset, std::span<const uint8_t> data);
  void guest_error(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  QueueState* selected_queue();
  uint64_t offered_features() const;
  // mmio_modern.cc / mmio_legacy.cc: registers of one layout only
  uint32_t read_modern(const RegisterInfo& info);
  void write_modern(const RegisterInfo& info, uint32_t value);
  uint32_t read_legacy(const RegisterInfo& info);
  void write_legacy(const RegisterInfo& info, uint32_t value);
  // mmio_lifecycle.cc: status, negotiation, activation, reset
  void write_status(uint32_t value);
  bool features_acceptable(uint64_t features);
  void activate();
  void reset_device();
  // mmio_queues.cc: queue liveness, notify fds, trapped and polled notifies
  void set_queue_ready(uint32_t index, const QueueLayout& layout);
  void stop_queue(uint32_t index);
  void start_ring(uint32_t index);
  ActiveQueue active_queue(uint32_t index);
  void update_bypass();
  void attach_notify_fd(uint32_t index);
  void detach_notify_fd(uint32_t index);
  void notify_trapped(uint32_t value);
  void notify_polled(uint32_t index);
  // mmio_mirror.cc: regs=mirror
  void refresh_mirror();          // everything; the device lock is held
  void publish_config_mirror();   // configuration + ConfigGeneration; mirror_mutex_ held
  void publish_status_mirror();   // Status and InterruptStatus, from any thread
  // mmio_interrupts.cc
  void start_relay();
  void relay_interrupt();
  void raise(uint32_t bits);
  uint32_t interrupt_status() const;
  void acknowledge(uint32_t bits);
  void signal_used() override;
  void signal_config_change() override;
  void needs_reset(const char* why) override;
  void queue_fault(uint32_t queue_index, QueueError error) override;

  VirtioDevice& device_;
  TransportEnv env_;
  TransportOptions options_;
  NotifyMode notify_mode_;
  std::string log_name_;
  GuestErrorLog errors_;
  LogLimit repeats_;  // host-side messages a guest can make repeat (needs reset, notify fds)
  TokenBucket activations_{kActivationsPerSecond, kActivationBurst, env_.clock};
  TokenBucket queue_starts_{kQueueStartsPerSecond, kQueueStartBurst, env_.clock};
  TransportCounters counters_;

  // Registers, queues, device callbacks; handed to the device at
  // activation for its own threads.
  mutable DeviceLock lock_;
  std::atomic<uint32_t> status_{0};
  std::atomic<uint32_t> interrupt_status_{0};
  std::atomic<uint32_t> config_generation_{0};
  // A backend writes the irqfd directly: InterruptStatus cannot know.
  std::atomic<bool> bypass_{false};
  bool active_ = false;  // activate() succeeded, reset() not yet called
  uint32_t device_features_sel_ = 0;
  uint32_t driver_features_sel_ = 0;
  uint64_t driver_features_ = 0;
  uint32_t queue_sel_ = 0;
  uint32_t guest_page_size_;  // legacy; kept across resets, Linux writes it once at probe
  std::vector<QueueState> queues_;
  // regs=mirror. mirror_mutex_ orders every mirror update, so a value
  // computed under it is never overwritten by an older one.
  std::unique_ptr<RegisterMirror> mirror_;
  std::mutex mirror_mutex_;
  bool mirror_filled_ = false;  // the first fill publishes no ConfigGeneration steps
  std::unique_ptr<EventFd> relay_;  // irq=relay: the backends' interrupt fd
  EventLoop::Registration relay_watch_;  // its callback takes no lock
};

}  // namespace kvmmio::virtio
