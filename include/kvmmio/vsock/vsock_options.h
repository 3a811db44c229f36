// SPDX-License-Identifier: BSD-2-Clause
// VsockOptions: the guest's AF_VSOCK address (the kvmmio program's
// --vsock cid=N; whether the CID is free is the kernel's answer, at
// start-up: VhostVsock).
#pragma once

#include <cstdint>

#include "kvmmio/base/export.h"

namespace kvmmio::vsock {

struct KVMMIO_EXPORT VsockOptions {
  // The guest's context ID: its address in AF_VSOCK, which the host
  // connects to. 0 (hypervisor), 1 (local), 2 (host) and 0xffffffff
  // (VMADDR_CID_ANY) are reserved, so 3 .. 0xfffffffe.
  uint32_t cid = 0;

  static constexpr uint32_t kMinCid = 3;
  static constexpr uint32_t kMaxCid = 0xfffffffe;
};

}  // namespace kvmmio::vsock
