// SPDX-License-Identifier: BSD-2-Clause
// PlatformDevices: the machine's fixed devices at their places in the
// memory map (memory_map_arm64.h), each on a level interrupt line through
// KVM_IRQ_LINE: the PL011 (the console's output, and its input unless a
// virtio-console takes it), the PL061 whose pin is the power key, and the
// PL031 real-time clock with its alarm. Also where the console input goes
// and the watch that feeds it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/console/input_sink.h"
#include "kvmmio/console/pl011.h"
#include "kvmmio/gpio/pl061.h"
#include "kvmmio/rtc/pl031.h"
#include "kvmmio/vm.h"
#include "vmm/console/console.h"
#include "vmm/machine/power_key.h"
#include "vmm/machine/rtc_alarm.h"
#include "vmm/stats/stats.h"

namespace kvmmio::vmm {

class PlatformDevices {
 public:
  // Claims the three devices' MMIO windows on `vm`'s bus; the power key's
  // press and the clock's alarm run on `control`. The UART writes to
  // `console_out`.
  PlatformDevices(Vm& vm, EventLoop& control, int console_out);
  PlatformDevices(const PlatformDevices&) = delete;
  PlatformDevices& operator=(const PlatformDevices&) = delete;

  // The console input goes to `sink` (a virtio-console) instead of the
  // UART; the UART still prints (earlycon). At most one device asks.
  void take_console_input(ConsoleInputSink& sink);
  // Feeds the console input from `fd` on `control`; `on_quit` runs on
  // Ctrl-A x where `escapes`.
  void start_console_input(EventLoop& control, int fd, bool escapes, std::function<void()> on_quit);
  // From now on a vCPU stuck writing to a stalled console gives up: the
  // machine stops.
  void stop_console_output() { console_out_.stop_waiting(); }
  // The guest is gone: no more console input.
  void stop_console_input() { console_in_.reset(); }

  PowerKey& power_key() { return *power_key_; }
  // Each device as at power-on: lines lowered, the clock's alarm
  // cancelled, the power key released.
  void reset();
  // The three devices' --stats entries: uart0, gpio0, rtc0.
  std::vector<DeviceStats> stats() const;

 private:
  ConsoleOutput console_out_;
  std::unique_ptr<console::Pl011> uart_;
  std::unique_ptr<gpio::Pl061> gpio_;
  std::unique_ptr<PowerKey> power_key_;  // on the control loop
  std::unique_ptr<rtc::Pl031> rtc_;
  std::unique_ptr<RtcAlarm> rtc_alarm_;  // on the control loop; after rtc_: dropped first
  ConsoleInputSink* console_sink_ = nullptr;  // the UART until a device takes the input
  std::unique_ptr<ConsoleInput> console_in_;
};

}  // namespace kvmmio::vmm
