// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport::Parts: the transport as parts of one job each, every part
// owning its state:
//   ConfigWindow        configuration space, ConfigGeneration  (mmio_config)
//   FeatureNegotiation  offered and accepted feature bits      (mmio_features)
//   DeviceLifecycle     Status, activation, reset, NEEDS_RESET (mmio_lifecycle)
//   MirrorPublisher     regs=mirror's page                     (mmio_mirror)
//   TransportInterrupts InterruptStatus/ACK, irqfd, relay      (mmio_interrupts)
//   QueueSet            queues, liveness, notify fds, notifies (mmio_queues, mmio_notify)
//   RegisterFile        guest accesses, dispatched to the rest (mmio_register_file,
//                       mmio_modern, mmio_legacy)
// and the shared wiring they are all given (TransportContext). A part holds
// references to the parts it calls; some are built after it, so no part
// calls another from its constructor.
//
// The device reaches the transport through Parts as its VirtioInterrupt,
// and the rings as their QueueFaultSink.
#pragma once

#include "kvmmio/virtio/mmio_transport.h"
#include "mmio_config.h"
#include "mmio_context.h"
#include "mmio_features.h"
#include "mmio_interrupts.h"
#include "mmio_lifecycle.h"
#include "mmio_mirror.h"
#include "mmio_queues.h"
#include "mmio_register_file.h"

namespace kvmmio::virtio {

struct MmioTransport::Parts final : VirtioInterrupt, QueueFaultSink {
  Parts(VirtioDevice& device, TransportEnv env, TransportOptions options)
      : ctx(device, std::move(env), options) {}

  void signal_used() override;
  void signal_config_change() override;
  void needs_reset(const char* why) override;
  void queue_fault(uint32_t queue_index, QueueError error) override;

  TransportContext ctx;
  ConfigWindow config{ctx};
  FeatureNegotiation features{ctx};
  DeviceLifecycle lifecycle{ctx, features, queues, interrupts, mirror, *this};
  MirrorPublisher mirror{ctx, config, lifecycle, interrupts};
  TransportInterrupts interrupts{ctx, lifecycle, mirror};
  QueueSet queues{ctx, features, lifecycle, interrupts, *this};
  RegisterFile registers{ctx, config, features, queues, lifecycle, interrupts};
};

}  // namespace kvmmio::virtio
