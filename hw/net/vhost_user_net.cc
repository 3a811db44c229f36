// SPDX-License-Identifier: BSD-2-Clause
// VhostUserNet: features and configuration space of a virtio-net device
// whose queues a vhost-user backend serves (see the header).
#include "kvmmio/net/vhost_user_net.h"

#include <cstring>

namespace kvmmio::net {

VhostUserNet::VhostUserNet(const std::array<uint8_t, 6>& mac, vhost::VhostUserFrontend backend,
                           const GuestMemory& memory, EventLoop& loop)
    : VhostUserNet(mac, "net vhost-user " + backend.name(), std::move(backend), memory, loop) {}

// `backend` by reference: its name is read above before anything moves it.
VhostUserNet::VhostUserNet(const std::array<uint8_t, 6>& mac, std::string log_name,
                           vhost::VhostUserFrontend&& backend, const GuestMemory& memory, EventLoop& loop)
    : VhostUserDevice(std::move(backend), memory, loop, std::move(log_name), kNumQueues,
                      "use a vhost-user-net backend that offers it (DPDK's vhost PMD does)"),
      mac_(mac) {}

// The transport, which goes first, resets an active device (the VM's
// teardown); the connection closes with the device.
VhostUserNet::~VhostUserNet() = default;

uint64_t VhostUserNet::device_features() const {
  return (queues_.backend_features() & kBackendNetFeatures) | (1ull << spec::kFMac);
}

void VhostUserNet::read_config(uint32_t offset, std::span<uint8_t> data) {
  // mac[6], then le16 status (link up: the backend's link is not known
  // here, and the guest would only stop sending to it). Without
  // VIRTIO_NET_F_STATUS a driver does not read it; one that does sees up.
  uint8_t bytes[8] = {};
  std::memcpy(bytes, mac_.data(), mac_.size());
  bytes[6] = spec::kStatusLinkUp;
  for (size_t i = 0; i < data.size(); ++i) data[i] = offset + i < sizeof bytes ? bytes[offset + i] : 0;
}

void VhostUserNet::visit_counters(const virtio::CounterVisitor& visit) const {
  VhostUserNetSettings settings;
  settings.backend_features = queues_.backend_features();
  settings.backend_event_idx = queues_.backend_event_idx() ? 1 : 0;
  settings.each(visit);
  visit_device_counters(visit);
}

}  // namespace kvmmio::net
