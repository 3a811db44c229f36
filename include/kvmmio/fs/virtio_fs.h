// SPDX-License-Identifier: BSD-2-Clause
// VirtioFs: the virtio-fs device (virtio 1.2 section 5.11, device ID 26), a
// host directory shared with the guest, its FUSE requests served by a
// vhost-user backend in another process (virtiofsd) that reads the queues
// and guest RAM itself: the VMM is not in the data path.
//
// Queues (5.11.2): the high-priority queue and one request queue, both the
// backend's. At DRIVER_OK each ready queue is handed over through the
// vhost-user front end (vhost_user.h): the memory table (guest RAM's
// memfd), the ring's size and addresses, the queue's ioeventfd as kick and
// the device's irqfd (or the relay's eventfd, irq=relay) as call, then
// SET_VRING_ENABLE. The driver's reset takes each back with
// GET_VRING_BASE, which stops it in the backend.
//
// Configuration space (5.11.4): the tag and num_request_queues (1),
// read-only for the driver: a write is a guest error (counted, logged
// rate-limited) and changes nothing.
//
// Features: no device-type bits (VIRTIO_FS_F_NOTIFICATION is not offered).
// The transport's ring bits must be the backend's too: a backend without
// VERSION_1 or INDIRECT_DESC is refused when the device is made, and
// EVENT_IDX is withheld from the transport where the backend lacks it
// (withheld_transport_features()).
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
// Threads: activate(), reset(), reset_queue() and enable_queue() hold the
// device lock (vCPU threads; the main thread at teardown), and so does the
// socket's watch on the event loop (DeviceLock::Watch): the watch sees a
// reply a vCPU is awaiting only after that vCPU has read it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/fs/fs_options.h"
#include "kvmmio/fs/virtio_fs_spec.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::fs {

// The device's settings, for --stats.
#define KVMMIO_FS_SETTINGS(C)                                                          \
  C(request_queues, "request queues the device offers (num_request_queues)")          \
  C(backend_event_idx, "1 when the backend implements VIRTIO_RING_F_EVENT_IDX, which " \
                       "is then offered to the guest")
struct KVMMIO_EXPORT FsSettings {
  KVMMIO_FS_SETTINGS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_FS_SETTINGS)
};

// What the device did.
#define KVMMIO_FS_COUNTERS(C)                                                                        \
  C(activations, "DRIVER_OK count whose queues the backend took")                                   \
  C(backend_failures, "set-ups or stops the backend refused, answered wrong or not in time (the "    \
                      "device then needs a reset)")                                                 \
  C(backend_hangups, "times the backend closed its socket while the device ran")                    \
  C(config_writes, "driver writes to the read-only configuration space (guest errors)")
struct KVMMIO_EXPORT FsCounters {
  KVMMIO_FS_COUNTERS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_FS_COUNTERS)
};

class KVMMIO_EXPORT VirtioFs final : public virtio::VirtioDevice {
 public:
  static constexpr uint16_t kQueueSize = 128;

  // Starts `backend` (SET_OWNER, features): vhost::BackendError when it
  // does not answer right, std::runtime_error naming the backend when it
  // lacks a feature the transport needs (VERSION_1, INDIRECT_DESC).
  VirtioFs(const FsOptions& options, vhost::VhostUserFrontend backend, const GuestMemory& memory,
           EventLoop& loop);
  ~VirtioFs() override;
  VirtioFs(const VirtioFs&) = delete;
  VirtioFs& operator=(const VirtioFs&) = delete;

  // The configuration bytes [offset, offset + data.size()) of a device
  // with `tag` (offset + size within spec::kConfigSize).
  static void read_config_of(const std::string& tag, uint32_t offset, std::span<uint8_t> data);

  const std::string& tag() const { return tag_; }
  // Whether the transport may offer VIRTIO_RING_F_EVENT_IDX.
  bool backend_event_idx() const;
  uint64_t withheld_transport_features() const override;
  const FsCounters& counters() const { return counters_; }

  uint64_t guest_errors() const override { return errors_.count(); }
  // FsSettings, then FsCounters.
  void visit_counters(const virtio::CounterVisitor& visit) const override;

  // VirtioDevice
  uint32_t device_id() const override { return spec::kDeviceId; }
  uint64_t device_features() const override { return 0; }
  uint32_t num_queues() const override { return spec::kNumQueues; }
  uint16_t queue_max_size(uint32_t) const override { return kQueueSize; }
  uint32_t config_size() const override { return spec::kConfigSize; }
  void read_config(uint32_t offset, std::span<uint8_t> data) override { read_config_of(tag_, offset, data); }
  void write_config(uint32_t offset, std::span<const uint8_t> data) override;
  bool backend_owns_queue(uint32_t) const override { return true; }
  bool activate(const virtio::DeviceActivation& activation) override;
  void reset() override;
  void reset_queue(uint32_t queue) override;
  void enable_queue(const virtio::ActiveQueue& queue) override;

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

  std::string tag_;
  vhost::VhostUserFrontend backend_;
  const GuestMemory& memory_;
  EventLoop& loop_;
  FsCounters counters_;
  std::string log_name_;  // "fs TAG"
  GuestErrorLog errors_{log_name_.c_str()};
  LogLimit repeats_;  // backend failures a guest's resets can make repeat

  // Between activate() and reset():
  virtio::VirtioInterrupt* interrupt_ = nullptr;
  std::array<bool, spec::kNumQueues> vring_live_{};
  DeviceLock::Watch socket_watch_;  // last: dropped first
};

}  // namespace kvmmio::fs
