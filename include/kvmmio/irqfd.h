// SPDX-License-Identifier: BSD-2-Clause
// IrqFd: an eventfd that raises a GSI in the in-kernel interrupt controller
// when written, with no VMM involvement. Assigned on construction (queued by
// the Vm until the irqchip is ready), deassigned on destruction.
//
// With a resamplefd (level-triggered lines), KVM signals it when the guest
// EOIs, so the source can re-assert if still pending.
#pragma once

#include <cstdint>
#include <optional>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/export.h"
#include "kvmmio/vm.h"

namespace kvmmio {

class KVMMIO_EXPORT IrqFd {
 public:
  IrqFd(Vm& vm, uint32_t gsi, bool with_resample = false);
  ~IrqFd();
  IrqFd(const IrqFd&) = delete;
  IrqFd& operator=(const IrqFd&) = delete;

  uint32_t gsi() const { return gsi_; }
  EventFd& event() { return event_; }
  int fd() const { return event_.fd(); }
  // Raises the interrupt (what vhost does by writing its call fd).
  void trigger() { event_.signal(1); }
  EventFd* resample() { return resample_ ? &*resample_ : nullptr; }

 private:
  Vm& vm_;
  uint32_t gsi_;
  EventFd event_;
  std::optional<EventFd> resample_;
};

}  // namespace kvmmio
