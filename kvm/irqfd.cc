// SPDX-License-Identifier: BSD-2-Clause
// IrqFd: RAII assignment of a KVM irqfd (optionally with a resamplefd).
#include "kvmmio/irqfd.h"

#include "kvmmio/base/log.h"

namespace kvmmio {

IrqFd::IrqFd(Vm& vm, uint32_t gsi, bool with_resample) : vm_(vm), gsi_(gsi) {
  if (with_resample) resample_.emplace();
  vm.assign_irqfd(gsi, event_.fd(), resample_ ? resample_->fd() : -1);
}

IrqFd::~IrqFd() {
  try {
    vm_.deassign_irqfd(gsi_, event_.fd());
  } catch (const std::exception& e) {
    KVMMIO_LOG_ERROR("irqfd deassign for GSI %u: %s", gsi_, e.what());
  }
}

}  // namespace kvmmio
