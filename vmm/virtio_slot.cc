// VirtioSlot and the device factories that use it.
#include "vmm/virtio_slot.h"

#include "kvmmio/console/virtio_console.h"
#include "kvmmio/net/virtio_net.h"
#include "vmm/device_stats.h"

namespace kvmmio::vmm {

VirtioSlot::VirtioSlot(DeviceContext& ctx, const std::string& name,
                       std::unique_ptr<virtio::VirtioDevice> device, const virtio::TransportOptions& options)
    : irq_(ctx.vm, ctx.slot.spi), notify_fds_(ctx.vm), device_(std::move(device)) {
  transport_ = std::make_unique<virtio::MmioTransport>(
      *device_,
      virtio::TransportEnv{.memory = ctx.vm.memory(), .irq = irq_.event(), .base = ctx.slot.base,
                           .notify_fds = &notify_fds_, .loop = &ctx.loop, .name = name},
      options);
}

VirtioSlot::~VirtioSlot() = default;

Counters VirtioSlot::counters() const {
  return virtio_counters(transport_->counters(),
                         slot_settings(transport_->options(), transport_->notify_mode()));
}

DeviceFactory virtio_net_factory(const net::NetOptions& options, unsigned index) {
  return [options, index](DeviceContext& ctx) {
    auto device = std::make_unique<net::VirtioNet>(options, index, ctx.vm.memory(), ctx.loop);
    net::VirtioNet* net = device.get();
    auto slot = std::make_unique<VirtioSlot>(ctx, "net" + std::to_string(index), std::move(device),
                                             options.transport);
    VirtioSlot* s = slot.get();
    AttachedDevice attached;
    attached.device = std::move(slot);
    attached.counters = [s, net] {
      Counters c = s->counters();
      add_net_counters(c, net->uses_vhost(), net->guest_errors(), net->counters());
      return c;
    };
    return attached;
  };
}

DeviceFactory virtio_console_factory(const virtio::TransportOptions& options, int output_fd) {
  return [options, output_fd](DeviceContext& ctx) {
    auto device = std::make_unique<console::VirtioConsole>(ctx.vm.memory(), ctx.loop, output_fd);
    console::VirtioConsole* con = device.get();
    auto slot = std::make_unique<VirtioSlot>(ctx, "console0", std::move(device), options);
    VirtioSlot* s = slot.get();
    AttachedDevice attached;
    attached.device = std::move(slot);
    attached.console_input = con;
    attached.counters = [s, con] {
      Counters c = s->counters();
      add_console_counters(c, con->guest_errors(), con->counters());
      return c;
    };
    return attached;
  };
}

}  // namespace kvmmio::vmm
