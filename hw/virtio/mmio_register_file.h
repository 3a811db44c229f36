// SPDX-License-Identifier: BSD-2-Clause
// RegisterFile: the guest's register accesses (virtio 1.2 4.2.2, 4.2.4):
// which accesses are admitted (widths, directions, layouts: 4.2.2.2), and
// which part each register belongs to. It keeps no state of its own: the
// selectors, queue registers, status and interrupt bits belong to the parts
// it dispatches to. Called with the device lock held.
#pragma once

#include <cstdint>
#include <span>

#include "mmio_context.h"

namespace kvmmio::virtio {

class ConfigWindow;
class DeviceLifecycle;
class FeatureNegotiation;
class QueueSet;
class TransportInterrupts;

class RegisterFile {
 public:
  RegisterFile(TransportContext& ctx, ConfigWindow& config, FeatureNegotiation& features, QueueSet& queues,
               DeviceLifecycle& lifecycle, TransportInterrupts& interrupts)
      : ctx_(ctx), config_(config), features_(features), queues_(queues), lifecycle_(lifecycle),
        interrupts_(interrupts) {}

  // A guest access anywhere in the window (registers or configuration);
  // what is refused reads as zeros.
  void read(uint64_t offset, std::span<uint8_t> data);
  void write(uint64_t offset, std::span<const uint8_t> data);
  // What a trapped read of a readable register returns (the mirror's source).
  uint32_t read(const RegisterInfo& info);

 private:
  const RegisterInfo* register_for(uint64_t offset, size_t size, bool write);
  void write(const RegisterInfo& info, uint32_t value);
  // mmio_modern.cc / mmio_legacy.cc: registers of one layout only
  uint32_t read_modern(const RegisterInfo& info);
  void write_modern(const RegisterInfo& info, uint32_t value);
  uint32_t read_legacy(const RegisterInfo& info);
  void write_legacy(const RegisterInfo& info, uint32_t value);

  TransportContext& ctx_;
  ConfigWindow& config_;
  FeatureNegotiation& features_;
  QueueSet& queues_;
  DeviceLifecycle& lifecycle_;
  TransportInterrupts& interrupts_;
};

}  // namespace kvmmio::virtio
