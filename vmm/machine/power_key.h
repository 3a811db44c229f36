// SPDX-License-Identifier: BSD-2-Clause
// PowerKey: the guest's power button, a PL061 input pin that the device
// tree's gpio-keys node names KEY_POWER (device_tree.h). press() drives
// the pin high and, kPressed later, low again: a press and a release, as
// a finger would, so the guest's gpio-keys driver (which debounces for a
// few ms, then reads the pin) reports KEY_POWER down and up. QEMU's virt
// machine holds its key for 100 ms as well. What the guest does with the
// key is its business: systemd-logind powers off; a busybox init needs a
// handler.
//
// The release is a timerfd on the given event loop (the control thread),
// created here, before the seccomp filters; press() again while pressed
// only moves the release.
#pragma once

#include <chrono>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/gpio/pl061.h"

namespace kvmmio::vmm {

class PowerKey {
 public:
  static constexpr std::chrono::milliseconds kPressed{100};

  PowerKey(gpio::Pl061& gpio, unsigned pin, EventLoop& loop);
  ~PowerKey();
  PowerKey(const PowerKey&) = delete;
  PowerKey& operator=(const PowerKey&) = delete;

  void press();

 private:
  void release();

  gpio::Pl061& gpio_;
  unsigned pin_;
  UniqueFd timer_;
  EventLoop::Registration watch_;  // last: dropped first
};

}  // namespace kvmmio::vmm
