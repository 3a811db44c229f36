// SPDX-License-Identifier: BSD-2-Clause
// ConsoleInputSink: a guest-facing device that takes host console input
// (the PL011's RX FIFO, virtio-console's receiveq). The VMM's console input
// (vmm/console/console.h) feeds whichever device is the guest's console through it,
// so Ctrl-A escapes, raw mode and end-of-input handling exist once.
//
// Contract: receive() takes what fits now and returns that count; the
// caller keeps the rest (no input is dropped) and retries when the device
// calls the space callback, which it does after refusing input once the
// guest has made room.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "kvmmio/base/export.h"

namespace kvmmio {

class KVMMIO_EXPORT ConsoleInputSink {
 public:
  // Queues as many bytes as the guest has room for; returns that count.
  virtual size_t receive(std::span<const uint8_t> bytes) = 0;
  // `callback` runs when the guest made room after a receive() that did not
  // take everything. It may run on any thread and with device locks held,
  // so it must only signal (e.g. write an eventfd); an empty function
  // removes it.
  virtual void set_rx_space_callback(std::function<void()> callback) = 0;

 protected:
  ~ConsoleInputSink() = default;
};

}  // namespace kvmmio
