// SPDX-License-Identifier: BSD-2-Clause
// arm64 vCPU set-up (PSCI 0.2 handled in KVM) and core register ids.
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include <cstddef>

#include "kvmmio/arch/arm64.h"
#include "kvmmio/base/error.h"
#include "kvmmio/vcpu.h"
#include "kvmmio/vm.h"

namespace kvmmio::arm64 {
namespace {

constexpr uint64_t core_reg(size_t offset_bytes) {
  return KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | (offset_bytes / sizeof(uint32_t));
}

}  // namespace

void init_vcpu(Vm& vm, Vcpu& vcpu, bool powered_off) {
  vm.kvm().require(KVM_CAP_ARM_PSCI_0_2, "KVM_CAP_ARM_PSCI_0_2", "starting secondary vCPUs");
  vm.kvm().require(KVM_CAP_ONE_REG, "KVM_CAP_ONE_REG", "setting vCPU registers");
  reset_vcpu(vm, vcpu, powered_off);
}

// KVM's API documentation: KVM_ARM_VCPU_INIT may be called again, after
// the vCPU has run, and resets it to its initial state, as long as the
// target and the features are those of the first call; both come out the
// same here (the host's preferred target, the same flags).
void reset_vcpu(Vm& vm, Vcpu& vcpu, bool powered_off) {
  kvm_vcpu_init init{};
  if (::ioctl(vm.fd(), KVM_ARM_PREFERRED_TARGET, &init) != 0)
    throw_errno("KVM_ARM_PREFERRED_TARGET");
  init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
  if (powered_off) init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
  if (::ioctl(vcpu.fd(), KVM_ARM_VCPU_INIT, &init) != 0)
    throw_errno("KVM_ARM_VCPU_INIT for vCPU " + std::to_string(vcpu.index()));
}

uint64_t reg_x(int n) { return core_reg(offsetof(kvm_regs, regs.regs) + n * sizeof(uint64_t)); }
uint64_t reg_pc() { return core_reg(offsetof(kvm_regs, regs.pc)); }
uint64_t reg_pstate() { return core_reg(offsetof(kvm_regs, regs.pstate)); }
uint64_t reg_sp_el1() { return core_reg(offsetof(kvm_regs, sp_el1)); }
uint64_t reg_mpidr() { return ARM64_SYS_REG(3, 0, 0, 0, 5); }

uint32_t irq_line_spi(uint32_t gsi) {
  return (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) | ((gsi + kSpiBase) & KVM_ARM_IRQ_NUM_MASK);
}

}  // namespace kvmmio::arm64
