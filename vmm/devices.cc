// The virtio-mmio device plan (see devices.h).
#include "vmm/devices.h"

namespace kvmmio::vmm {

std::vector<VirtioDevicePlan> plan_virtio_devices(const RunOptions& options) {
  std::vector<VirtioDevicePlan> plan;
  for (size_t i = 0; i < options.nets.size(); ++i)
    plan.push_back({"net" + std::to_string(i), "virtio-net", static_cast<int>(i)});
  // After the nets, so adding --console virtio moves no network device's
  // slot (its address and interrupt in the guest stay the same).
  if (options.console == ConsoleKind::kVirtio) plan.push_back({"console0", "virtio-console"});
  return plan;
}

}  // namespace kvmmio::vmm
