// SPDX-License-Identifier: BSD-2-Clause
// Which virtio-mmio devices the options ask for, in slot order, and the
// factory that makes each. The same plan feeds --dump-dtb (slots only) and
// the running machine (which adds each device in that order), so the two
// always agree, and nothing else decides by a device's type.
#pragma once

#include <string>
#include <vector>

#include "vmm/machine/machine.h"
#include "vmm/cli/options.h"

namespace kvmmio::vmm {

struct VirtioDevicePlan {
  std::string name;  // "net0", ...: the stats name
  std::string type;  // "virtio-net", "virtio-console", "virtio-blk", "virtio-vsock", "virtio-fs", "virtio-rng"
  DeviceFactory make;  // puts the device in its slot (Machine::add_virtio_mmio)
};

// --net devices in order, then the virtio console (--console virtio), whose
// guest output goes to `console_out`, then the --disk devices in order,
// then the vsock device (--vsock), then the shared folders (--fs) in
// order, then the entropy device (unless --rng off).
std::vector<VirtioDevicePlan> plan_virtio_devices(const RunOptions& options, int console_out);

}  // namespace kvmmio::vmm
