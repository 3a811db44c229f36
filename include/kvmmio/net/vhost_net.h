// SPDX-License-Identifier: BSD-2-Clause
// VhostNet: one /dev/vhost-net instance, i.e. one virtio-net queue pair
// moved by the kernel (vring 0 = RX, vring 1 = TX) between guest memory and
// a tap fd, with no VMM code in the data path.
//
// The ioctls every vhost type shares are VhostDevice's
// (kvmmio/vhost/vhost_device.h); this adds vhost-net's backend, the tap.
// Set-up order (docs/virtio-net.md, "Backends"): SET_OWNER, GET_FEATURES, SET_FEATURES,
// SET_MEM_TABLE, per vring NUM/BASE/ADDR/KICK/CALL/ERR, then NET_SET_BACKEND
// with the tap fd. Reset: NET_SET_BACKEND -1 and GET_VRING_BASE per vring,
// after which everything can be set up again.
#pragma once

#include <cstdint>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/vhost/vhost_device.h"

namespace kvmmio::net {

class KVMMIO_EXPORT VhostNet {
 public:
  static constexpr const char* kPath = "/dev/vhost-net";
  static constexpr unsigned kRxVring = 0;
  static constexpr unsigned kTxVring = 1;

  // True when /dev/vhost-net can be opened here.
  static bool available();

  // Opens /dev/vhost-net and takes ownership (VHOST_SET_OWNER). UserError
  // naming the module to load when the device is missing.
  VhostNet();

  // What the kernel backend offers (VHOST_GET_FEATURES).
  uint64_t features() const { return device_.features(); }
  // VHOST_SET_FEATURES with the features the guest accepted. Features the
  // backend does not offer are refused (std::invalid_argument);
  // VIRTIO_F_ACCESS_PLATFORM is dropped, since no IOMMU is modelled and
  // vhost would otherwise expect IOTLB messages for every access.
  void set_features(uint64_t guest_features);

  // VHOST_SET_MEM_TABLE: every RAM region of `memory`, with the VMM's
  // userspace addresses for it.
  void set_mem_table(const GuestMemory& memory);

  // One vring: index kRxVring or kTxVring (VhostDevice's, kvmmio/vhost/vhost_device.h).
  using Vring = vhost::Vring;
  // VHOST_SET_VRING_NUM/BASE/ADDR/KICK/CALL/ERR (and BUSYLOOP_TIMEOUT). The ring addresses are
  // checked through GuestMemory::span() (std::invalid_argument when a ring
  // is not inside guest RAM) and handed over as host addresses.
  void setup_vring(const GuestMemory& memory, const Vring& vring);

  // VHOST_NET_SET_BACKEND: the tap fd vring `index` moves packets to and
  // from; -1 detaches (packets stop, the ring state is kept).
  void set_backend(unsigned index, int tap_fd);

  // Detaches the backend and returns where the kernel stopped in the avail
  // ring (VHOST_GET_VRING_BASE), to resume from or to discard on reset.
  uint16_t stop_vring(unsigned index);
  // VHOST_SET_VRING_KICK alone: -1 unbinds the kick fd (a stopped queue's
  // ioeventfd is about to go).
  void set_vring_kick(unsigned index, int kick_fd);
  // VHOST_GET_VRING_BUSYLOOP_TIMEOUT: vring `index`'s busy-polling time in
  // microseconds, as the kernel holds it.
  uint32_t busyloop_timeout(unsigned index) const;

  int fd() const { return device_.fd(); }

 private:
  vhost::VhostDevice device_;
};

}  // namespace kvmmio::net
