// SPDX-License-Identifier: BSD-2-Clause
// The virtio-mmio transport's keys of --net, --disk and --console virtio.
#include <string>

#include "kvmmio/base/error.h"
#include "vmm/cli/device_specs.h"

namespace kvmmio::vmm {

using virtio::IrqMode;
using virtio::NotifyMode;
using virtio::RegsMode;

void set_transport_key(virtio::TransportOptions& t, std::string_view key, std::string_view value) {
  const std::string k(key), v(value);
  if (key == "version") {
    if (value == "1") t.version = virtio::kVersionLegacy;
    else if (value == "2") t.version = virtio::kVersionModern;
    else throw UserError("virtio-mmio option version=" + v + ": use version=1 (legacy) or version=2");
  } else if (key == "notify") {
    if (value == "ioeventfd") t.notify = NotifyMode::kIoEventFd;
    else if (value == "trap") t.notify = NotifyMode::kTrap;
    else throw UserError("virtio-mmio option notify=" + v + ": use notify=ioeventfd or notify=trap");
  } else if (key == "irq") {
    if (value == "irqfd") t.irq = IrqMode::kIrqFd;
    else if (value == "relay") t.irq = IrqMode::kRelay;
    else throw UserError("virtio-mmio option irq=" + v + ": use irq=irqfd or irq=relay");
  } else if (key == "regs") {
    if (value == "mirror") t.regs = RegsMode::kMirror;
    else if (value == "trap") t.regs = RegsMode::kTrap;
    else throw UserError("virtio-mmio option regs=" + v + ": use regs=mirror or regs=trap");
  } else if (key == "event_idx") {
    if (value == "on") t.event_idx = true;
    else if (value == "off") t.event_idx = false;
    else throw UserError("virtio-mmio option event_idx=" + v + ": use event_idx=on or event_idx=off");
  } else {
    throw UserError("unknown virtio-mmio option " + k + ": the options are version=1|2, "
                    "notify=ioeventfd|trap, irq=irqfd|relay, regs=mirror|trap, event_idx=on|off");
  }
}

}  // namespace kvmmio::vmm
