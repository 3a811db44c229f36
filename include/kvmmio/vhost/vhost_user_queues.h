// SPDX-License-Identifier: BSD-2-Clause
// VhostUserQueues: every queue of one virtio device handed to a vhost-user
// backend in another process, the part each vhost-user device type shares
// (virtio-fs, vhost-user-net); the type adds its configuration space and
// its own feature bits.
//
// Made with a started connection's features checked against what the
// virtio-mmio transport always offers (VERSION_1, INDIRECT_DESC): a backend
// without them is refused then, naming it. EVENT_IDX, which the transport
// offers by default, is withheld where the backend lacks it
// (withheld_transport_features(), for the device's VirtioDevice override).
//
// At DRIVER_OK, activate(): SET_FEATURES (the driver's accepted features
// the backend offers: bits the VMM serves itself, such as a net device's
// MAC, stay here), SET_MEM_TABLE (guest RAM's memfds), and per ready queue
// its size and addresses, the queue's ioeventfd as kick and the device's
// irqfd (or the relay's eventfd) as call, then SET_VRING_ENABLE. A reset
// takes each queue back with GET_VRING_BASE, which stops it in the backend.
//
// The backend is not trusted (docs/vhost-user.md): every reply is awaited
// a bounded time, and a refusal, a stall or a closed socket at DRIVER_OK
// fails the activation (the transport sets DEVICE_NEEDS_RESET), logged
// rate-limited; a socket the backend closes while the device runs is
// noticed on the event loop and puts the device in DEVICE_NEEDS_RESET at
// once. The connection is not made again: a broken one stays broken, and
// every later DRIVER_OK fails with a message saying to restart the VM with
// the backend running.
//
// Threads: activate(), reset(), reset_queue() and enable_queue() are
// called holding the device lock (vCPU threads; the main thread at
// teardown), and the socket's watch on the event loop holds it too
// (DeviceLock::Watch): the watch sees a reply a vCPU is awaiting only
// after that vCPU has read it.
#pragma once

#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::vhost {

// What the hand-over did, for --stats (the same names on every
// vhost-user device).
#define KVMMIO_VHOST_USER_COUNTERS(C)                                                                \
  C(activations, "DRIVER_OK count whose queues the backend took")                                   \
  C(backend_failures, "set-ups or stops the backend refused, answered wrong or not in time (the "    \
                      "device then needs a reset)")                                                 \
  C(backend_hangups, "times the backend closed its socket while the device ran")
struct KVMMIO_EXPORT VhostUserCounters {
  KVMMIO_VHOST_USER_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_VHOST_USER_COUNTERS)
};

class KVMMIO_EXPORT VhostUserQueues {
 public:
  // Starts `backend` (SET_OWNER, features): BackendError when it does not
  // answer right; std::runtime_error naming the backend and ending with
  // `fix` (e.g. "use a virtio-fs backend that offers it") when it lacks a
  // feature the transport needs. `log_name` names the device in logs.
  VhostUserQueues(VhostUserFrontend backend, const GuestMemory& memory, EventLoop& loop, std::string log_name,
                  uint32_t num_queues, const std::string& fix);
  VhostUserQueues(const VhostUserQueues&) = delete;
  VhostUserQueues& operator=(const VhostUserQueues&) = delete;

  // The backend's virtio feature bits (GET_FEATURES).
  uint64_t backend_features() const { return backend_.features(); }
  bool backend_event_idx() const;
  // The transport bits the backend cannot honour (EVENT_IDX where it
  // lacks it).
  uint64_t withheld_transport_features() const;

  bool activate(const virtio::DeviceActivation& activation);
  void reset();
  void reset_queue(uint32_t queue);
  void enable_queue(const virtio::ActiveQueue& queue);

  const VhostUserCounters& counters() const { return counters_; }
  const std::string& backend_name() const { return backend_.name(); }

 private:
  // Hands one queue to the backend and enables it.
  void start_vring(const virtio::ActiveQueue& queue);
  // Takes it back (GET_VRING_BASE); a failure is counted and logged.
  void stop_vring(uint32_t vring);
  // The event loop saw the socket readable outside a request: the backend
  // closed it, or sent what nobody asked for. Either way it is gone.
  void socket_event();
  // A host-side failure: counted, logged rate-limited.
  void backend_failed(const char* what, const std::exception& e);

  VhostUserFrontend backend_;
  const GuestMemory& memory_;
  EventLoop& loop_;
  std::string log_name_;
  VhostUserCounters counters_;
  LogLimit repeats_;  // backend failures a guest's resets can make repeat

  // Between activate() and reset():
  virtio::VirtioInterrupt* interrupt_ = nullptr;
  std::vector<bool> vring_live_;
  DeviceLock::Watch socket_watch_;  // last: dropped first
};

// What a VhostUserDevice counts beside the hand-over: its configuration
// space is the device's alone (virtio-fs 5.11.4; virtio-net 5.1.4 with
// VIRTIO_NET_F_MAC), so a driver's write to it is a guest error.
#define KVMMIO_VHOST_USER_DEVICE_COUNTERS(C) \
  C(config_writes, "driver writes to the read-only configuration space (guest errors)")
struct KVMMIO_EXPORT VhostUserDeviceCounters {
  KVMMIO_VHOST_USER_DEVICE_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_VHOST_USER_DEVICE_COUNTERS)
};

// A virtio device whose every queue is a vhost-user backend's: the
// VirtioDevice calls the hand-over answers and the read-only configuration
// space's writes refused, for a device type (VirtioFs, VhostUserNet) to
// add its identity, features and configuration bytes to.
class KVMMIO_EXPORT VhostUserDevice : public virtio::VirtioDevice {
 public:
  uint64_t withheld_transport_features() const override { return queues_.withheld_transport_features(); }
  bool backend_owns_queue(uint32_t) const override { return true; }
  bool activate(const virtio::DeviceActivation& activation) override { return queues_.activate(activation); }
  void reset() override { queues_.reset(); }
  void reset_queue(uint32_t queue) override { queues_.reset_queue(queue); }
  void enable_queue(const virtio::ActiveQueue& queue) override { queues_.enable_queue(queue); }

  // Counted, logged (rate-limited) and ignored.
  void write_config(uint32_t offset, std::span<const uint8_t> data) final;
  uint64_t guest_errors() const final { return errors_.count(); }

  bool backend_event_idx() const { return queues_.backend_event_idx(); }
  const VhostUserCounters& handover_counters() const { return queues_.counters(); }
  const VhostUserDeviceCounters& device_counters() const { return device_counters_; }

 protected:
  // VhostUserQueues's constructor's arguments, and what it throws.
  // `log_name` names the device in logs, its guest errors too.
  VhostUserDevice(VhostUserFrontend backend, const GuestMemory& memory, EventLoop& loop, std::string log_name,
                  uint32_t num_queues, const std::string& fix)
      : queues_(std::move(backend), memory, loop, log_name, num_queues, fix), log_name_(std::move(log_name)) {}

  // The counters in --stats' order, after the device's settings: the
  // hand-over's, then VhostUserDeviceCounters.
  void visit_device_counters(const virtio::CounterVisitor& visit) const;

  VhostUserQueues queues_;

 private:
  std::string log_name_;
  VhostUserDeviceCounters device_counters_;
  GuestErrorLog errors_{log_name_.c_str()};
};

}  // namespace kvmmio::vhost
