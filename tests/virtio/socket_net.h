// SPDX-License-Identifier: BSD-2-Clause
// SocketNet: a VirtioNet with the userspace backend whose tap is the
// socketpair stand-in (Tap::socketpair()), behind a transport, driven by
// MmioDriver and DriverRing in real memfd guest RAM. The test holds the
// wire end of each queue pair: what it writes there (a vnet header, then a
// frame) the backend reads as a frame from the tap, and what the guest
// transmits comes out there. No interface, no root, nothing timed: the
// event loop's work is waited for with EventLoop::flush().
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver_ring.h"
#include "fake_notify_fds.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "mmio_driver.h"

namespace kvmmio::virtio::test {

struct SocketNet {
  static constexpr uint64_t kRam = 0x40000000;
  static constexpr uint64_t kRamSize = 16 << 20;
  static constexpr uint64_t kBase = 0x0a000000;
  static constexpr uint64_t kRxRing = kRam + 0x10000;
  static constexpr uint64_t kTxRing = kRam + 0x20000;
  static constexpr uint64_t kCtrlRing = kRam + 0x30000;
  static constexpr uint64_t kBuffers = kRam + 0x100000;
  static constexpr uint64_t kModern = (1ull << net::spec::kFVersion1) | (1ull << net::spec::kFMac) |
                                      (1ull << net::spec::kFStatus);

  struct Config {
    uint32_t version = kVersionModern;
    bool polled = false;  // notifies through (fake) ioeventfds polled by the loop; else trapped
    uint16_t pairs = 1;
  };

  explicit SocketNet(Config c) : config(c) {
    memory.add_ram(kRam, kRamSize);
    net::NetOptions o;
    o.tap = "sockpair";
    o.vhost = net::VhostMode::kOff;
    o.queue_pairs = c.pairs;
    o.transport.version = c.version;
    o.transport.notify = c.polled ? NotifyMode::kIoEventFd : NotifyMode::kTrap;
    device = std::make_unique<net::VirtioNet>(o, memory, loop,
                                              net::Tap::socketpair("sockpair", c.pairs, wire));
    transport = std::make_unique<MmioTransport>(
        *device,
        TransportEnv{.memory = memory, .irq = irq, .base = kBase,
                     .notify_fds = c.polled ? &notify_fds : nullptr, .loop = &loop,
                     .name = "socket-net"},
        o.transport);
    driver = std::make_unique<MmioDriver>(*transport);
  }
  ~SocketNet() { transport.reset(); }

  // Probe, negotiate `wanted`, set up RX0/TX0 (and the control queue when
  // CTRL_VQ is negotiated), DRIVER_OK. Returns the features, or nullopt
  // where Linux would give up.
  std::optional<uint64_t> bring_up(uint64_t wanted, uint32_t rx_size = 256, uint32_t tx_size = 256,
                                   uint32_t ctrl_size = 64) {
    if (!driver->probe()) return std::nullopt;
    auto f = driver->initialize(wanted);
    if (!f) return std::nullopt;
    auto rxl = driver->setup_queue(0, kRxRing, rx_size);
    auto txl = driver->setup_queue(1, kTxRing, tx_size);
    if (!rxl || !txl) return std::nullopt;
    rx = std::make_unique<DriverRing>(memory, *rxl);
    tx = std::make_unique<DriverRing>(memory, *txl);
    if (*f & (1ull << net::spec::kFCtrlVq)) {
      auto cl = driver->setup_queue(2u * config.pairs, kCtrlRing, ctrl_size);
      if (!cl) return std::nullopt;
      ctrl = std::make_unique<DriverRing>(memory, *cl);
    }
    driver->driver_ok();
    return f;
  }

  // The guest's QueueNotify: an MMIO exit, or the ioeventfd store.
  void notify(uint32_t queue) {
    if (config.polled) {
      if (!notify_fds.guest_notify(queue)) throw std::runtime_error("no notify fd for the queue");
    } else {
      driver->notify(queue);
    }
  }

  // The tap delivers a frame (`bytes` includes the vnet header).
  void tap_delivers(const std::vector<uint8_t>& bytes, unsigned pair = 0) {
    if (::send(wire.at(pair).get(), bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
      throw std::runtime_error("send on the wire end of the socketpair");
  }
  // The next frame the guest sent out of the "tap" (with its vnet header).
  std::optional<std::vector<uint8_t>> tap_received(unsigned pair = 0) {
    std::vector<uint8_t> buf(128 * 1024);
    const ssize_t n = ::recv(wire.at(pair).get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<size_t>(n));
    return buf;
  }

  bool needs_reset() { return driver->status() & status::kDeviceNeedsReset; }

  Config config;
  GuestMemory memory;
  EventFd irq;
  EventLoop loop;
  FakeNotifyFds notify_fds;
  std::vector<UniqueFd> wire;
  std::unique_ptr<net::VirtioNet> device;
  std::unique_ptr<MmioTransport> transport;
  std::unique_ptr<MmioDriver> driver;
  std::unique_ptr<DriverRing> rx, tx, ctrl;
};

}  // namespace kvmmio::virtio::test
