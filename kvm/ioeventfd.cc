// SPDX-License-Identifier: BSD-2-Clause
// IoEventFd: RAII assignment of a KVM ioeventfd.
#include "kvmmio/ioeventfd.h"

#include "kvmmio/base/log.h"

namespace kvmmio {

IoEventFd::IoEventFd(Vm& vm, const IoEventSpec& spec) : vm_(&vm), spec_(spec) {
  vm.assign_ioeventfd(spec_, event_.fd());
  assigned_ = true;
}

IoEventFd::IoEventFd(IoEventFd&& other) noexcept
    : vm_(other.vm_), spec_(other.spec_), event_(std::move(other.event_)),
      assigned_(std::exchange(other.assigned_, false)) {}

IoEventFd::~IoEventFd() {
  if (!assigned_) return;
  try {
    vm_->deassign_ioeventfd(spec_, event_.fd());
  } catch (const std::exception& e) {
    KVMMIO_LOG_ERROR("ioeventfd deassign at 0x%llx: %s",
                     static_cast<unsigned long long>(spec_.addr), e.what());
  }
}

}  // namespace kvmmio
