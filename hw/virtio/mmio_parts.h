// SPDX-License-Identifier: BSD-2-Clause
// MmioTransport::Parts: the transport as three owners, each of one job and
// its own state, with dependencies one way only (tests/check-layers.sh
// holds them to it):
//   DeviceState      Status, activation, reset, NEEDS_RESET; the features,
//                    the configuration window and ConfigGeneration,
//                    InterruptStatus                     (mmio_device_state,
//                                        mmio_features, mmio_config, mmio_interrupts)
//   QueueSet         queue registers, liveness, rings, notify fds, notifies
//                                                        (mmio_queues, mmio_notify)
//   MirrorPublisher  regs=mirror's page                  (mmio_mirror)
// DeviceState drives the queues and tells the mirror what changed; the
// queues call no other part; the mirror is fed through its MirrorSource
// (Parts, below). RegisterFile (mmio_register_file, mmio_modern,
// mmio_legacy) holds no state: it admits the guest's accesses and hands
// each to its owner. TransportContext is the wiring they share.
//
// The device reaches the transport through Parts as its VirtioInterrupt,
// and the rings as their QueueFaultSink.
#pragma once

#include "kvmmio/virtio/mmio_transport.h"
#include "mmio_context.h"
#include "mmio_device_state.h"
#include "mmio_mirror.h"
#include "mmio_queues.h"
#include "mmio_register_file.h"

namespace kvmmio::virtio {

struct MmioTransport::Parts final : VirtioInterrupt, QueueFaultSink, MirrorSource {
  Parts(VirtioDevice& device, TransportEnv env, TransportOptions options)
      : ctx(device, std::move(env), options) {}

  // VirtioInterrupt, the device's side.
  void signal_used() override { state.signal_used(); }
  void signal_config_change() override { state.signal_config_change(); }
  void needs_reset(const char* why) override { state.needs_reset(why); }
  // QueueFaultSink, the rings'.
  void queue_fault(uint32_t queue_index, QueueError error) override;
  // MirrorSource: what the mirror shows.
  uint32_t register_value(const RegisterInfo& info) override { return registers.read(info); }
  uint32_t device_status() const override { return state.status(); }
  uint32_t interrupt_status() const override { return state.interrupt_status(); }
  uint32_t config_generation() const override { return state.config_generation(); }
  uint32_t step_config_generation() override { return state.step_config_generation(); }

  TransportContext ctx;
  // Built in this order, each from what is built before it.
  MirrorPublisher mirror{ctx, *this};
  QueueSet queues{ctx, *this};
  DeviceState state{ctx, queues, mirror, *this};
  RegisterFile registers{ctx, state, queues};
};

}  // namespace kvmmio::virtio
