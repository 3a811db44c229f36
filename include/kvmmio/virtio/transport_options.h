// SPDX-License-Identifier: BSD-2-Clause
// TransportOptions: how one virtio-mmio transport presents its device and
// moves notifies and interrupts: the option words version=, notify= and
// irq= of the VMM's --net and --console virtio (docs/usage.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {

enum class NotifyMode { kIoEventFd, kTrap };
enum class IrqMode { kIrqFd, kRelay };

struct TransportOptions {
  uint32_t version = kVersionModern;  // 1: legacy register layout, 2: modern
  NotifyMode notify = NotifyMode::kIoEventFd;
  IrqMode irq = IrqMode::kIrqFd;

  // Applies one option: version=1|2, notify=ioeventfd|trap, irq=irqfd|relay.
  // Throws UserError naming the accepted values.
  void set(std::string_view key, std::string_view value);
};

}  // namespace kvmmio::virtio
