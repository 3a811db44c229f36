// SPDX-License-Identifier: BSD-2-Clause
// VcpuSet (arm64): see vcpu_set_arm64.h.
#include "vmm/machine/vcpu_set_arm64.h"

#include <chrono>
#include <optional>

#include "vmm/boot/memory_map_arm64.h"

namespace kvmmio::vmm {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

VcpuSet::VcpuSet(Vm& vm, int cpus, StopRequest& stop, bool reboot_in_place, arm64::GicVersion gic,
                 const std::function<void()>& vcpus_ready)
    : gic_(gic) {
  for (int i = 0; i < cpus; ++i)
    runners_.push_back(std::make_unique<VcpuRunner>(vm, vm.create_vcpu(i), stop, reboot_in_place));
  for (auto& r : runners_) mpidrs_.push_back(r->wait_initialised());
  if (vcpus_ready) vcpus_ready();
  vgic_ = std::make_unique<arm64::Vgic>(vm, gic_, layout::kGicLayout, layout::kGicNrIrqs);
}

void VcpuSet::start(const BootEntry& boot, const std::function<void(bool boot_cpu)>& before_run) {
  for (auto& r : runners_) {
    const bool boot_cpu = &r == &runners_.front();
    r->start(boot_cpu ? std::optional<BootEntry>(boot) : std::nullopt,
             [before_run, boot_cpu] { before_run(boot_cpu); });
  }
}

bool VcpuSet::hold(const StopRequest& stop) {
  for (auto& r : runners_) r->hold();
  for (auto& r : runners_)
    while (!r->wait_parked(Clock::now() + std::chrono::seconds(1)))
      if (stop.requested()) return false;
  return !stop.requested();
}

void VcpuSet::clear_spis() { vgic_->clear_spis(); }

bool VcpuSet::reinitialise(const BootEntry& boot) {
  for (auto& r : runners_) {
    const bool boot_cpu = &r == &runners_.front();
    r->reinitialise(boot_cpu ? std::optional<BootEntry>(boot) : std::nullopt);
  }
  for (auto& r : runners_)
    if (!r->wait_reinitialised()) return false;
  return true;
}

void VcpuSet::release() {
  for (auto& r : runners_) r->release();
}

int VcpuSet::pause() {
  paused_ = true;
  for (auto& r : runners_) r->pause();
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  int parked = 0;
  for (auto& r : runners_) parked += r->wait_parked(deadline) ? 1 : 0;
  return parked;
}

void VcpuSet::resume() {
  paused_ = false;
  for (auto& r : runners_) r->resume();
}

void VcpuSet::stop_and_join() {
  for (auto& r : runners_) r->stop();
  for (auto& r : runners_) r->join();
}

std::vector<VcpuStats> VcpuSet::stats() const {
  std::vector<VcpuStats> s;
  for (const auto& r : runners_) s.push_back(vcpu_stats(r->vcpu().index(), r->vcpu().exit_counts()));
  return s;
}

}  // namespace kvmmio::vmm
