// SPDX-License-Identifier: BSD-2-Clause
// x86-64 backend: only what the host-native tests of the development machine
// need: the in-kernel irqchip (PIC + IOAPIC + LAPIC) with KVM's default GSI
// routes kept in the VM's table, and a real-mode start state.
#pragma once

#include <cstdint>

namespace kvmmio {
class Vm;
class Vcpu;
}  // namespace kvmmio

namespace kvmmio::x86 {

// KVM_CREATE_IRQCHIP, seed the routing table with KVM's defaults (GSI 0-15
// to the PICs, 0-23 to the IOAPIC), mark the irqchip ready.
void create_irqchip(Vm& vm);

// Real mode: all segments based at 0 except CS = cs, IP = ip, flags = 0x2.
void setup_real_mode(Vcpu& vcpu, uint16_t cs, uint16_t ip);

// General-purpose register access for test guests (KVM_GET/SET_REGS).
struct Regs {
  uint64_t rax = 0, rbx = 0, rcx = 0, rdx = 0, rsi = 0, rdi = 0, rsp = 0;
};
void set_regs(Vcpu& vcpu, const Regs& regs);
// Sets a segment register's selector and base (selector << 4) in real mode.
enum class Seg { kEs, kDs, kSs };
void set_real_segment(Vcpu& vcpu, Seg seg, uint16_t selector);

}  // namespace kvmmio::x86
