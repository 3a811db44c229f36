// SPDX-License-Identifier: BSD-2-Clause
// TapSupervisor: tap faults as the guest sees them (see the header).
#include "tap_supervisor.h"

#include <chrono>
#include <exception>

#include "kvmmio/base/log.h"

namespace kvmmio::net {

void reattach_tap(Tap& tap, int vnet_hdr_size, unsigned offloads, NetCounters& counters) {
  tap.reattach();
  tap.set_vnet_hdr_size(vnet_hdr_size);
  tap.set_offload(offloads);
  tap.set_link(true);
  ++counters.tap_reattached;
}

TapSupervisor::TapSupervisor(EventLoop& loop, DeviceLock& lock, Tap& tap, NetCounters& counters,
                             unsigned queue_pairs, int vnet_hdr_size, unsigned offloads, Hooks hooks)
    : tap_(tap),
      counters_(counters),
      queue_pairs_(queue_pairs),
      vnet_hdr_size_(vnet_hdr_size),
      offloads_(offloads),
      hooks_(std::move(hooks)),
      monitor_(std::make_unique<TapMonitor>(loop, lock, tap.name(),
                                            [this](TapMonitor::Event e) { on_event(e); })) {}

void TapSupervisor::on_event(TapMonitor::Event event) {
  const char* name = tap_.name().c_str();
  switch (event) {
    case TapMonitor::Event::kDown:
      KVMMIO_LOG_WARN("net %s: the tap went down: the guest's link is down until it is up again", name);
      hooks_.guest_link(false);
      break;
    case TapMonitor::Event::kUp:
      KVMMIO_LOG_INFO("net %s: the tap is up again", name);
      hooks_.restored(false);
      hooks_.guest_link(true);
      break;
    case TapMonitor::Event::kRemoved:
      // The fds stay open but detached.
      ++counters_.tap_removed;
      KVMMIO_LOG_WARN("net %s: the tap was removed: the guest's link is down; kvmmio attaches "
                      "again when an interface of that name appears (ip tuntap add %s mode tap "
                      "vnet_hdr%s)", name, name, queue_pairs_ > 1 ? " multi_queue" : "");
      hooks_.guest_link(false);
      break;
    case TapMonitor::Event::kAppeared:
      try {
        reattach_tap(tap_, vnet_hdr_size_, offloads_, counters_);
      } catch (const std::exception& e) {
        if (!reattach_failing_)
          KVMMIO_LOG_ERROR("net %s: an interface of that name appeared but cannot be attached: %s; "
                           "the guest's link stays down, retrying every second", name, e.what());
        reattach_failing_ = true;
        monitor_->retry_appeared(std::chrono::seconds(1));
        break;
      }
      reattach_failing_ = false;
      KVMMIO_LOG_INFO("net %s: attached to the new interface and brought it up", name);
      hooks_.restored(true);
      hooks_.guest_link(true);
      break;
  }
}

}  // namespace kvmmio::net
