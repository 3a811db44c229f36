// SPDX-License-Identifier: BSD-2-Clause
// VirtioSlot: one virtio-mmio slot of the machine: the device model and the
// library's KvmMmioSlot in front of it (its SPI as an irqfd, the notify
// ioeventfds, the transport, and with regs=mirror the read-only register
// mirror and the InterruptACK ioeventfd). The machine claims it on the MMIO
// bus, where the accesses that still exit arrive; it reports the slot's
// counters for --stats.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kvmmio/virtio/kvm_mmio_slot.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "kvmmio/block/disk_options.h"
#include "kvmmio/fs/fs_options.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/vsock/vsock_options.h"
#include "vmm/machine/machine.h"
#include "vmm/stats/stats.h"

namespace kvmmio::vmm {

class VirtioSlot final : public MmioDevice {
 public:
  VirtioSlot(DeviceContext& ctx, const std::string& name, std::unique_ptr<virtio::VirtioDevice> device,
             const virtio::TransportOptions& options);
  ~VirtioSlot() override;

  void mmio_read(uint64_t offset, std::span<uint8_t> data) override { transport().mmio_read(offset, data); }
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override {
    transport().mmio_write(offset, data);
  }

  virtio::VirtioDevice& device() { return *device_; }
  virtio::MmioTransport& transport() { return slot_.transport(); }
  // The transport's counters, the kernel's, the slot's settings, then the
  // device's, for --stats.
  Counters counters() const;

 private:
  std::unique_ptr<virtio::VirtioDevice> device_;
  virtio::KvmMmioSlot slot_;  // after the device, which outlives its transport
};

// Makes the device a slot will hold; may fill in `attached` (the console
// input) beside what the slot factory fills in.
using DeviceMaker = std::function<std::unique_ptr<virtio::VirtioDevice>(DeviceContext& ctx, AttachedDevice& attached)>;

// The one factory of virtio slots: `make`'s device behind a transport with
// `options`, its counters (transport's, then device's) for --stats.
DeviceFactory virtio_slot_factory(std::string name, const virtio::TransportOptions& options, DeviceMaker make);

// The factory that puts a virtio-net device described by `options` in a slot.
DeviceFactory virtio_net_factory(const net::NetOptions& options, unsigned index);

// The factory that puts a virtio-blk disk in a slot: opens, checks and
// locks the image (UserError naming the fix), and confines the disk's I/O
// thread (DeviceContext::confine_block_io) when it starts working.
DeviceFactory virtio_block_factory(const block::DiskOptions& options, unsigned index);

// The factory that puts the virtio console in a slot: guest output to
// `output_fd`, and the machine's console input (AttachedDevice::console_input).
DeviceFactory virtio_console_factory(const virtio::TransportOptions& options, int output_fd);

// The factory that puts the vsock device (virtio-vsock over vhost-vsock)
// in a slot: binds the CID at once, so a CID in use is refused at start,
// naming the named VM (other than `vm_name`) that holds it where one says so.
DeviceFactory virtio_vsock_factory(const vsock::VsockOptions& options, const std::string& vm_name);

// The factory that puts a shared folder (virtio-fs over a vhost-user
// backend) in a slot: connects to the backend's socket at once, by the
// path rules (UserError naming the fix when nothing listens there), and
// starts the connection, so a missing or unfit backend stops the start-up.
DeviceFactory virtio_fs_factory(const fs::FsOptions& options, unsigned index);

// The factory that puts the entropy device (virtio-rng, its default rate
// bound) in a slot, with the transport's default options.
DeviceFactory virtio_rng_factory();

}  // namespace kvmmio::vmm
