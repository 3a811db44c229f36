// SPDX-License-Identifier: BSD-2-Clause
// VcpuSet (arm64): the machine's vCPUs, each a VcpuRunner on a thread of
// its own, and the in-kernel vGIC that needs all of them initialised first.
// What the machine does to all of them at once lives here: start them,
// park them (a pause, or a reboot in place), boot them again, stop them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kvmmio/arch/arm64.h"
#include "kvmmio/vm.h"
#include "vmm/machine/vcpu_runner_arm64.h"
#include "vmm/process/stop_request.h"
#include "vmm/stats/stats.h"

namespace kvmmio::vmm {

class VcpuSet {
 public:
  // Creates `cpus` vCPUs (KVM_CREATE_VCPU is a VM ioctl), waits for each
  // thread's KVM_ARM_VCPU_INIT, then the vGIC of version `gic`.
  // `vcpus_ready` is called between the two (the start-up timeline's
  // phases). `reboot_in_place`: a guest reset parks the vCPUs for the
  // machine to boot it again, instead of stopping the VM.
  VcpuSet(Vm& vm, int cpus, StopRequest& stop, bool reboot_in_place, arm64::GicVersion gic,
          const std::function<void()>& vcpus_ready);
  VcpuSet(const VcpuSet&) = delete;
  VcpuSet& operator=(const VcpuSet&) = delete;

  const std::vector<uint64_t>& mpidrs() const { return mpidrs_; }
  arm64::GicVersion gic() const { return gic_; }
  int count() const { return static_cast<int>(runners_.size()); }

  // Starts every vCPU; vCPU 0 enters the kernel at `boot`, the others wait
  // for PSCI CPU_ON. `before_run(boot_cpu)` runs on each vCPU's thread just
  // before its first KVM_RUN.
  void start(const BootEntry& boot, const std::function<void(bool boot_cpu)>& before_run);

  // Every vCPU out of KVM_RUN and parked (the one that saw the reset holds
  // itself). A vCPU may be held up in a device (the PL011 waits for a full
  // stdout): waited for, but a stop meanwhile wins: false then.
  bool hold(const StopRequest& stop);
  // After a hold: the SPIs' pending and active state cleared (throws what
  // the vGIC refuses).
  void clear_spis();
  // After a hold: every vCPU re-initialised before any runs (a secondary's
  // reset after the boot vCPU's CPU_ON for it would power it off again),
  // vCPU 0 at `boot`. False when a vCPU's thread failed (it said why).
  bool reinitialise(const BootEntry& boot);
  // After reinitialise(): each vCPU runs again.
  void release();

  // The control socket's pause: every vCPU kicked out of KVM_RUN and
  // parked; how many are parked within a second. A stop never waits
  // behind a pause.
  int pause();
  void resume();
  bool paused() const { return paused_.load(); }

  // Kicks every vCPU out of KVM_RUN (one may be blocked in WFI) and joins
  // its thread.
  void stop_and_join();

  std::vector<VcpuStats> stats() const;

 private:
  std::vector<std::unique_ptr<VcpuRunner>> runners_;
  std::vector<uint64_t> mpidrs_;
  arm64::GicVersion gic_;
  std::unique_ptr<arm64::Vgic> vgic_;
  std::atomic<bool> paused_{false};
};

}  // namespace kvmmio::vmm
