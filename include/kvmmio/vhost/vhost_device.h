// SPDX-License-Identifier: BSD-2-Clause
// VhostDevice: one open vhost character device (/dev/vhost-net,
// /dev/vhost-vsock), owned by this process, and the ioctls every vhost
// device type shares: features, the memory table, vrings. A device type
// wraps it and adds its own start and stop (VhostNet: NET_SET_BACKEND;
// VhostVsock: VSOCK_SET_GUEST_CID and VSOCK_SET_RUNNING).
//
// Set-up order, as the kernel's vhost expects it: SET_OWNER (here, at
// construction: binds the instance and its worker to this process),
// GET_FEATURES, SET_FEATURES, SET_MEM_TABLE, then per vring
// NUM/BASE/ADDR/KICK/CALL/ERR, and last the type's start, which lets the
// worker use the rings: a ring it can reach before its fds are in place
// would be processed half set up.
#pragma once

#include <cstdint>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/guest_memory.h"

namespace kvmmio::vhost {

// One vring as the transport validated it, and the fds vhost gets for it.
struct KVMMIO_EXPORT Vring {
  unsigned index = 0;          // the device type's vring number
  uint16_t size = 0;           // queue size (power of two)
  uint16_t next_avail = 0;     // where the kernel starts reading the avail ring
  uint64_t desc_gpa = 0, avail_gpa = 0, used_gpa = 0;
  int kick_fd = -1;            // the queue's notify fd (its ioeventfd)
  int call_fd = -1;            // the device's irqfd (or the relay's eventfd)
  int err_fd = -1;             // optional: vhost signals ring errors here
  uint32_t busyloop_us = 0;    // VHOST_SET_VRING_BUSYLOOP_TIMEOUT when not 0
};

// A vring's descriptor table, avail and used rings as this process's
// addresses, each checked to lie whole inside guest RAM (sized for the
// ring, std::invalid_argument naming the part that does not): what the
// kernel's vhost and a vhost-user backend are both given.
struct KVMMIO_EXPORT RingHostAddresses {
  uint64_t desc = 0, avail = 0, used = 0;
};
KVMMIO_EXPORT RingHostAddresses ring_host_addresses(const GuestMemory& memory, const Vring& vring);

class KVMMIO_EXPORT VhostDevice {
 public:
  // Opens `path` and takes ownership (VHOST_SET_OWNER), then reads the
  // features (VHOST_GET_FEATURES). A missing device node is a UserError
  // saying "PATH is missing: " + `missing_fix` (which module to load);
  // another open failure names the path and the permission it needs.
  VhostDevice(const char* path, const std::string& missing_fix);

  // Whether `path` can be opened here.
  static bool available(const char* path);

  const char* path() const { return path_; }
  int fd() const { return fd_.get(); }

  // What the kernel backend offers (VHOST_GET_FEATURES).
  uint64_t features() const { return features_; }
  // VHOST_SET_FEATURES with the features the guest accepted. Features the
  // backend does not offer are refused (std::invalid_argument);
  // VIRTIO_F_ACCESS_PLATFORM is dropped, since no IOMMU is modelled and
  // vhost would otherwise expect IOTLB messages for every access.
  void set_features(uint64_t guest_features);

  // VHOST_SET_MEM_TABLE: every RAM region of `memory`, with the VMM's
  // userspace addresses for it.
  void set_mem_table(const GuestMemory& memory);

  // VHOST_SET_VRING_NUM/BASE/ADDR/KICK/CALL/ERR (and BUSYLOOP_TIMEOUT).
  // The ring addresses are checked through GuestMemory::span()
  // (std::invalid_argument when a ring is not inside guest RAM) and handed
  // over as host addresses. The ring must be stopped (the type's backend
  // detached, or not running): the kernel refuses NUM and BASE otherwise.
  void setup_vring(const GuestMemory& memory, const Vring& vring);

  // VHOST_GET_VRING_BASE: where the kernel stopped in the avail ring. On a
  // running vring it also stops the worker's use of it until set up again.
  uint16_t vring_base(unsigned index);
  // VHOST_SET_VRING_KICK / CALL / ERR alone: -1 unbinds the fd (a stopped
  // queue's, or a reset device's, which vhost must no longer hold).
  void set_vring_kick(unsigned index, int kick_fd);
  void set_vring_call(unsigned index, int call_fd);
  void set_vring_err(unsigned index, int err_fd);
  // VHOST_GET_VRING_BUSYLOOP_TIMEOUT: vring `index`'s busy-polling time in
  // microseconds, as the kernel holds it.
  uint32_t busyloop_timeout(unsigned index) const;

 private:
  const char* path_;
  UniqueFd fd_;
  uint64_t features_ = 0;
};

// The ioctl itself: std::system_error naming `what` when it fails.
void vhost_ioctl(int fd, unsigned long request, const void* arg, const char* what);

}  // namespace kvmmio::vhost
