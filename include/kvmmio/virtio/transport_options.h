// SPDX-License-Identifier: BSD-2-Clause
// TransportOptions: how one virtio-mmio transport presents its device and
// moves notifies and interrupts: the option words version=, notify=, irq=
// and regs= of the VMM's --net and --console virtio (docs/usage.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {

enum class NotifyMode { kIoEventFd, kTrap };
enum class IrqMode { kIrqFd, kRelay };
// kMirror: the transport keeps a RegisterMirror page the VMM maps read-only
// over the register window, so guest reads do not exit; kTrap: every
// register access is an MMIO exit. The library's default is kTrap, which
// asks nothing of an embedder; the kvmmio VMM defaults to kMirror.
enum class RegsMode { kMirror, kTrap };

struct TransportOptions {
  uint32_t version = kVersionModern;  // 1: legacy register layout, 2: modern
  NotifyMode notify = NotifyMode::kIoEventFd;
  IrqMode irq = IrqMode::kIrqFd;
  RegsMode regs = RegsMode::kTrap;

  // Applies one option: version=1|2, notify=ioeventfd|trap, irq=irqfd|relay,
  // regs=mirror|trap.
  // Throws UserError naming the accepted values.
  void set(std::string_view key, std::string_view value);
};

}  // namespace kvmmio::virtio
