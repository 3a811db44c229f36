// SPDX-License-Identifier: BSD-2-Clause
// VirtioFs: the configuration space and the hand-over of the queues to a
// vhost-user backend (see the header).
#include "kvmmio/fs/virtio_fs.h"

#include <cstring>

#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::fs {

VirtioFs::VirtioFs(const FsOptions& options, vhost::VhostUserFrontend backend, const GuestMemory& memory,
                   EventLoop& loop)
    : VhostUserDevice(std::move(backend), memory, loop, "fs " + options.tag, spec::kNumQueues,
                      "use a virtio-fs backend that offers it (Debian's virtiofsd does)"),
      tag_(options.tag) {}

// The transport, which goes first, resets an active device (the VM's
// teardown); the connection closes with the device, and the backend
// (virtiofsd) exits with it.
VirtioFs::~VirtioFs() = default;

void VirtioFs::read_config_of(const std::string& tag, uint32_t offset, std::span<uint8_t> data) {
  // tag[36], NUL-padded, then le32 num_request_queues (1); the transport
  // checked the range, this checks again (a caller outside it: a test).
  uint8_t bytes[spec::kConfigSize] = {};
  std::memcpy(bytes, tag.data(), std::min<size_t>(tag.size(), spec::kTagSize));
  bytes[spec::kNumRequestQueuesOffset] = spec::kNumQueues - 1;
  for (size_t i = 0; i < data.size(); ++i) data[i] = offset + i < spec::kConfigSize ? bytes[offset + i] : 0;
}

void VirtioFs::visit_counters(const virtio::CounterVisitor& visit) const {
  FsSettings settings;
  settings.request_queues = spec::kNumQueues - 1;
  settings.backend_event_idx = backend_event_idx() ? 1 : 0;
  settings.each(visit);
  visit_device_counters(visit);
}

}  // namespace kvmmio::fs
