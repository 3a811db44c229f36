// SPDX-License-Identifier: BSD-2-Clause
// TestMachine on arm64: 2 MiB of RAM at 1 GiB, a vGICv3 or vGICv2, guests
// entered at EL1h with interrupts masked, the test device at 0x0a000000.
// The layout follows QEMU's virt machine, which Linux knows well.
#include <stdexcept>

#include "test_machine.h"

extern "C" const char arm64_guest_store_loop[], arm64_guest_store_loop_end[];
extern "C" const char arm64_guest_irq_v3[], arm64_guest_irq_v3_end[];
extern "C" const char arm64_guest_load_loop[], arm64_guest_load_loop_end[];
extern "C" const char arm64_guest_irq_v2[], arm64_guest_irq_v2_end[];

namespace kvmmio::test {

const uint64_t TestMachine::kRamBase = 0x40000000;
const uint64_t TestMachine::kTestDeviceBase = 0x0a000000;

namespace {
constexpr arm64::GicLayout kGic{.dist_base = 0x08000000, .redist_base = 0x080a0000, .cpu_base = 0x08010000};
constexpr uint32_t kNrIrqs = 128;
}  // namespace

void TestMachine::build(Kvm& kvm, const MachineOptions& options) {
  make_vm(kvm, options, 2 << 20);
  for (int i = 0; i < options.vcpus; ++i) {
    vcpus_.push_back(vm_->create_vcpu(i));
    arm64::init_vcpu(*vm_, *vcpus_.back(), /*powered_off=*/i > 0);
  }
  arm64::GicVersion version = options.gic.value_or(
      arm64::vgic_supported(*vm_, arm64::GicVersion::kV3) ? arm64::GicVersion::kV3
                                                          : arm64::GicVersion::kV2);
  vgic_ = std::make_unique<arm64::Vgic>(*vm_, version, kGic, kNrIrqs);
  vm_->mmio_bus().claim(kTestDeviceBase, 0x1000, device_, "test-device");
}

void TestMachine::load_program(std::span<const uint8_t> code, int vcpu_index) {
  on_vcpu_thread([&] {
    load(code, kRamBase);
    Vcpu& v = vcpu(vcpu_index);
    v.set_one_reg(arm64::reg_pc(), kRamBase);
    v.set_one_reg(arm64::reg_pstate(), arm64::kPstateEl1hMasked);
  });
}

void TestMachine::load_store_loop(uint32_t value, uint32_t count) {
  load_program(guest_code(arm64_guest_store_loop, arm64_guest_store_loop_end));
  on_vcpu_thread([&] {
    vcpu().set_one_reg(arm64::reg_x(0), notify_addr());
    vcpu().set_one_reg(arm64::reg_x(1), value);
    vcpu().set_one_reg(arm64::reg_x(2), count);
    vcpu().set_one_reg(arm64::reg_x(3), kTestDeviceBase + kReportOffset);
  });
}

void TestMachine::load_load_loop(uint64_t offset, uint32_t count) {
  load_program(guest_code(arm64_guest_load_loop, arm64_guest_load_loop_end));
  on_vcpu_thread([&] {
    vcpu().set_one_reg(arm64::reg_x(0), kTestDeviceBase + offset);
    vcpu().set_one_reg(arm64::reg_x(2), count);
    vcpu().set_one_reg(arm64::reg_x(3), kTestDeviceBase + kReportOffset);
  });
}

void TestMachine::load_irq_guest(uint32_t gsi) {
  const bool v3 = vgic_->version() == arm64::GicVersion::kV3;
  load_program(v3 ? guest_code(arm64_guest_irq_v3, arm64_guest_irq_v3_end)
                  : guest_code(arm64_guest_irq_v2, arm64_guest_irq_v2_end));
  on_vcpu_thread([&] {
    vcpu().set_one_reg(arm64::reg_x(0), kGic.dist_base);
    vcpu().set_one_reg(arm64::reg_x(1), v3 ? kGic.redist_base : kGic.cpu_base);
    vcpu().set_one_reg(arm64::reg_x(2), kTestDeviceBase + kReportOffset);
    vcpu().set_one_reg(arm64::reg_x(3), expected_irq_report(gsi));
  });
}

uint64_t TestMachine::expected_irq_report(uint32_t gsi) { return gsi + arm64::kSpiBase; }

void TestMachine::pulse_irq_line(uint32_t gsi) {
  vm_->irq_line(arm64::irq_line_spi(gsi), true);
  vm_->irq_line(arm64::irq_line_spi(gsi), false);
}

}  // namespace kvmmio::test
