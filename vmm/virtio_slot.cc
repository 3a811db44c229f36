// VirtioSlot and the device factories that use it.
#include "vmm/virtio_slot.h"

#include "kvmmio/console/virtio_console.h"
#include "kvmmio/net/virtio_net.h"

namespace kvmmio::vmm {

VirtioSlot::VirtioSlot(DeviceContext& ctx, const std::string& name,
                       std::unique_ptr<virtio::VirtioDevice> device, const virtio::TransportOptions& options)
    : irq_(ctx.vm, ctx.slot.spi), kicks_(ctx.vm), device_(std::move(device)) {
  transport_ = std::make_unique<virtio::MmioTransport>(
      *device_,
      virtio::TransportEnv{.memory = ctx.vm.memory(), .irq = irq_.event(), .base = ctx.slot.base,
                           .kicks = &kicks_, .loop = &ctx.loop, .name = name},
      options);
}

VirtioSlot::~VirtioSlot() = default;

Counters VirtioSlot::counters() const {
  const virtio::TransportCounters& c = transport_->counters();
  return {{"guest_errors", c.guest_errors.load()},
          {"notifies_trapped", c.notifies_trapped.load()},
          {"notifies_polled", c.notifies_polled.load()},
          {"interrupts_injected", c.interrupts_injected.load()},
          {"interrupts_relayed", c.interrupts_relayed.load()},
          {"config_interrupts", c.config_interrupts.load()},
          {"needs_reset", c.needs_reset.load()},
          {"transport_version", transport_->options().version},
          {"notify_ioeventfd", transport_->notify_mode() == virtio::NotifyMode::kIoEventFd},
          {"irq_relay", transport_->options().irq == virtio::IrqMode::kRelay}};
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
      const net::NetCounters& n = net->counters();
      c.insert(c.end(), {{"vhost", net->uses_vhost()},
                         {"tx_packets", n.tx_packets.load()},
                         {"tx_bytes", n.tx_bytes.load()},
                         {"rx_packets", n.rx_packets.load()},
                         {"rx_bytes", n.rx_bytes.load()},
                         {"rx_dropped", n.rx_dropped.load()},
                         {"rx_stalls", n.rx_stalls.load()},
                         {"tap_errors", n.tap_errors.load()},
                         {"tap_down", n.tap_down.load()},
                         {"tap_up", n.tap_up.load()},
                         {"tap_removed", n.tap_removed.load()},
                         {"tap_reattached", n.tap_reattached.load()},
                         {"vhost_errors", n.vhost_errors.load()},
                         {"ctrl_commands", n.ctrl_commands.load()},
                         {"activations", n.activations.load()}});
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
      // One guest_errors per device: the transport's and the device's own.
      for (auto& [key, value] : c)
        if (key == "guest_errors") value += con->guest_errors();
      const console::ConsoleCounters& n = con->counters();
      c.insert(c.end(), {{"tx_bytes", n.tx_bytes.load()},
                         {"rx_bytes", n.rx_bytes.load()},
                         {"tx_stalls", n.tx_stalls.load()},
                         {"rx_waits", n.rx_waits.load()},
                         {"output_dropped", n.output_dropped.load()},
                         {"activations", n.activations.load()}});
      return c;
    };
    return attached;
  };
}

}  // namespace kvmmio::vmm
