// SPDX-License-Identifier: BSD-2-Clause
// --vsock specifications (whether the CID is free is the kernel's answer,
// at start-up: VhostVsock).
#include <cstdint>
#include <string>

#include "kvmmio/base/error.h"
#include "vmm/cli/device_specs.h"
#include "vmm/process/parse.h"

namespace kvmmio::vmm {

using vsock::VsockOptions;

VsockOptions parse_vsock_spec(std::string_view spec) {
  const std::string shown = "--vsock " + std::string(spec);
  // parse_key_values refuses an empty list, an item without '=' and a key
  // given twice, each naming what was typed.
  VsockOptions o;
  bool have_cid = false;
  for (const auto& [key, value] : parse_key_values(spec, shown)) {
    if (key != "cid")
      throw UserError(shown + ": unknown key '" + std::string(key) +
                      "': --vsock takes cid=N, the guest's context ID, e.g. --vsock cid=3");
    // Any whole number first, so a reserved one gets the message below.
    const uint64_t cid = parse_uint(value, shown, 0, UINT64_MAX);
    if (cid < VsockOptions::kMinCid || cid > VsockOptions::kMaxCid)
      throw UserError(shown + ": CID " + std::to_string(cid) +
                      (cid > 0xffffffffu ? " does not fit in 32 bits"
                                         : " is reserved (0: the hypervisor, 1: local, 2: the host, "
                                           "4294967295: any)") +
                      "; choose a CID from 3 to 4294967294, e.g. --vsock cid=3");
    o.cid = static_cast<uint32_t>(cid);
    have_cid = true;
  }
  if (!have_cid) throw UserError(shown + ": no cid: give the guest's context ID, e.g. --vsock cid=3");
  return o;
}

}  // namespace kvmmio::vmm
