// SPDX-License-Identifier: BSD-2-Clause
// TransportOptions::set: the per-device option words of the VMM.
#include "kvmmio/virtio/transport_options.h"

#include <string>

#include "kvmmio/base/error.h"

namespace kvmmio::virtio {

void TransportOptions::set(std::string_view key, std::string_view value) {
  const std::string k(key), v(value);
  if (key == "version") {
    if (value == "1") version = kVersionLegacy;
    else if (value == "2") version = kVersionModern;
    else throw UserError("virtio-mmio option version=" + v + ": use version=1 (legacy) or version=2");
  } else if (key == "notify") {
    if (value == "ioeventfd") notify = NotifyMode::kIoEventFd;
    else if (value == "trap") notify = NotifyMode::kTrap;
    else throw UserError("virtio-mmio option notify=" + v + ": use notify=ioeventfd or notify=trap");
  } else if (key == "irq") {
    if (value == "irqfd") irq = IrqMode::kIrqFd;
    else if (value == "relay") irq = IrqMode::kRelay;
    else throw UserError("virtio-mmio option irq=" + v + ": use irq=irqfd or irq=relay");
  } else if (key == "regs") {
    if (value == "mirror") regs = RegsMode::kMirror;
    else if (value == "trap") regs = RegsMode::kTrap;
    else throw UserError("virtio-mmio option regs=" + v + ": use regs=mirror or regs=trap");
  } else if (key == "event_idx") {
    if (value == "on") event_idx = true;
    else if (value == "off") event_idx = false;
    else throw UserError("virtio-mmio option event_idx=" + v + ": use event_idx=on or event_idx=off");
  } else {
    throw UserError("unknown virtio-mmio option " + k + ": the options are version=1|2, "
                    "notify=ioeventfd|trap, irq=irqfd|relay, regs=mirror|trap, event_idx=on|off");
  }
}

}  // namespace kvmmio::virtio
