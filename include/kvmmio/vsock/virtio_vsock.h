// SPDX-License-Identifier: BSD-2-Clause
// VirtioVsock: the virtio-vsock device (virtio 1.2 section 5.10, device ID
// 19) with its data queues moved by the kernel's vhost-vsock: host and
// guest talk over AF_VSOCK sockets and the VMM is not in the data path.
//
// Queues (5.10.2): rx (0) and tx (1) are handed to /dev/vhost-vsock at
// DRIVER_OK with the queues' ioeventfds as kick fds and the device's irqfd
// (or the relay's eventfd, irq=relay) as call fd, as vhost-net's are. The
// event queue (2) stays with the VMM: the only event the device could send
// is VIRTIO_VSOCK_EVENT_TRANSPORT_RESET, which tells the guest that its
// connections are gone after a migration, and kvmmio does not migrate, so
// it never has a reason to send one. The buffers the guest posts there are
// held (never popped) until its next reset; their notifies are counted.
//
// Configuration space (5.10.4): le64 guest_cid, read-only for the driver:
// a write is a guest error (counted, logged rate-limited), and changes
// nothing.
//
// Features: the device offers VIRTIO_VSOCK_F_SEQPACKET when vhost-vsock
// does (Linux 5.14 and later); the transport adds VERSION_1,
// INDIRECT_DESC and EVENT_IDX, which vhost implements.
//
// Life of the vhost instance (VhostVsock): opened, owned and bound to the
// CID at construction and kept until the device goes, so the CID stays
// this VM's. DRIVER_OK sets features, the memory table and both vrings
// and starts it (SET_RUNNING 1); the driver's reset stops it (SET_RUNNING
// 0, GET_VRING_BASE per vring, kick, call and error fds unbound), and the
// next DRIVER_OK starts it afresh. A queue the driver stops while
// DRIVER_OK (QueueReady = 0) stops the instance, which starts again when
// both queues are ready.
//
// Threads: activate(), reset(), reset_queue() and enable_queue() hold the
// device lock (vCPU threads); the vrings' error eventfds are watched on the
// event loop, without that lock, as vhost-net's are (hw/net/vhost_backend.cc):
// what they touch is atomic.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/virtio_device.h"
#include "kvmmio/vsock/vhost_vsock.h"
#include "kvmmio/vsock/virtio_vsock_spec.h"
#include "kvmmio/vsock/vsock_options.h"

namespace kvmmio::vsock {

// The device's settings, for --stats.
#define KVMMIO_VSOCK_SETTINGS(C) C(guest_cid, "the guest's context ID (--vsock cid=N): its AF_VSOCK address")
struct KVMMIO_EXPORT VsockSettings {
  KVMMIO_VSOCK_SETTINGS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_VSOCK_SETTINGS)
};

// What the device did.
#define KVMMIO_VSOCK_COUNTERS(C)                                                                      \
  C(vhost_errors, "vring errors vhost-vsock signalled (its ERR eventfd)")                           \
  C(event_notifies, "notifies of the event queue, whose buffers are held (kvmmio sends no events); "  \
                    "with the one the transport makes at each DRIVER_OK")                           \
  C(config_writes, "driver writes to the read-only configuration space (guest errors)")             \
  C(activations, "DRIVER_OK count (driver resets + 1)")
struct KVMMIO_EXPORT VsockCounters {
  KVMMIO_VSOCK_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_VSOCK_COUNTERS)
};

class KVMMIO_EXPORT VirtioVsock final : public virtio::VirtioDevice {
 public:
  static constexpr uint16_t kQueueSize = 128;
  static constexpr uint16_t kEventQueueSize = 16;

