// SPDX-License-Identifier: BSD-2-Clause
// VhostDevice: the vhost ioctls every device type shares, with guest
// addresses checked and turned into host addresses through GuestMemory.
#include "kvmmio/vhost/vhost_device.h"

#include <fcntl.h>
#include <linux/vhost.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/virtio/queue_layout.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::vhost {
namespace {

uint64_t host_address(const GuestMemory& memory, uint64_t gpa, uint64_t len, const char* what) {
  auto s = memory.span(gpa, len);
  if (!s) throw std::invalid_argument(std::string("vhost vring ") + what + " is not inside guest RAM");
  return reinterpret_cast<uint64_t>(s->data());
}

}  // namespace

RingHostAddresses ring_host_addresses(const GuestMemory& memory, const Vring& v) {
  // The split ring's parts, sized as the transport validated them (2.7).
  return {host_address(memory, v.desc_gpa, virtio::desc_table_bytes(v.size), "descriptor table"),
          host_address(memory, v.avail_gpa, virtio::avail_ring_bytes(v.size), "avail ring"),
          host_address(memory, v.used_gpa, virtio::used_ring_bytes(v.size), "used ring")};
}

void vhost_ioctl(int fd, unsigned long request, const void* arg, const char* what) {
  if (::ioctl(fd, request, arg) != 0) throw_errno(what);
}

bool VhostDevice::available(const char* path) {
  UniqueFd fd(::open(path, O_RDWR | O_CLOEXEC));
  return fd.valid();
}

VhostDevice::VhostDevice(const char* path, const std::string& missing_fix)
    : path_(path), fd_(::open(path, O_RDWR | O_CLOEXEC)) {
  if (!fd_) {
    const int err = errno;
    if (err == ENOENT || err == ENODEV) throw UserError(std::string(path) + " is missing: " + missing_fix);
    throw UserError(std::string("cannot open ") + path + ": " + std::strerror(err) +
                    " (run as root, or give your user access to " + path + ")");
  }
  if (::ioctl(fd_.get(), VHOST_SET_OWNER) != 0) throw_errno("VHOST_SET_OWNER");
  vhost_ioctl(fd_.get(), VHOST_GET_FEATURES, &features_, "VHOST_GET_FEATURES");
}

void VhostDevice::set_features(uint64_t guest_features) {
  // No IOMMU is modelled: see the header.
  const uint64_t wanted = guest_features & ~virtio::feature::bit(virtio::feature::kAccessPlatform);
  if (wanted & ~features_) {
    char msg[128];
    std::snprintf(msg, sizeof(msg), "%s does not offer features 0x%llx", path_,
                  static_cast<unsigned long long>(wanted & ~features_));
    throw std::invalid_argument(msg);
  }
  vhost_ioctl(fd_.get(), VHOST_SET_FEATURES, &wanted, "VHOST_SET_FEATURES");
}

void VhostDevice::set_mem_table(const GuestMemory& memory) {
  const auto& regions = memory.regions();
  std::vector<uint8_t> buf(sizeof(vhost_memory) + regions.size() * sizeof(vhost_memory_region));
  auto* table = reinterpret_cast<vhost_memory*>(buf.data());
  table->nregions = static_cast<uint32_t>(regions.size());
  for (size_t i = 0; i < regions.size(); ++i) {
    table->regions[i].guest_phys_addr = regions[i]->gpa();
    table->regions[i].memory_size = regions[i]->size();
    table->regions[i].userspace_addr = reinterpret_cast<uint64_t>(regions[i]->host());
  }
  vhost_ioctl(fd_.get(), VHOST_SET_MEM_TABLE, table, "VHOST_SET_MEM_TABLE");
}

void VhostDevice::setup_vring(const GuestMemory& memory, const Vring& v) {
  vhost_vring_state num{v.index, v.size};
  vhost_ioctl(fd_.get(), VHOST_SET_VRING_NUM, &num, "VHOST_SET_VRING_NUM");
  vhost_vring_state base{v.index, v.next_avail};
  vhost_ioctl(fd_.get(), VHOST_SET_VRING_BASE, &base, "VHOST_SET_VRING_BASE");
  const RingHostAddresses rings = ring_host_addresses(memory, v);
  vhost_vring_addr addr{};
  addr.index = v.index;
  addr.desc_user_addr = rings.desc;
  addr.avail_user_addr = rings.avail;
  addr.used_user_addr = rings.used;
  vhost_ioctl(fd_.get(), VHOST_SET_VRING_ADDR, &addr, "VHOST_SET_VRING_ADDR");
  set_vring_kick(v.index, v.kick_fd);
  set_vring_call(v.index, v.call_fd);
  set_vring_err(v.index, v.err_fd);
  if (v.busyloop_us) {
    vhost_vring_state busyloop{v.index, v.busyloop_us};
    vhost_ioctl(fd_.get(), VHOST_SET_VRING_BUSYLOOP_TIMEOUT, &busyloop, "VHOST_SET_VRING_BUSYLOOP_TIMEOUT");
  }
}

uint16_t VhostDevice::vring_base(unsigned index) {
  vhost_vring_state state{index, 0};
  vhost_ioctl(fd_.get(), VHOST_GET_VRING_BASE, &state, "VHOST_GET_VRING_BASE");
  return static_cast<uint16_t>(state.num);
}

void VhostDevice::set_vring_kick(unsigned index, int kick_fd) {
  vhost_vring_file kick{index, kick_fd};
  vhost_ioctl(fd_.get(), VHOST_SET_VRING_KICK, &kick, "VHOST_SET_VRING_KICK");
}

void VhostDevice::set_vring_call(unsigned index, int call_fd) {
  vhost_vring_file call{index, call_fd};
  vhost_ioctl(fd_.get(), VHOST_SET_VRING_CALL, &call, "VHOST_SET_VRING_CALL");
}

void VhostDevice::set_vring_err(unsigned index, int err_fd) {
  vhost_vring_file err{index, err_fd};
  vhost_ioctl(fd_.get(), VHOST_SET_VRING_ERR, &err, "VHOST_SET_VRING_ERR");
}

uint32_t VhostDevice::busyloop_timeout(unsigned index) const {
  vhost_vring_state busyloop{index, 0};
  vhost_ioctl(fd_.get(), VHOST_GET_VRING_BUSYLOOP_TIMEOUT, &busyloop, "VHOST_GET_VRING_BUSYLOOP_TIMEOUT");
  return busyloop.num;
}

}  // namespace kvmmio::vhost
