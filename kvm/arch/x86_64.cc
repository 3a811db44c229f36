// SPDX-License-Identifier: BSD-2-Clause
// x86-64 support for host-native tests: in-kernel irqchip with KVM's default
// routes, real-mode start state, general registers.
#include "kvmmio/arch/x86_64.h"

#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "kvmmio/base/error.h"
#include "kvmmio/vcpu.h"
#include "kvmmio/vm.h"

namespace kvmmio::x86 {

void create_irqchip(Vm& vm) {
  if (::ioctl(vm.fd(), KVM_CREATE_IRQCHIP, 0) != 0) throw_errno("KVM_CREATE_IRQCHIP");
  // KVM's default table: GSI 0-15 on the PICs (not 2, the cascade), 0-23 on
  // the IOAPIC. It is ours to resend on every change.
  for (uint32_t gsi = 0; gsi < 16; ++gsi) {
    if (gsi == 2) continue;
    vm.routing().add_irqchip(gsi, gsi < 8 ? KVM_IRQCHIP_PIC_MASTER : KVM_IRQCHIP_PIC_SLAVE,
                             gsi % 8);
  }
  for (uint32_t gsi = 0; gsi < 24; ++gsi) vm.routing().add_irqchip(gsi, KVM_IRQCHIP_IOAPIC, gsi);
  vm.set_irqchip_ready();
}

void setup_real_mode(Vcpu& vcpu, uint16_t cs, uint16_t ip) {
  vcpu.complete_pending_io();
  kvm_sregs sregs{};
  if (::ioctl(vcpu.fd(), KVM_GET_SREGS, &sregs) != 0) throw_errno("KVM_GET_SREGS");
  for (kvm_segment* s : {&sregs.ds, &sregs.es, &sregs.fs, &sregs.gs, &sregs.ss}) {
    s->selector = 0;
    s->base = 0;
  }
  sregs.cs.selector = cs;
  sregs.cs.base = static_cast<uint64_t>(cs) << 4;
  if (::ioctl(vcpu.fd(), KVM_SET_SREGS, &sregs) != 0) throw_errno("KVM_SET_SREGS");
  kvm_regs regs{};
  regs.rip = ip;
  regs.rflags = 0x2;
  if (::ioctl(vcpu.fd(), KVM_SET_REGS, &regs) != 0) throw_errno("KVM_SET_REGS");
}

void set_regs(Vcpu& vcpu, const Regs& r) {
  vcpu.complete_pending_io();
  kvm_regs regs{};
  if (::ioctl(vcpu.fd(), KVM_GET_REGS, &regs) != 0) throw_errno("KVM_GET_REGS");
  regs.rax = r.rax;
  regs.rbx = r.rbx;
  regs.rcx = r.rcx;
  regs.rdx = r.rdx;
  regs.rsi = r.rsi;
  regs.rdi = r.rdi;
  regs.rsp = r.rsp;
  if (::ioctl(vcpu.fd(), KVM_SET_REGS, &regs) != 0) throw_errno("KVM_SET_REGS");
}

void set_real_segment(Vcpu& vcpu, Seg seg, uint16_t selector) {
  vcpu.complete_pending_io();
  kvm_sregs sregs{};
  if (::ioctl(vcpu.fd(), KVM_GET_SREGS, &sregs) != 0) throw_errno("KVM_GET_SREGS");
  kvm_segment* s = seg == Seg::kEs ? &sregs.es : seg == Seg::kDs ? &sregs.ds : &sregs.ss;
  s->selector = selector;
  s->base = static_cast<uint64_t>(selector) << 4;
  if (::ioctl(vcpu.fd(), KVM_SET_SREGS, &sregs) != 0) throw_errno("KVM_SET_SREGS");
}

}  // namespace kvmmio::x86