  // Opens /dev/vhost-vsock and binds options.cid (VhostVsock: UserError
  // naming the module, CidInUse).
  VirtioVsock(const VsockOptions& options, const GuestMemory& memory, EventLoop& loop);
  // Without a backend, where there is no vhost-vsock (the fuzzer, tests on
  // the development host): the guest-facing side alone, offering what a
  // vhost-vsock offering `vhost_features` would; activation fails as when
  // vhost cannot start (DEVICE_NEEDS_RESET). Not for a VM.
  VirtioVsock(const VsockOptions& options, const GuestMemory& memory, EventLoop& loop, uint64_t vhost_features);
  ~VirtioVsock() override;
  VirtioVsock(const VirtioVsock&) = delete;
  VirtioVsock& operator=(const VirtioVsock&) = delete;

  // The device-type features offered over a vhost-vsock that offers
  // `vhost_features` (VHOST_GET_FEATURES).
  static uint64_t offered_features(uint64_t vhost_features);
  // The configuration bytes [offset, offset + data.size()) of a device
  // with `cid` (offset + size within spec::kConfigSize).
  static void read_config_of(uint32_t cid, uint32_t offset, std::span<uint8_t> data);

  uint32_t cid() const { return cid_; }
  const VsockCounters& counters() const { return counters_; }
  // Whether the vhost instance runs (both vrings handed over).
  bool running() const { return running_; }

  uint64_t guest_errors() const override { return errors_.count(); }
  // VsockSettings, then VsockCounters.
  void visit_counters(const virtio::CounterVisitor& visit) const override;

  // VirtioDevice
  uint32_t device_id() const override { return spec::kDeviceId; }
  uint64_t device_features() const override { return offered_features(vhost_features_); }
  uint32_t num_queues() const override { return spec::kNumQueues; }
  uint16_t queue_max_size(uint32_t queue) const override {
    return queue == spec::kEventQueue ? kEventQueueSize : kQueueSize;
  }
  uint32_t config_size() const override { return spec::kConfigSize; }
  void read_config(uint32_t offset, std::span<uint8_t> data) override { read_config_of(cid(), offset, data); }
  void write_config(uint32_t offset, std::span<const uint8_t> data) override;
  bool backend_owns_queue(uint32_t queue) const override { return queue != spec::kEventQueue; }
  bool activate(const virtio::DeviceActivation& activation) override;
  void queue_notify(uint32_t queue) override;
  void reset() override;
  void reset_queue(uint32_t queue) override;
  void enable_queue(const virtio::ActiveQueue& queue) override;

 private:
  // Hands one data queue's ring, kick, call and error fds to vhost.
  void start_vring(const virtio::ActiveQueue& queue);
  // SET_RUNNING 1 once both vrings are set up.
  void start_if_ready();
  // Stops the instance and lets go of `vring`'s fds; the other vring's
  // stay set up.
  void stop_vring(unsigned vring);
  void stop_running();
  // On the event loop: vhost cannot use a ring (see the .cc).
  void ring_error(unsigned vring, uint64_t signals);
  // A host-side failure while DRIVER_OK: logged (rate-limited), the
  // device needs a reset.
  void fail(const char* what, const std::exception& e);

  const GuestMemory& memory_;
  EventLoop& loop_;
  uint32_t cid_;
  std::optional<VhostVsock> vhost_;  // empty only without a backend
  uint64_t vhost_features_;
  VsockCounters counters_;
  std::string log_name_;  // "vsock cid N"
  GuestErrorLog errors_{log_name_.c_str()};
  LogLimit repeats_;  // host-side messages a guest's resets can make repeat

  // Between activate() and reset():
  virtio::VirtioInterrupt* interrupt_ = nullptr;
  uint64_t features_ = 0;
  std::array<bool, 2> vring_live_{false, false};  // set up in vhost (rx, tx)
  bool running_ = false;
  std::atomic<bool> reported_{false};  // a ring error, once per activation
  std::array<EventFd, 2> err_;          // vhost's ERR eventfds, fresh per activation
  std::array<EventLoop::Registration, 2> err_watches_;  // last: dropped first
};

}  // namespace kvmmio::vsock
