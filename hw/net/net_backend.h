// SPDX-License-Identifier: BSD-2-Clause
// NetBackend: what moves packets for a VirtioNet between activate() and
// reset(). Internal to hw/net.
#pragma once

#include <cstdint>
#include <memory>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/virtio/virtio_device.h"

namespace kvmmio::net {

class NetBackend {
 public:
  virtual ~NetBackend() = default;  // stops moving packets, releases everything
  // A VMM-owned data queue was notified (userspace backend only).
  virtual void queue_notify(uint32_t queue) { (void)queue; }
  // The tap works again (device lock held): up again, or re-attached
  // after it was removed (`reattached`: the tap fds were detached meanwhile).
  virtual void tap_restored(bool reattached) { (void)reattached; }
  // The driver stopped a queue while DRIVER_OK (QueueReady = 0, QueuePFN
  // = 0): from now on nothing may touch its ring (2.6.1, 4.2.2). Its fds
  // stay open until this returns.
  virtual void reset_queue(uint32_t queue) { (void)queue; }
  // ... and made it ready again, maybe elsewhere, with fresh indices.
  virtual void enable_queue(const virtio::ActiveQueue& queue) { (void)queue; }
};

struct BackendContext {
  const GuestMemory& memory;
  EventLoop& loop;
  Tap& tap;
  NetCounters& counters;
  GuestErrorLog& errors;  // the device's: guest mistakes the backend finds
  LogLimit& repeats;      // the device's: host-side messages that repeat per activation
  DeviceLock& lock;  // the device lock, for the backend's own watches
  uint16_t queue_pairs;
  uint32_t poll_us = 0;  // vhost-net's busy polling per vring (NetOptions::poll_us)
};

// Throws (std::system_error, UserError) if the kernel refuses the set-up.
std::unique_ptr<NetBackend> make_vhost_backend(const BackendContext& ctx,
                                               const virtio::DeviceActivation& activation);
std::unique_ptr<NetBackend> make_user_backend(const BackendContext& ctx,
                                              const virtio::DeviceActivation& activation);

// TUNSETOFFLOAD flags for the offloads the guest accepted on receive.
unsigned tap_offloads(uint64_t guest_features);

}  // namespace kvmmio::net
