// SPDX-License-Identifier: BSD-2-Clause
// The virtio-mmio register table: which offset is which register, who may
// access it, and in which layout it exists (virtio 1.2 4.2.2, 4.2.4).
#include "kvmmio/virtio/mmio_regs.h"

#include <array>

namespace kvmmio::virtio {
namespace {

using enum RegAccess;

constexpr std::array kRegisters = {
    RegisterInfo{reg::kMagicValue, "MagicValue", kRead, kBothLayouts},
    RegisterInfo{reg::kVersion, "Version", kRead, kBothLayouts},
    RegisterInfo{reg::kDeviceId, "DeviceID", kRead, kBothLayouts},
    RegisterInfo{reg::kVendorId, "VendorID", kRead, kBothLayouts},
    RegisterInfo{reg::kDeviceFeatures, "DeviceFeatures", kRead, kBothLayouts},
    RegisterInfo{reg::kDeviceFeaturesSel, "DeviceFeaturesSel", kWrite, kBothLayouts},
    RegisterInfo{reg::kDriverFeatures, "DriverFeatures", kWrite, kBothLayouts},
    RegisterInfo{reg::kDriverFeaturesSel, "DriverFeaturesSel", kWrite, kBothLayouts},
    RegisterInfo{reg::kGuestPageSize, "GuestPageSize", kWrite, kLegacyLayout},
    RegisterInfo{reg::kQueueSel, "QueueSel", kWrite, kBothLayouts},
    RegisterInfo{reg::kQueueNumMax, "QueueNumMax", kRead, kBothLayouts},
    RegisterInfo{reg::kQueueNum, "QueueNum", kWrite, kBothLayouts},
    RegisterInfo{reg::kQueueAlign, "QueueAlign", kWrite, kLegacyLayout},
    RegisterInfo{reg::kQueuePfn, "QueuePFN", kReadWrite, kLegacyLayout},
    RegisterInfo{reg::kQueueReady, "QueueReady", kReadWrite, kModernLayout},
    RegisterInfo{reg::kQueueNotify, "QueueNotify", kWrite, kBothLayouts},
    RegisterInfo{reg::kInterruptStatus, "InterruptStatus", kRead, kBothLayouts},
    RegisterInfo{reg::kInterruptAck, "InterruptACK", kWrite, kBothLayouts},
    RegisterInfo{reg::kStatus, "Status", kReadWrite, kBothLayouts},
    RegisterInfo{reg::kQueueDescLow, "QueueDescLow", kWrite, kModernLayout},
    RegisterInfo{reg::kQueueDescHigh, "QueueDescHigh", kWrite, kModernLayout},
    RegisterInfo{reg::kQueueDriverLow, "QueueDriverLow", kWrite, kModernLayout},
    RegisterInfo{reg::kQueueDriverHigh, "QueueDriverHigh", kWrite, kModernLayout},
    RegisterInfo{reg::kQueueDeviceLow, "QueueDeviceLow", kWrite, kModernLayout},
    RegisterInfo{reg::kQueueDeviceHigh, "QueueDeviceHigh", kWrite, kModernLayout},
    RegisterInfo{reg::kShmSel, "SHMSel", kWrite, kModernLayout},
    RegisterInfo{reg::kShmLenLow, "SHMLenLow", kRead, kModernLayout},
    RegisterInfo{reg::kShmLenHigh, "SHMLenHigh", kRead, kModernLayout},
    RegisterInfo{reg::kShmBaseLow, "SHMBaseLow", kRead, kModernLayout},
    RegisterInfo{reg::kShmBaseHigh, "SHMBaseHigh", kRead, kModernLayout},
    RegisterInfo{reg::kQueueReset, "QueueReset", kReadWrite, kModernLayout},
    RegisterInfo{reg::kConfigGeneration, "ConfigGeneration", kRead, kModernLayout},
};

}  // namespace

const RegisterInfo* find_register(uint32_t offset, uint32_t version) {
  const uint8_t layout = version == kVersionLegacy ? kLegacyLayout : kModernLayout;
  for (const RegisterInfo& r : kRegisters) {
    if (r.offset == offset) return (r.layouts & layout) ? &r : nullptr;
  }
  return nullptr;
}

}  // namespace kvmmio::virtio
