// SPDX-License-Identifier: BSD-2-Clause
// TapSupervisor: what virtio-net does when its tap fails under it
// (docs/virtio-net.md, "Faults"). Internal to hw/net; VirtioNet makes one
// per activation (not for a socketpair stand-in, which has no interface).
//
// The guest learns of a tap fault through the link bit of the config space
// and a configuration-change interrupt (5.1.4: Linux turns its carrier off
// and on), so it stops sending into a dead tap and resumes when it works
// again. A removed tap is not created again by kvmmio (whoever removed it
// meant something); when an interface of that name appears, the supervisor
// attaches to it (reattach_tap(), also used at DRIVER_OK for an interface
// re-created while the device was reset), retrying every second while that
// fails. Events come from the event loop holding the device lock.
#pragma once

#include <functional>
#include <memory>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/tap_monitor.h"
#include "kvmmio/net/virtio_net.h"

namespace kvmmio::net {

// The one re-attach sequence: the tap's fds to the interface of its name,
// with the activation's vnet header size and offloads, its link up; counts
// tap_reattached. Throws what the tap's ioctls throw.
void reattach_tap(Tap& tap, int vnet_hdr_size, unsigned offloads, NetCounters& counters);

class TapSupervisor {
 public:
  struct Hooks {
    std::function<void(bool up)> guest_link;        // the link the guest sees should be `up`
    std::function<void(bool reattached)> restored;  // the backend may use the tap's fds again
  };
  // Starts watching; throws std::system_error if the tap's link cannot be watched.
  TapSupervisor(EventLoop& loop, DeviceLock& lock, Tap& tap, NetCounters& counters, unsigned queue_pairs,
                int vnet_hdr_size, unsigned offloads, Hooks hooks);

 private:
  void on_event(TapMonitor::Event event);

  Tap& tap_;
  NetCounters& counters_;
  unsigned queue_pairs_;
  int vnet_hdr_size_;  // TUNSETVNETHDRSZ, set again on re-attach
  unsigned offloads_;  // TUNSETOFFLOAD flags, likewise
  Hooks hooks_;
  bool reattach_failing_ = false;  // logging state: one message per failing run
  std::unique_ptr<TapMonitor> monitor_;  // last: its callback uses the above
};

}  // namespace kvmmio::net
