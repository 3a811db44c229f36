// SPDX-License-Identifier: BSD-2-Clause
// VirtioSlot: one virtio-mmio slot of the machine, owning everything a
// virtio device needs there: its edge-triggered SPI as an irqfd, KVM
// ioeventfds for its queue notifies, the device model and the
// transport in front of it, and with regs=mirror the transport's register
// mirror mapped read-only over the window plus the ioeventfd that takes the
// guest's InterruptACK of used buffers in the kernel. The machine claims it
// on the MMIO bus, where the writes that still exit arrive.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kvmmio/ioeventfd.h"
#include "kvmmio/irqfd.h"
#include "kvmmio/virtio/notify_fd_source.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "vmm/machine.h"
#include "vmm/stats.h"

namespace kvmmio::vmm {

class VirtioSlot final : public MmioDevice {
 public:
  VirtioSlot(DeviceContext& ctx, const std::string& name, std::unique_ptr<virtio::VirtioDevice> device,
             const virtio::TransportOptions& options);
  ~VirtioSlot() override;

  void mmio_read(uint64_t offset, std::span<uint8_t> data) override { transport_->mmio_read(offset, data); }
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override {
    transport_->mmio_write(offset, data);
  }

  virtio::VirtioDevice& device() { return *device_; }
  virtio::MmioTransport& transport() { return *transport_; }
  // The transport's counters, then the device's, for --stats.
  Counters counters() const;

 private:
  IrqFd irq_;
  virtio::IoEventFdSource notify_fds_;
  std::unique_ptr<virtio::VirtioDevice> device_;
  std::unique_ptr<virtio::MmioTransport> transport_;
  // regs=mirror; after the transport, so they go before its mirror page.
  ReadOnlySlot mirror_slot_;
  mutable std::optional<IoEventFd> ack_fd_;  // read (and cleared) by counters()
  mutable std::mutex ack_mutex_;
  mutable uint64_t acks_in_kernel_ = 0;  // the ack fd's counter, read so far
};

// Makes the device a slot will hold; may fill in `attached` (the console
// input) beside what the slot factory fills in.
using DeviceMaker = std::function<std::unique_ptr<virtio::VirtioDevice>(DeviceContext& ctx, AttachedDevice& attached)>;

// The one factory of virtio slots: `make`'s device behind a transport with
// `options`, its counters (transport's, then device's) for --stats.
DeviceFactory virtio_slot_factory(std::string name, const virtio::TransportOptions& options, DeviceMaker make);

// The factory that puts a virtio-net device described by `options` in a slot.
DeviceFactory virtio_net_factory(const net::NetOptions& options, unsigned index);

// The factory that puts the virtio console in a slot: guest output to
// `output_fd`, and the machine's console input (AttachedDevice::console_input).
DeviceFactory virtio_console_factory(const virtio::TransportOptions& options, int output_fd);

}  // namespace kvmmio::vmm
