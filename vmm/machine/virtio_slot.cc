// SPDX-License-Identifier: BSD-2-Clause
// VirtioSlot and the device factories that use it.
#include "vmm/machine/virtio_slot.h"

#include <chrono>
#include <stdexcept>

#include "kvmmio/base/log.h"
#include "kvmmio/block/virtio_blk.h"
#include "kvmmio/console/virtio_console.h"
#include "kvmmio/fs/virtio_fs.h"
#include "kvmmio/net/vhost_user_net.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/rng/virtio_rng.h"
#include "kvmmio/vsock/virtio_vsock.h"
#include "vmm/stats/device_stats.h"
#include "vmm/process/unix_socket.h"
#include "vmm/control/control_client.h"

namespace kvmmio::vmm {

VirtioSlot::VirtioSlot(DeviceContext& ctx, const std::string& name,
                       std::unique_ptr<virtio::VirtioDevice> device, const virtio::TransportOptions& options)
    : device_(std::move(device)),
      slot_(ctx.vm, *device_, ctx.loop,
            {.base = ctx.slot.base, .gsi = ctx.slot.spi, .name = name, .options = options}) {}

VirtioSlot::~VirtioSlot() = default;

Counters VirtioSlot::counters() const {
  SlotKernelCounters kernel;
  kernel.interrupt_acks_in_kernel = slot_.interrupt_acks_in_kernel();
  const virtio::MmioTransport& transport = slot_.transport();
  return virtio_counters(transport.counters(), kernel,
                         slot_settings(transport.options(), transport.notify_mode(), slot_.mirror_mapped()),
                         *device_);
}

DeviceFactory virtio_slot_factory(std::string name, const virtio::TransportOptions& options, DeviceMaker make) {
  return [name = std::move(name), options, make = std::move(make)](DeviceContext& ctx) {
    AttachedDevice attached;
    auto slot = std::make_unique<VirtioSlot>(ctx, name, make(ctx, attached), options);
    VirtioSlot* s = slot.get();
    attached.device = std::move(slot);
    attached.counters = [s] { return s->counters(); };
    attached.reset = [s] { s->transport().reset(); };
    return attached;
  };
}

namespace {

// Which MAC the guest sees, so it can be matched with the bridge's table
// and a DHCP server's leases.
void log_mac(unsigned index, const net::NetOptions& options) {
  const bool user = !options.vhost_user.empty();
  KVMMIO_LOG_INFO("net%u: %s %s, MAC %s%s", index, user ? "vhost-user backend" : "tap",
                  (user ? options.vhost_user : options.tap).c_str(), net::mac_text(options.effective_mac()).c_str(),
                  options.mac ? "" : user ? " (derived from the socket's path)" : " (derived from the tap's name)");
}

// A vhost-user device's start, the same for every backend: its socket
// connected by the user-path rules (`start_hint`, the backend's command,
// when nothing listens), then `make` builds the device on that front end;
// a backend that fails the first exchanges is the user's error, named by
// the option (`shown`).
template <class Make>
auto with_vhost_user_backend(const std::string& path, const std::string& shown, const std::string& start_hint,
                             std::chrono::milliseconds reply_timeout, Make make) {
  UniqueFd socket = connect_user_socket(path, shown, start_hint);
  try {
    return make(vhost::VhostUserFrontend(std::move(socket), path, reply_timeout));
  } catch (const std::runtime_error& e) {
    throw UserError(shown + ": " + e.what());
  }
}

// --net vhost-user=PATH: the socket connected by the user-path rules, the
// backend asked for its features.
std::unique_ptr<virtio::VirtioDevice> vhost_user_net(const net::NetOptions& options, DeviceContext& ctx) {
  return with_vhost_user_backend(
      options.vhost_user, "--net vhost-user=" + options.vhost_user,
      "start the backend first, e.g. dpdk-testpmd --vdev 'net_vhost0,iface=" + options.vhost_user + "' ...",
      options.reply_timeout, [&](vhost::VhostUserFrontend frontend) -> std::unique_ptr<virtio::VirtioDevice> {
        return std::make_unique<net::VhostUserNet>(options.effective_mac(), std::move(frontend), ctx.vm.memory(),
                                                   ctx.loop);
      });
}

}  // namespace

DeviceFactory virtio_net_factory(const net::NetOptions& options, unsigned index) {
  return virtio_slot_factory("net" + std::to_string(index), options.transport,
                             [options, index](DeviceContext& ctx, AttachedDevice&) {
                               std::unique_ptr<virtio::VirtioDevice> net;
                               if (options.vhost_user.empty())
                                 net = std::make_unique<net::VirtioNet>(options, ctx.vm.memory(), ctx.loop);
                               else
                                 net = vhost_user_net(options, ctx);
                               log_mac(index, options);
                               return net;
                             });
}

DeviceFactory virtio_block_factory(const block::DiskOptions& options, unsigned index) {
  return virtio_slot_factory(
      "disk" + std::to_string(index), options.transport, [options, index](DeviceContext& ctx, AttachedDevice& attached) {
        block::BlockDeviceOptions device;
        device.serial = options.serial;
        device.thread_name = "kvmmio-blk" + std::to_string(index);
        device.on_io_thread_start = ctx.confine_block_io;
        device.on_uring_thread_start = ctx.confine_block_uring;
        device.engine = options.engine;
        // Decided once, by the command line (options.cc: one per vCPU
        // unless queues= says otherwise); a disk without it is a bug there.
        if (!options.queues)
          throw std::logic_error("disk" + std::to_string(index) + ": its queue count was not decided");
        device.queues = *options.queues;
        auto disk = std::make_unique<block::VirtioBlock>(ctx.vm.memory(), ctx.loop,
                                                         block::DiskImage::open(options), std::move(device));
        // A reset leaves the requests already running to end off the lock;
        // a reboot waits for them before guest RAM is emptied and reloaded.
        attached.quiesced = [d = disk.get()] { return d->requests_in_flight() == 0; };
        return disk;
      });
}

DeviceFactory virtio_console_factory(const virtio::TransportOptions& options, int output_fd) {
  return virtio_slot_factory("console0", options, [output_fd](DeviceContext& ctx, AttachedDevice& attached) {
    auto device = std::make_unique<console::VirtioConsole>(ctx.vm.memory(), ctx.loop, output_fd);
    attached.console_input = device.get();
    return device;
  });
}

DeviceFactory virtio_vsock_factory(const vsock::VsockOptions& options, const std::string& vm_name) {
  return virtio_slot_factory("vsock0", virtio::TransportOptions{},
                             [options, vm_name](DeviceContext& ctx, AttachedDevice&) {
                               try {
                                 return std::make_unique<vsock::VirtioVsock>(options, ctx.vm.memory(), ctx.loop);
                               } catch (const vsock::CidInUse& e) {
                                 // The kernel does not say who holds it; a
                                 // named kvmmio says so in its info.
                                 const std::optional<std::string> holder = vm_holding_cid(options.cid, vm_name);
                                 if (!holder)
                                   throw UserError("--vsock cid=" + std::to_string(options.cid) + ": " + e.what());
                                 throw UserError("vsock: CID " + std::to_string(options.cid) +
                                                 " is in use by the VM " + *holder + " (kvmmio list shows it); "
                                                 "give this VM another CID, or stop that one (kvmmio stop " +
                                                 *holder + ")");
                               }
                             });
}

DeviceFactory virtio_fs_factory(const fs::FsOptions& options, unsigned index) {
  return [options, index](DeviceContext& ctx) {
    std::unique_ptr<fs::VirtioFs> device = with_vhost_user_backend(
        options.socket, "--fs tag=" + options.tag + ",socket=" + options.socket,
        "start the backend first, e.g. virtiofsd --socket-path=" + options.socket + " --shared-dir DIR",
        options.reply_timeout, [&](vhost::VhostUserFrontend frontend) {
          return std::make_unique<fs::VirtioFs>(options, std::move(frontend), ctx.vm.memory(), ctx.loop);
        });
    KVMMIO_LOG_INFO("fs%u: tag %s, vhost-user backend %s", index, options.tag.c_str(), options.socket.c_str());
    return virtio_slot_factory("fs" + std::to_string(index), virtio::TransportOptions{},
                               [&device](DeviceContext&, AttachedDevice&) { return std::move(device); })(ctx);
  };
}

DeviceFactory virtio_rng_factory() {
  return virtio_slot_factory("rng0", virtio::TransportOptions{}, [](DeviceContext& ctx, AttachedDevice&) {
    return std::make_unique<rng::VirtioRng>(ctx.vm.memory(), ctx.loop);
  });
}

}  // namespace kvmmio::vmm
