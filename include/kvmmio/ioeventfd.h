// SPDX-License-Identifier: BSD-2-Clause
// IoEventFd: an eventfd that KVM signals instead of exiting to userspace when
// the guest writes a matching value to an address. Assigned on construction,
// deassigned on destruction (RAII).
//
// The typed factory derives the access length from the datamatch type, so a
// 4-byte QueueNotify register cannot be registered with a wrong length.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/export.h"
#include "kvmmio/vm.h"

namespace kvmmio {

class KVMMIO_EXPORT IoEventFd {
 public:
  IoEventFd(Vm& vm, const IoEventSpec& spec);
  ~IoEventFd();
  IoEventFd(const IoEventFd&) = delete;
  IoEventFd& operator=(const IoEventFd&) = delete;

  // Matches `sizeof(T)`-byte MMIO writes of exactly `value` at `addr`.
  template <typename T>
  static IoEventFd mmio_datamatch(Vm& vm, uint64_t addr, T value) {
    static_assert(std::is_unsigned_v<T> && sizeof(T) <= 8);
    return IoEventFd(vm, IoEventSpec{addr, sizeof(T), true, value, false});
  }
  // Matches any `sizeof(T)`-byte MMIO write at `addr`.
  template <typename T>
  static IoEventFd mmio_any(Vm& vm, uint64_t addr) {
    static_assert(std::is_unsigned_v<T> && sizeof(T) <= 8);
    return IoEventFd(vm, IoEventSpec{addr, sizeof(T), false, 0, false});
  }

  IoEventFd(IoEventFd&& other) noexcept;

  const IoEventSpec& spec() const { return spec_; }
  EventFd& event() { return event_; }
  int fd() const { return event_.fd(); }

 private:
  Vm* vm_;
  IoEventSpec spec_;
  EventFd event_;
  bool assigned_ = false;
};

}  // namespace kvmmio
