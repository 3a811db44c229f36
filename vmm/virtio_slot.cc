// SPDX-License-Identifier: BSD-2-Clause
// VirtioSlot and the device factories that use it.
#include "vmm/virtio_slot.h"

#include "kvmmio/base/log.h"
#include "kvmmio/console/virtio_console.h"
#include "kvmmio/net/virtio_net.h"
#include "vmm/device_stats.h"

namespace kvmmio::vmm {
namespace {

// regs=mirror needs read-only memory slots; without them the slot traps
// register reads as before, and says so once.
virtio::TransportOptions effective_options(Vm& vm, const std::string& name, virtio::TransportOptions options) {
  if (options.regs == virtio::RegsMode::kMirror && !vm.supports_readonly_slots()) {
    static std::once_flag told;
    std::call_once(told, [&] {
      KVMMIO_LOG_WARN("%s: KVM on this host lacks KVM_CAP_READONLY_MEM, so virtio register reads "
                      "cannot be served from a read-only mirror: using regs=trap (every read exits)",
                      name.c_str());
    });
    options.regs = virtio::RegsMode::kTrap;
  }
  return options;
}

}  // namespace

VirtioSlot::VirtioSlot(DeviceContext& ctx, const std::string& name,
                       std::unique_ptr<virtio::VirtioDevice> device, const virtio::TransportOptions& options)
    : irq_(ctx.vm, ctx.slot.spi), notify_fds_(ctx.vm), device_(std::move(device)) {
  transport_ = std::make_unique<virtio::MmioTransport>(
      *device_,
      virtio::TransportEnv{.memory = ctx.vm.memory(), .irq = irq_.event(), .base = ctx.slot.base,
                           .notify_fds = &notify_fds_, .loop = &ctx.loop, .name = name},
      effective_options(ctx.vm, name, options));
  if (const virtio::RegisterMirror* mirror = transport_->mirror()) {
    mirror_slot_ = ctx.vm.map_readonly(ctx.slot.base, mirror->page());
    // The ACK of a used-buffer interrupt changes nothing the guest can read
    // (the mirror keeps that bit set, mmio_interrupts.cc): the kernel may
    // take it. Any other ACK value (the config-change bit) still exits.
    ack_fd_.emplace(IoEventFd::mmio_datamatch<uint32_t>(ctx.vm, ctx.slot.base + virtio::reg::kInterruptAck,
                                                         virtio::interrupt::kUsedBuffer));
  }
}

VirtioSlot::~VirtioSlot() = default;

Counters VirtioSlot::counters() const {
  SlotKernelCounters kernel;
  if (ack_fd_) {
    std::lock_guard guard(ack_mutex_);
    // Nobody polls the ack fd: its counter is the number of ACKs since the
    // last read.
    acks_in_kernel_ += ack_fd_->event().take().value_or(0);
    kernel.interrupt_acks_in_kernel = acks_in_kernel_;
  }
  return virtio_counters(transport_->counters(), kernel,
                         slot_settings(transport_->options(), transport_->notify_mode(),
                                       transport_->mirror() != nullptr),
                         *device_);
}

DeviceFactory virtio_slot_factory(std::string name, const virtio::TransportOptions& options, DeviceMaker make) {
  return [name = std::move(name), options, make = std::move(make)](DeviceContext& ctx) {
    AttachedDevice attached;
    auto slot = std::make_unique<VirtioSlot>(ctx, name, make(ctx, attached), options);
    VirtioSlot* s = slot.get();
    attached.device = std::move(slot);
    attached.counters = [s] { return s->counters(); };
    return attached;
  };
}

DeviceFactory virtio_net_factory(const net::NetOptions& options, unsigned index) {
  return virtio_slot_factory("net" + std::to_string(index), options.transport,
                             [options, index](DeviceContext& ctx, AttachedDevice&) {
                               return std::make_unique<net::VirtioNet>(options, index, ctx.vm.memory(), ctx.loop);
                             });
}

DeviceFactory virtio_console_factory(const virtio::TransportOptions& options, int output_fd) {
  return virtio_slot_factory("console0", options, [output_fd](DeviceContext& ctx, AttachedDevice& attached) {
    auto device = std::make_unique<console::VirtioConsole>(ctx.vm.memory(), ctx.loop, output_fd);
    attached.console_input = device.get();
    return device;
  });
}

}  // namespace kvmmio::vmm
