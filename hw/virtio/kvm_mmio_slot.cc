// SPDX-License-Identifier: BSD-2-Clause
// KvmMmioSlot: the regs= decision against the VM's capabilities, then the
// irqfd, the notify ioeventfds, the transport and, with the mirror, its
// read-only slot and the InterruptACK ioeventfd.
#include "kvmmio/virtio/kvm_mmio_slot.h"

#include "kvmmio/base/log.h"

namespace kvmmio::virtio {
namespace {

// The options the transport gets: regs=mirror only where the VM can map
// the mirror, else regs=trap, said once per process (every slot of a VM
// falls back alike).
TransportOptions options_for(Vm& vm, const KvmMmioSlotConfig& config) {
  TransportOptions options = config.options;
  if (options.regs != RegsMode::kMirror) return options;
  options.regs = usable_regs_mode(options.regs, vm.supports_readonly_slots());
  if (options.regs != RegsMode::kMirror) {
    static std::once_flag told;
    std::call_once(told, [&] {
      KVMMIO_LOG_WARN("%s: KVM on this host lacks KVM_CAP_READONLY_MEM, so virtio register reads "
                      "cannot be served from a read-only mirror: using regs=trap (every read exits)",
                      config.name.c_str());
    });
  }
  return options;
}

ReadOnlySlot map_mirror(Vm& vm, const MmioTransport& transport) {
  const RegisterMirror* mirror = transport.mirror();
  return mirror ? vm.map_readonly(transport.base(), mirror->page()) : ReadOnlySlot{};
}

// The ACK of a used-buffer interrupt changes nothing the guest can read (the
// mirror keeps that bit set, mmio_interrupts.cc), so the kernel may take it.
// Any other ACK value (the config-change bit) still exits to the transport.
std::optional<IoEventFd> ack_fd_for(Vm& vm, const MmioTransport& transport) {
  if (!transport.mirror()) return std::nullopt;
  return IoEventFd::mmio_datamatch<uint32_t>(vm, transport.base() + reg::kInterruptAck, interrupt::kUsedBuffer);
}

}  // namespace

RegsMode usable_regs_mode(RegsMode asked, bool readonly_slots) {
  return asked == RegsMode::kMirror && !readonly_slots ? RegsMode::kTrap : asked;
}

KvmMmioSlot::KvmMmioSlot(Vm& vm, VirtioDevice& device, EventLoop& loop, const KvmMmioSlotConfig& config)
    : irq_(vm, config.gsi),
      notify_fds_(vm),
      transport_(device,
                 TransportEnv{.memory = vm.memory(), .irq = irq_.event(), .base = config.base,
                              .notify_fds = &notify_fds_, .loop = &loop, .name = config.name},
                 options_for(vm, config)),
      mirror_slot_(map_mirror(vm, transport_)),
      ack_fd_(ack_fd_for(vm, transport_)) {}

KvmMmioSlot::~KvmMmioSlot() = default;

uint64_t KvmMmioSlot::interrupt_acks_in_kernel() const {
  if (!ack_fd_) return 0;
  std::lock_guard guard(ack_mutex_);
  // take() reads and clears the eventfd's counter: the ACKs since the last read.
  acks_in_kernel_ += ack_fd_->event().take().value_or(0);
  return acks_in_kernel_;
}

}  // namespace kvmmio::virtio
