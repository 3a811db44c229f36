// SPDX-License-Identifier: BSD-2-Clause
// RegisterFile: the guest's register accesses (virtio 1.2 4.2.2, 4.2.4):
// which accesses are admitted (widths, directions, layouts: 4.2.2.2), and
// which owner each register belongs to. It keeps no state of its own: the
// queue registers are the QueueSet's, written through its typed setters;
// features, status, interrupts and the configuration are DeviceState's.
// Called with the device lock held.
#pragma once

#include <cstdint>
#include <span>

#include "mmio_context.h"

namespace kvmmio::virtio {

class DeviceState;
class QueueSet;

class RegisterFile {
 public:
  RegisterFile(TransportContext& ctx, DeviceState& state, QueueSet& queues)
      : ctx_(ctx), state_(state), queues_(queues) {}

  // A guest access anywhere in the window (registers or configuration);
  // what is refused reads as zeros.
  void read(uint64_t offset, std::span<uint8_t> data);
  void write(uint64_t offset, std::span<const uint8_t> data);
  // What a trapped read of a readable register returns (the mirror's source).
  uint32_t read(const RegisterInfo& info);

 private:
  const RegisterInfo* register_for(uint64_t offset, size_t size, bool write);
  void write(const RegisterInfo& info, uint32_t value);
  // A queue set-up register the QueueSet refused: no such queue, or live.
  void refused_queue_write(const RegisterInfo& info);
  // mmio_modern.cc / mmio_legacy.cc: registers of one layout only
  uint32_t read_modern(const RegisterInfo& info);
  void write_modern(const RegisterInfo& info, uint32_t value);
  uint32_t read_legacy(const RegisterInfo& info);
  void write_legacy(const RegisterInfo& info, uint32_t value);

  TransportContext& ctx_;
  DeviceState& state_;
  QueueSet& queues_;
};

}  // namespace kvmmio::virtio
