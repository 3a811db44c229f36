// SPDX-License-Identifier: BSD-2-Clause
// The virtio-mmio device plan (see devices.h).
#include "vmm/cli/devices.h"

#include "vmm/machine/virtio_slot.h"

namespace kvmmio::vmm {

std::vector<VirtioDevicePlan> plan_virtio_devices(const RunOptions& options, int console_out) {
  std::vector<VirtioDevicePlan> plan;
  for (unsigned i = 0; i < options.nets.size(); ++i)
    plan.push_back({"net" + std::to_string(i), options.nets[i].vhost_user.empty() ? "virtio-net" : "vhost-user-net",
                    virtio_net_factory(options.nets[i], i)});
  // After the nets, so adding --console virtio moves no network device's
  // slot (its address and interrupt in the guest stay the same).
  if (options.console == ConsoleKind::kVirtio)
    plan.push_back({"console0", "virtio-console", virtio_console_factory(options.console_transport, console_out)});
  // Last, so adding a disk moves neither a network device nor the console.
  for (unsigned i = 0; i < options.disks.size(); ++i)
    plan.push_back({"disk" + std::to_string(i), "virtio-blk", virtio_block_factory(options.disks[i], i)});
  // After the disks, so adding --vsock moves none of the devices above.
  if (options.vsock)
    plan.push_back({"vsock0", "virtio-vsock", virtio_vsock_factory(*options.vsock, options.name.value_or(""))});
  // After the vsock device, so a shared folder moves none of the above.
  for (unsigned i = 0; i < options.shares.size(); ++i)
    plan.push_back({"fs" + std::to_string(i), "virtio-fs", virtio_fs_factory(options.shares[i], i)});
  // After every device the user names, so turning it off (--rng off)
  // moves none of theirs.
  if (options.rng) plan.push_back({"rng0", "virtio-rng", virtio_rng_factory()});
  return plan;
}

}  // namespace kvmmio::vmm
