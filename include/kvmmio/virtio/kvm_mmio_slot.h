// SPDX-License-Identifier: BSD-2-Clause
// KvmMmioSlot: one virtio-mmio device on a KVM VM, wired as the kvmmio VMM
// wires each of its own: the device's interrupt as an irqfd, KVM ioeventfds
// for its queue notifies, the MmioTransport in front of the device, and with
// regs=mirror (the default) the transport's RegisterMirror page mapped
// read-only over the register window plus an ioeventfd that takes the
// guest's InterruptACK of used buffers in the kernel. With vhost writing the
// irqfd, a guest interrupt then costs no vCPU exit: the handler's
// InterruptStatus read is a memory load, its ACK never leaves the kernel
// (docs/embedding.md, "The register mirror").
//
// Where KVM lacks KVM_CAP_READONLY_MEM the slot uses regs=trap instead and
// says so once per process. The caller claims transport() on the MMIO bus
// its vCPUs dispatch to, at the slot's base, for MmioTransport::window_size():
// the accesses that still exit arrive there.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/export.h"
#include "kvmmio/ioeventfd.h"
#include "kvmmio/irqfd.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "kvmmio/virtio/notify_fd_source.h"
#include "kvmmio/virtio/transport_options.h"
#include "kvmmio/virtio/virtio_device.h"
#include "kvmmio/vm.h"

namespace kvmmio::virtio {

// What the slot does with the regs= the caller asked for: regs=mirror needs
// read-only memory slots (KVM_CAP_READONLY_MEM) and falls back to regs=trap
// without them; regs=trap stays.
KVMMIO_EXPORT RegsMode usable_regs_mode(RegsMode asked, bool readonly_slots);

struct KVMMIO_EXPORT KvmMmioSlotConfig {
  // Guest physical address of the register window. With regs=mirror it
  // starts a host page that holds no other device (the mirror maps the
  // whole page).
  uint64_t base = 0;
  // The device's interrupt. On arm64 GSI n is SPI n, edge-rising in the
  // device tree; the Vm queues the irqfd until the vGIC is initialised.
  uint32_t gsi = 0;
  std::string name = "virtio-mmio";  // names the device in messages
  TransportOptions options = {};
};

class KVMMIO_EXPORT KvmMmioSlot {
 public:
  // `vm`, `device` and `loop` outlive the slot. Throws what MmioTransport's
  // constructor throws, and std::system_error when KVM refuses the irqfd,
  // the read-only slot or the ACK ioeventfd.
  KvmMmioSlot(Vm& vm, VirtioDevice& device, EventLoop& loop, const KvmMmioSlotConfig& config);
  ~KvmMmioSlot();
  KvmMmioSlot(const KvmMmioSlot&) = delete;
  KvmMmioSlot& operator=(const KvmMmioSlot&) = delete;

  // What to claim on the MMIO bus; its options() say the regs= in effect.
  MmioTransport& transport() { return transport_; }
  const MmioTransport& transport() const { return transport_; }
  IrqFd& irqfd() { return irq_; }
  // The register mirror is mapped: guest register reads do not exit.
  bool mirror_mapped() const { return static_cast<bool>(mirror_slot_); }
  // InterruptACK writes of the used-buffer bit the kernel took without an
  // exit, since the slot was made (0 without the mirror). Nobody polls the
  // ACK ioeventfd: this reads its counter.
  uint64_t interrupt_acks_in_kernel() const;

 private:
  IrqFd irq_;
  IoEventFdSource notify_fds_;
  MmioTransport transport_;
  // After the transport, so they go before the mirror page it owns.
  ReadOnlySlot mirror_slot_;
  mutable std::optional<IoEventFd> ack_fd_;  // read (and cleared) by interrupt_acks_in_kernel()
  mutable std::mutex ack_mutex_;
  mutable uint64_t acks_in_kernel_ = 0;  // the ACK fd's counter, read so far
};

}  // namespace kvmmio::virtio
