// SPDX-License-Identifier: BSD-2-Clause
// VhostVsock: vhost-vsock's own ioctls (SET_GUEST_CID, SET_RUNNING) over
// VhostDevice's shared ones.
#include "kvmmio/vsock/vhost_vsock.h"

#include <linux/vhost.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

namespace kvmmio::vsock {

CidInUse::CidInUse(uint32_t cid)
    : UserError("vsock: CID " + std::to_string(cid) +
                " is in use: another VM on this host holds it (or it is this host's own CID); "
                "give this VM another CID, e.g. " + std::to_string(cid == 0xfffffffeu ? 3 : cid + 1)),
      cid_(cid) {}

VhostVsock::VhostVsock(uint32_t cid, const char* path)
    : device_(path, "load the vhost_vsock module (modprobe vhost_vsock)"), cid_(cid) {
  const uint64_t guest_cid = cid;
  if (::ioctl(device_.fd(), VHOST_VSOCK_SET_GUEST_CID, &guest_cid) != 0) {
    const int err = errno;
    if (err == EADDRINUSE) throw CidInUse(cid);
    if (err == EINVAL)
      throw UserError("vsock: the kernel refuses CID " + std::to_string(cid) +
                      " (reserved); choose a CID from 3 to 4294967294");
    errno = err;
    throw_errno("VHOST_VSOCK_SET_GUEST_CID");
  }
}

void VhostVsock::set_running(bool running) {
  const int start = running ? 1 : 0;
  vhost::vhost_ioctl(device_.fd(), VHOST_VSOCK_SET_RUNNING, &start, "VHOST_VSOCK_SET_RUNNING");
}

}  // namespace kvmmio::vsock
