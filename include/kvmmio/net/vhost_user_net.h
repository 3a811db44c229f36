// SPDX-License-Identifier: BSD-2-Clause
// VhostUserNet: a virtio-net device (virtio 1.2 section 5.1, device ID 1)
// whose packets a vhost-user backend in another process moves (a
// user-space switch: DPDK's vhost PMD, OVS-DPDK): the backend reads the
// queues and guest RAM itself, so the VMM is not in the data path.
//
// Queues: one receive and one transmit queue, both the backend's, handed
// over at DRIVER_OK and taken back at a reset by VhostUserQueues
// (vhost_user_queues.h: what is checked, and what a backend that fails or
// goes away gets). No control queue and no multiqueue: a control queue
// would be the VMM's to serve, in the path of every filter change.
//
// Features: VIRTIO_NET_F_MAC, served here (the configuration space's MAC,
// which the backend never sees), and of the offloads and mergeable receive
// buffers only those the backend offers (kBackendNetFeatures). The
// transport's ring bits follow the backend's too (EVENT_IDX withheld
// where it lacks it).
//
// Configuration space (5.1.4): the MAC and the status (link up), read-only
// for the driver: a write is a guest error (counted, logged rate-limited)
// and changes nothing.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/log.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/vhost/vhost_user_queues.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::net {

// The device's settings, for --stats.
#define KVMMIO_VHOST_USER_NET_SETTINGS(C)                                                       \
  C(backend_features, "the backend's virtio feature bits (GET_FEATURES), of which the device " \
                      "offers the offloads and MRG_RXBUF")                                      \
  C(backend_event_idx, "1 when the backend implements VIRTIO_RING_F_EVENT_IDX, which is then "  \
                       "offered to the guest")
struct KVMMIO_EXPORT VhostUserNetSettings {
  KVMMIO_VHOST_USER_NET_SETTINGS(KVMMIO_PLAIN_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_VHOST_USER_NET_SETTINGS)
};

class KVMMIO_EXPORT VhostUserNet final : public vhost::VhostUserDevice {
 public:
  static constexpr uint16_t kQueueSize = 256;
  static constexpr uint32_t kNumQueues = 2;  // receiveq1, transmitq1
  // What the device passes on from the backend's features.
  static constexpr uint64_t kBackendNetFeatures =
      (1ull << spec::kFCsum) | (1ull << spec::kFGuestCsum) | (1ull << spec::kFGuestTso4) |
      (1ull << spec::kFGuestTso6) | (1ull << spec::kFGuestUfo) | (1ull << spec::kFHostTso4) |
      (1ull << spec::kFHostTso6) | (1ull << spec::kFHostUfo) | (1ull << spec::kFMrgRxbuf);

  // Starts `backend` (SET_OWNER, features): vhost::BackendError when it
  // does not answer right, std::runtime_error naming the backend when it
  // lacks a feature the transport needs (VERSION_1, INDIRECT_DESC).
  VhostUserNet(const std::array<uint8_t, 6>& mac, vhost::VhostUserFrontend backend, const GuestMemory& memory,
               EventLoop& loop);
  ~VhostUserNet() override;
  VhostUserNet(const VhostUserNet&) = delete;
  VhostUserNet& operator=(const VhostUserNet&) = delete;

  const std::array<uint8_t, 6>& mac() const { return mac_; }

  // VhostUserNetSettings, then the hand-over's and VhostUserDevice's
  // counters.
  void visit_counters(const virtio::CounterVisitor& visit) const override;

  // VirtioDevice
  uint32_t device_id() const override { return 1; }
  uint64_t device_features() const override;
  uint32_t num_queues() const override { return kNumQueues; }
  uint16_t queue_max_size(uint32_t) const override { return kQueueSize; }
  // The MAC and the status; nothing past them is offered.
  uint32_t config_size() const override { return 8; }
  void read_config(uint32_t offset, std::span<uint8_t> data) override;

 private:
  VhostUserNet(const std::array<uint8_t, 6>& mac, std::string log_name, vhost::VhostUserFrontend&& backend,
               const GuestMemory& memory, EventLoop& loop);

  std::array<uint8_t, 6> mac_;
};

}  // namespace kvmmio::net
