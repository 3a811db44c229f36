// The virtio-mmio device plan (see devices.h).
#include "vmm/devices.h"

namespace kvmmio::vmm {

std::vector<VirtioDevicePlan> plan_virtio_devices(const RunOptions& options) {
  std::vector<VirtioDevicePlan> plan;
  if (options.console == ConsoleKind::kVirtio) {
    // The virtio-console device is not written yet: the transport is generic
    // (virtio-net uses it), and a console device plugs in here, planned as
    // {"console0", "virtio-console"} and attached in run_command.cc.
    throw UsageError(
        "--console virtio: kvmmio has no virtio-console device yet; use --console serial "
        "(the PL011, ttyAMA0)");
  }
  for (size_t i = 0; i < options.nets.size(); ++i)
    plan.push_back({"net" + std::to_string(i), "virtio-net", static_cast<int>(i)});
  return plan;
}

}  // namespace kvmmio::vmm
