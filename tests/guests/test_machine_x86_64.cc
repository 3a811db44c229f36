// SPDX-License-Identifier: BSD-2-Clause
// TestMachine on x86-64: 512 KiB of RAM at 0 (below the device), in-kernel PIC/IOAPIC/LAPIC,
// real-mode guests loaded at 0:0x1000, the test device at 0xd0000.
#include <stdexcept>

#include "kvmmio/arch/x86_64.h"
#include "test_machine.h"

extern "C" const char x86_guest_store_loop[], x86_guest_store_loop_end[];
extern "C" const char x86_guest_irq[], x86_guest_irq_end[];
extern "C" const char x86_guest_load_loop[], x86_guest_load_loop_end[];

namespace kvmmio::test {

const uint64_t TestMachine::kRamBase = 0;
const uint64_t TestMachine::kTestDeviceBase = 0xd0000;
namespace {
constexpr uint16_t kLoadIp = 0x1000;
}

void TestMachine::build(Kvm& kvm, const MachineOptions& options) {
  make_vm(kvm, options, 512 << 10);
  x86::create_irqchip(*vm_);  // before any vCPU exists
  vcpus_.push_back(vm_->create_vcpu(0));
  vm_->mmio_bus().claim(kTestDeviceBase, 0x1000, device_, "test-device");
}

void TestMachine::load_store_loop(uint32_t value, uint32_t count) {
  on_vcpu_thread([&] {
  load(guest_code(x86_guest_store_loop, x86_guest_store_loop_end), kLoadIp);
  x86::setup_real_mode(vcpu(), 0, kLoadIp);
  x86::set_real_segment(vcpu(), x86::Seg::kEs, static_cast<uint16_t>(kTestDeviceBase >> 4));
  x86::Regs regs;
  regs.rax = value;
  regs.rcx = count;
  regs.rdi = kNotifyOffset;
  x86::set_regs(vcpu(), regs);
  });
}

void TestMachine::load_load_loop(uint64_t offset, uint32_t count) {
  on_vcpu_thread([&] {
    load(guest_code(x86_guest_load_loop, x86_guest_load_loop_end), kLoadIp);
    x86::setup_real_mode(vcpu(), 0, kLoadIp);
    x86::set_real_segment(vcpu(), x86::Seg::kEs, static_cast<uint16_t>(kTestDeviceBase >> 4));
    x86::Regs regs;
    regs.rcx = count;
    regs.rdi = offset;
    x86::set_regs(vcpu(), regs);
  });
}

void TestMachine::load_irq_guest(uint32_t gsi) {
  if (gsi >= 8 || gsi == 2) throw std::invalid_argument("x86 irq guest: GSI must be a master-PIC line other than 2");
  on_vcpu_thread([&] {
    load(guest_code(x86_guest_irq, x86_guest_irq_end), kLoadIp);
    x86::setup_real_mode(vcpu(), 0, kLoadIp);
    x86::Regs regs;
    regs.rsi = gsi;
    x86::set_regs(vcpu(), regs);
  });
}

uint64_t TestMachine::expected_irq_report(uint32_t gsi) { return 1u << gsi; }

void TestMachine::pulse_irq_line(uint32_t gsi) {
  vm_->irq_line(gsi, true);
  vm_->irq_line(gsi, false);
}

}  // namespace kvmmio::test
