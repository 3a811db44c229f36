// SPDX-License-Identifier: BSD-2-Clause
// VhostVsock: one /dev/vhost-vsock instance, the kernel's virtio-vsock
// device for one guest: vring 0 (rx, host to guest) and 1 (tx, guest to
// host) moved by the kernel between guest memory and the host's AF_VSOCK
// sockets, with no VMM code in the data path. The event queue is not the
// kernel's (VirtioVsock keeps it).
//
// The guest's CID is bound to the open instance (VHOST_VSOCK_SET_GUEST_CID,
// at construction) and released when it is closed: the device holds one
// instance for its whole life, so no other VM can take the CID between a
// driver's reset and its next DRIVER_OK. A reset stops the instance
// (SET_RUNNING 0) instead of closing it, as QEMU's vhost-vsock does.
#pragma once

#include <cstdint>
#include <string>

#include "kvmmio/base/error.h"
#include "kvmmio/base/export.h"
#include "kvmmio/vhost/vhost_device.h"

namespace kvmmio::vsock {

// VHOST_VSOCK_SET_GUEST_CID answered EADDRINUSE: another VM on this host
// holds the CID (or it is this host's own, when the host is itself a
// guest with a vsock device). The message says so; a VMM that can name
// the other VM catches this and says which one.
class KVMMIO_EXPORT CidInUse : public UserError {
 public:
  explicit CidInUse(uint32_t cid);
  uint32_t cid() const { return cid_; }

 private:
  uint32_t cid_;
};

class KVMMIO_EXPORT VhostVsock {
 public:
  static constexpr const char* kPath = "/dev/vhost-vsock";
  static constexpr unsigned kRxVring = 0;
  static constexpr unsigned kTxVring = 1;

  static bool available() { return vhost::VhostDevice::available(kPath); }

  // Opens `path`, /dev/vhost-vsock (UserError naming `modprobe
  // vhost_vsock` when it is missing), takes ownership and binds `cid` to
  // it: CidInUse when another instance holds it, UserError for a CID the
  // kernel refuses. Another path only in tests (a missing device).
  explicit VhostVsock(uint32_t cid, const char* path = kPath);

  vhost::VhostDevice& device() { return device_; }
  const vhost::VhostDevice& device() const { return device_; }
  uint32_t cid() const { return cid_; }

  // VHOST_VSOCK_SET_RUNNING: 1 starts the worker on both vrings (each must
  // be set up), 0 stops it; the vrings' set-up and the CID stay.
  void set_running(bool running);

 private:
  vhost::VhostDevice device_;
  uint32_t cid_;
};

}  // namespace kvmmio::vsock
