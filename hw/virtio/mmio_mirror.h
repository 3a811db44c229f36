// SPDX-License-Identifier: BSD-2-Clause
// MirrorPublisher: regs=mirror's RegisterMirror page, kept equal to what a
// trapped read would return (mmio_mirror.cc says who updates it and when).
// With regs=trap it holds no page and publishes nothing.
#pragma once

#include <memory>
#include <mutex>

#include "kvmmio/virtio/register_mirror.h"
#include "mmio_config.h"
#include "mmio_context.h"

namespace kvmmio::virtio {

class DeviceLifecycle;
class RegisterFile;
class TransportInterrupts;

class MirrorPublisher {
 public:
  MirrorPublisher(TransportContext& ctx, ConfigWindow& config, const DeviceLifecycle& lifecycle,
                  const TransportInterrupts& interrupts);

  const RegisterMirror* page() const { return page_.get(); }
  bool enabled() const { return page_ != nullptr; }

  // Everything, as `registers` reads it; the device lock is held.
  void refresh(RegisterFile& registers);
  // A configuration change of the device's own, from any thread.
  void publish_config_change();
  // Status and InterruptStatus, from any thread.
  void publish_status();

 private:
  void publish_config();  // configuration + ConfigGeneration; mutex_ held

  TransportContext& ctx_;
  ConfigWindow& config_;
  const DeviceLifecycle& lifecycle_;
  const TransportInterrupts& interrupts_;
  std::unique_ptr<RegisterMirror> page_;
  // Orders every update, so a value computed under it is never
  // overwritten by an older one.
  std::mutex mutex_;
  bool filled_ = false;  // the first fill publishes no ConfigGeneration steps
};

}  // namespace kvmmio::virtio
