// SPDX-License-Identifier: BSD-2-Clause
// VhostNet: vhost-net's own ioctl (NET_SET_BACKEND) over VhostDevice's
// shared ones.
#include "kvmmio/net/vhost_net.h"

#include <linux/vhost.h>

#include <stdexcept>

namespace kvmmio::net {

bool VhostNet::available() { return vhost::VhostDevice::available(kPath); }

VhostNet::VhostNet()
    : device_(kPath, "load the vhost_net module (modprobe vhost_net), or use vhost=off for the "
                     "userspace backend") {}

void VhostNet::set_features(uint64_t guest_features) { device_.set_features(guest_features); }

void VhostNet::set_mem_table(const GuestMemory& memory) { device_.set_mem_table(memory); }

void VhostNet::setup_vring(const GuestMemory& memory, const Vring& v) {
  if (v.index > kTxVring) throw std::invalid_argument("vhost-net has vrings 0 (RX) and 1 (TX)");
  device_.setup_vring(memory, v);
}

uint32_t VhostNet::busyloop_timeout(unsigned index) const { return device_.busyloop_timeout(index); }

void VhostNet::set_backend(unsigned index, int tap_fd) {
  vhost_vring_file backend{index, tap_fd};
  vhost::vhost_ioctl(device_.fd(), VHOST_NET_SET_BACKEND, &backend, "VHOST_NET_SET_BACKEND");
}

uint16_t VhostNet::stop_vring(unsigned index) {
  set_backend(index, -1);
  return device_.vring_base(index);
}

void VhostNet::set_vring_kick(unsigned index, int kick_fd) { device_.set_vring_kick(index, kick_fd); }

}  // namespace kvmmio::net
