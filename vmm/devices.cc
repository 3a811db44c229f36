// The virtio-mmio device plan (see devices.h).
#include "vmm/devices.h"

namespace kvmmio::vmm {

std::vector<VirtioDevicePlan> plan_virtio_devices(const RunOptions& options) {
  std::vector<VirtioDevicePlan> plan;
  if (options.console == ConsoleKind::kVirtio) {
    // Integration point: once hw/virtio provides the virtio-mmio transport,
    // plan {"virtio<N>", "virtio-console"} here and attach it in
    // run_command.cc through Machine::add_virtio_mmio().
    throw UsageError(
        "--console virtio: virtio console needs the virtio-mmio transport (not "
        "built); use --console serial");
  }
  for (size_t i = 0; i < options.nets.size(); ++i)
    plan.push_back({"net" + std::to_string(i), "virtio-net", static_cast<int>(i)});
  return plan;
}

}  // namespace kvmmio::vmm
