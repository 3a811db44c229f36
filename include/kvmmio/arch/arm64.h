// SPDX-License-Identifier: BSD-2-Clause
// arm64 backend: vCPU initialisation (PSCI 0.2 in KVM), core registers
// through KVM_SET_ONE_REG, the in-kernel vGIC (v3 or v2), and the
// KVM_IRQ_LINE encoding of SPIs.
//
// Interrupt numbering: GSI n is routed to SPI n, i.e. INTID n + 32 (the
// default routing KVM installs, which this backend keeps in the VM's table).
#pragma once

#include <cstdint>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {
class Vm;
class Vcpu;
}  // namespace kvmmio

namespace kvmmio::arm64 {

constexpr uint32_t kSpiBase = 32;  // INTID of SPI 0
constexpr uint64_t kPstateEl1hMasked = 0x3c5;  // EL1h, D, A, I, F masked

// KVM_ARM_PREFERRED_TARGET + KVM_ARM_VCPU_INIT with PSCI 0.2. Secondary
// vCPUs (powered_off) wait in KVM until the guest starts them with CPU_ON.
KVMMIO_EXPORT void init_vcpu(Vm& vm, Vcpu& vcpu, bool powered_off);
// KVM_ARM_VCPU_INIT again, as init_vcpu() did it (same target, same
// features, powered_off as then): the vCPU back to its reset state, e.g.
// for a guest rebooted in place. Callable after the vCPU has run, on the
// thread that runs it; complete any access KVM still owes the guest first
// (Vcpu::complete_pending_io()). Issues only KVM_ARM_PREFERRED_TARGET and
// KVM_ARM_VCPU_INIT.
KVMMIO_EXPORT void reset_vcpu(Vm& vm, Vcpu& vcpu, bool powered_off);

// Core register ids (struct kvm_regs) for KVM_SET_ONE_REG.
KVMMIO_EXPORT uint64_t reg_x(int n);
KVMMIO_EXPORT uint64_t reg_pc();
KVMMIO_EXPORT uint64_t reg_pstate();
KVMMIO_EXPORT uint64_t reg_sp_el1();
// MPIDR_EL1 (a system register): the guest-visible CPU id.
KVMMIO_EXPORT uint64_t reg_mpidr();

enum class GicVersion { kV2, kV3 };
KVMMIO_EXPORT const char* gic_name(GicVersion v);

// Guest physical layout of the GIC, chosen by the machine.
struct KVMMIO_EXPORT GicLayout {
  uint64_t dist_base = 0;
  uint64_t redist_base = 0;  // v3: one 128 KiB frame pair per vCPU
  uint64_t cpu_base = 0;     // v2: the CPU interface (8 KiB)
  static constexpr uint64_t kDistSizeV3 = 0x10000;
  static constexpr uint64_t kRedistSizePerCpu = 0x20000;
  static constexpr uint64_t kDistSizeV2 = 0x1000;
  static constexpr uint64_t kCpuSizeV2 = 0x2000;
};

// Whether the host can create this vGIC (KVM_CREATE_DEVICE_TEST).
KVMMIO_EXPORT bool vgic_supported(Vm& vm, GicVersion v);

// The in-kernel GIC. Create after all vCPUs exist and are initialised;
// construction sets addresses and the number of IRQs and runs CTRL_INIT,
// then tells the Vm the irqchip is ready (queued irqfds get routed).
// When the host lacks this version: UserError naming the alternative.
class KVMMIO_EXPORT Vgic {
 public:
  Vgic(Vm& vm, GicVersion version, const GicLayout& layout, uint32_t nr_irqs);

  GicVersion version() const { return version_; }
  uint32_t nr_irqs() const { return nr_irqs_; }
  int fd() const { return fd_.get(); }

  // Every SPI's enable, pending and active bit cleared through the
  // distributor's clear registers (KVM_DEV_ARM_VGIC_GRP_DIST_REGS), as at
  // power-on: for a guest rebooted in place, whose devices were reset
  // (their level lines lowered) first. SGIs and PPIs are each vCPU's and
  // left to the guest's GIC set-up, which disables and deactivates them.
  // KVM takes these accesses only while no vCPU is in KVM_RUN (EBUSY
  // otherwise). Throws std::system_error naming the register.
  void clear_spis();

 private:
  GicVersion version_;
  uint32_t nr_irqs_;
  UniqueFd fd_;
};

// KVM_IRQ_LINE "irq" value for an SPI given by its GSI (SPI number).
KVMMIO_EXPORT uint32_t irq_line_spi(uint32_t gsi);

}  // namespace kvmmio::arm64
