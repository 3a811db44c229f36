// SPDX-License-Identifier: BSD-2-Clause
// TransportOptions: how one virtio-mmio transport presents its device and
// moves notifies and interrupts (the kvmmio program's version=, notify=,
// irq=, regs= and event_idx= keys of --net, --disk and --console virtio:
// docs/usage.md).
#pragma once

#include <cstdint>

#include "kvmmio/base/export.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {

enum class NotifyMode { kIoEventFd, kTrap };
enum class IrqMode { kIrqFd, kRelay };
// kMirror: the transport keeps a RegisterMirror page for whoever builds it
// to map read-only over the register window, so guest reads do not exit,
// and it expects the guest's InterruptACK of used buffers to be taken by an
// ioeventfd (the used-buffer bit reads as set from DRIVER_OK on); kTrap:
// every register access is an MMIO exit. kMirror is the default: a
// KvmMmioSlot maps the page and assigns that ioeventfd, and uses kTrap
// where KVM lacks KVM_CAP_READONLY_MEM (kvm_mmio_slot.h). A transport built
// without a KvmMmioSlot that does neither wants kTrap.
enum class RegsMode { kMirror, kTrap };

struct KVMMIO_EXPORT TransportOptions {
  uint32_t version = kVersionModern;  // 1: legacy register layout, 2: modern
  NotifyMode notify = NotifyMode::kIoEventFd;
  IrqMode irq = IrqMode::kIrqFd;
  RegsMode regs = RegsMode::kMirror;
  // Offer VIRTIO_F_EVENT_IDX (2.7.10): the driver names the ring index at
  // which it wants its next interrupt or notify. Off, suppression is by the
  // rings' flags alone; a lever for measuring small packets (event_idx=off).
  bool event_idx = true;
};

}  // namespace kvmmio::virtio
