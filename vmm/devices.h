// Which virtio-mmio devices the options ask for, in slot order. The same
// plan feeds --dump-dtb (slots only) and the running machine (which attaches
// each device in that order), so the two always agree.
#pragma once

#include <string>
#include <vector>

#include "vmm/options.h"

namespace kvmmio::vmm {

struct VirtioDevicePlan {
  std::string name;  // "net0", ...: the stats name
  std::string type;  // "virtio-net", "virtio-console"
  int net_index = -1;  // virtio-net: which --net (index into RunOptions::nets)
};

// --net devices in order, then the virtio console (--console virtio).
std::vector<VirtioDevicePlan> plan_virtio_devices(const RunOptions& options);

}  // namespace kvmmio::vmm
