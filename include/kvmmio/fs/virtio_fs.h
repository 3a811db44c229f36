// SPDX-License-Identifier: BSD-2-Clause
// VirtioFs: the virtio-fs device (virtio 1.2 section 5.11, device ID 26), a
// host directory shared with the guest, its FUSE requests served by a
// vhost-user backend in another process (virtiofsd) that reads the queues
// and guest RAM itself: the VMM is not in the data path.
//
// Queues (5.11.2): the high-priority queue and one request queue, both the
// backend's, handed over at DRIVER_OK and taken back at a reset by
// VhostUserQueues (vhost_user_queues.h says how, what is checked, and
// what a backend that fails or goes away gets).
//
// Configuration space (5.11.4): the tag and num_request_queues (1),
// read-only for the driver: a write is a guest error (counted, logged
// rate-limited) and changes nothing.
//
// Features: no device-type bits (VIRTIO_FS_F_NOTIFICATION is not offered).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/fs/fs_options.h"
#include "kvmmio/fs/virtio_fs_spec.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_user_queues.h"
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

class KVMMIO_EXPORT VirtioFs final : public vhost::VhostUserDevice {
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

  // FsSettings, then the hand-over's and VhostUserDevice's counters.
  void visit_counters(const virtio::CounterVisitor& visit) const override;

  // VirtioDevice
  uint32_t device_id() const override { return spec::kDeviceId; }
  uint64_t device_features() const override { return 0; }
  uint32_t num_queues() const override { return spec::kNumQueues; }
  uint16_t queue_max_size(uint32_t) const override { return kQueueSize; }
  uint32_t config_size() const override { return spec::kConfigSize; }
  void read_config(uint32_t offset, std::span<uint8_t> data) override { read_config_of(tag_, offset, data); }

 private:
  std::string tag_;
};

}  // namespace kvmmio::fs
