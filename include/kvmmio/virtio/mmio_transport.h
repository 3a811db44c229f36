// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport: one virtio-mmio device as the guest sees it (virtio 1.2
// section 4.2): the register file, modern (Version 2, 4.2.2) or legacy
// (Version 1, 4.2.4), in front of a VirtioDevice.
//
// It owns the guest-facing side: register widths and directions, the
// status state machine (device_status.h), feature negotiation, queue set-up
// and validation, ConfigGeneration, and the two hot paths:
//  - notifications: one ioeventfd per queue at base + 0x50 (4 bytes,
//    datamatch = queue index), assigned once when the transport is built
//    and kept until it goes; polled on the EventLoop for VMM-owned queues
//    and handed to the backend for backend-owned ones while they are live.
//    A notify of a queue that is not live goes nowhere. QueueNotify writes
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
// Inside, three owners of one job each, depending one way
// (hw/virtio/mmio_parts.h): the device state (status, features, the
// configuration window, InterruptStatus), the queue set and the mirror,
// with a register file of no state that hands each access to its owner.
//
// Guest mistakes never throw: they are counted, logged rate-limited, and
// ignored (or, for broken rings, answered with DEVICE_NEEDS_RESET).
// Register accesses, polled notifies and the device's own threads are
// serialised by one DeviceLock per device.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/base/log.h"
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
  C(notifies_polled, "VMM wake-ups on a queue's ioeventfd it polls (those for a queue that is not "   \
                     "live go no further)")                                                           \
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
  // The time the set-up storm bound (kActivationsPerSecond) is measured
  // in; empty = the steady clock.
  // Tests drive their own to check the rates at exact times.
  TokenBucket::TimeSource clock = {};
};

class KVMMIO_EXPORT MmioTransport final : public MmioDevice {
 public:
  // Set-up storms (docs/security.md): each activation (DRIVER_OK: vhost
  // instances opened, tap settings, the device's watches made) costs the
  // host work. Beyond this rate the driver's DRIVER_OK is refused as a
  // guest error with DEVICE_NEEDS_RESET; a reset after the storm works
  // again. Queues going live need no bound: their notify fds are assigned
  // once, when the transport is built.
  static constexpr double kActivationBurst = 64, kActivationsPerSecond = 16;

  // Throws std::invalid_argument for a device the transport cannot present
  // (too many queues, bad queue sizes, config larger than 256 bytes) or
  // irq=relay without an EventLoop. `device` must outlive the transport.
  // With notify=ioeventfd, assigns every queue's notify fd (each live
  // until the transport goes; one KVM refuses leaves its queue trapping).
  MmioTransport(VirtioDevice& device, TransportEnv env, TransportOptions options = {});
  ~MmioTransport() override;
  MmioTransport(const MmioTransport&) = delete;
  MmioTransport& operator=(const MmioTransport&) = delete;

  void mmio_read(uint64_t offset, std::span<uint8_t> data) override;
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override;

  // A reset the host asks for (the machine rebooting in place): what the
  // driver's write of 0 to Status does (the device reset, its backend
  // stopped, every queue forgotten, InterruptStatus and the features
  // cleared), then the register mirror rewritten. Takes the device lock,
  // so it may be called from any thread that does not hold it.
  void reset();

  uint64_t base() const;
  static constexpr uint64_t window_size() { return kMmioWindowSize; }
  uint64_t notify_address() const;
  const TransportOptions& options() const;
  // kTrap when asked for, or when there is no NotifyFdSource or EventLoop.
  NotifyMode notify_mode() const;
  const TransportCounters& counters() const;
  // regs=mirror: the page to map read-only at base() (KvmMmioSlot does);
  // nullptr with regs=trap. It reads, word by word and byte by byte, as mmio_read would.
  const RegisterMirror* mirror() const;

  // For device-initiated configuration changes before activation hands
  // the interrupt over (tests).
  VirtioInterrupt& interrupt();

  // Snapshots for tests and stats.
  uint32_t device_status() const;
  uint64_t driver_features() const;
  // The interrupt fd: what a backend writes to interrupt the guest.
  int interrupt_fd() const;

 private:
  // The parts, each of one job and owning its state (hw/virtio/mmio_parts.h).
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace kvmmio::virtio
