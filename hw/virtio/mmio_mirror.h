// SPDX-License-Identifier: BSD-2-Clause
// MirrorPublisher: regs=mirror's RegisterMirror page, kept equal to what a
// trapped read would return (mmio_mirror.cc says who updates it and when).
// With regs=trap it holds no page and publishes nothing.
#pragma once

#include <memory>
#include <mutex>

#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/register_mirror.h"
#include "mmio_context.h"

namespace kvmmio::virtio {

// What the mirror shows, read from whoever owns it (the transport's
// wiring, mmio_parts.h, implements it). The mirror calls it under its own
// mutex, so a value read earlier is never published over one read later.
class MirrorSource {
 public:
  // What a trapped read of `info` returns; the device lock is held.
  virtual uint32_t register_value(const RegisterInfo& info) = 0;
  // From any thread.
  virtual uint32_t device_status() const = 0;
  virtual uint32_t interrupt_status() const = 0;
  virtual uint32_t config_generation() const = 0;
  virtual uint32_t step_config_generation() = 0;

 protected:
  ~MirrorSource() = default;
};

// One of the transport's three owners (mmio_parts.h): the page, and when
// it changes. It calls no other part; it is fed through its MirrorSource.
class MirrorPublisher {
 public:
  MirrorPublisher(TransportContext& ctx, MirrorSource& source);

  const RegisterMirror* page() const { return page_.get(); }
  bool enabled() const { return page_ != nullptr; }

  // Everything, as a trapped read would return it; the device lock is held.
  void refresh();
  // A configuration change of the device's own, from any thread.
  void publish_config_change();
  // Status and InterruptStatus, from any thread.
  void publish_status();

 private:
  void publish_config();  // configuration + ConfigGeneration; mutex_ held

  TransportContext& ctx_;
  MirrorSource& source_;
  std::unique_ptr<RegisterMirror> page_;
  // Orders every update, so a value computed under it is never
  // overwritten by an older one.
  std::mutex mutex_;
  bool filled_ = false;  // the first fill publishes no ConfigGeneration steps
};

}  // namespace kvmmio::virtio
