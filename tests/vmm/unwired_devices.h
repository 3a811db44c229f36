// SPDX-License-Identifier: BSD-2-Clause
// Real virtio devices with nothing behind them, for tests that read what a
// device reports (its counters, its stats keys) without running a guest:
// VirtioNet on a socketpair stand-in of a tap (userspace backend) and
// VirtioConsole writing to stdout, both on an empty guest memory.
#pragma once

#include <vector>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/console/virtio_console.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net.h"

namespace kvmmio::vmm::test {

struct UnwiredDevices {
  GuestMemory memory;
  EventLoop loop;
  std::vector<UniqueFd> wire;  // the far ends of the stand-in tap

  static net::NetOptions net_options() {
    net::NetOptions o;
    o.tap = "sockpair";
    o.vhost = net::VhostMode::kOff;
    return o;
  }
  net::VirtioNet net{net_options(), memory, loop, net::Tap::socketpair("sockpair", 1, wire)};
  console::VirtioConsole console{memory, loop, /*output_fd=*/1};
};

}  // namespace kvmmio::vmm::test
