// SPDX-License-Identifier: BSD-2-Clause
// TransportContext: what every part of an MmioTransport is wired to and
// none of them owns: the device, the environment and options it was built
// with, the counters the VMM reports, the guest-error log and the device
// lock. Each part (mmio_parts.h) keeps a reference to it; the state a part
// changes is its own.
#pragma once

#include <cstdint>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/log_limit.h"
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::virtio {

struct TransportContext {
  // Throws std::invalid_argument for options or a device the transport
  // cannot present (see MmioTransport's constructor).
  TransportContext(VirtioDevice& device, TransportEnv env, TransportOptions options);
  TransportContext(const TransportContext&) = delete;
  TransportContext& operator=(const TransportContext&) = delete;

  // Counts a guest mistake and logs it, rate-limited.
  void guest_error(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  const char* name() const { return env.name.c_str(); }

  VirtioDevice& device;
  const TransportEnv env;
  const TransportOptions options;
  // kTrap when asked for, or when there is no NotifyFdSource or EventLoop.
  const NotifyMode notify_mode;
  TransportCounters counters;
  GuestErrorLog errors{env.name.c_str()};
  LogLimit repeats;  // host-side messages a guest can make repeat (needs reset)
  // Registers, queues, device callbacks; handed to the device at
  // activation for its own threads.
  mutable DeviceLock lock;
};

}  // namespace kvmmio::virtio
