// SPDX-License-Identifier: BSD-2-Clause
// The virtio-mmio register file by name: offsets (virtio 1.2 section 4.2.2,
// table "MMIO Device Register Layout"; legacy registers from 4.2.4) and the
// InterruptStatus bits (4.2.2). The constants of virtio itself (status and
// feature bits, ring flags) are virtio_spec.h's, which this header brings
// along for the transport; devices include virtio_spec.h only.
//
// No other file spells a register offset or a status bit as a number.
#pragma once

#include <cstdint>

#include "kvmmio/base/export.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::virtio {

// Register offsets from the device's base address (4.2.2, 4.2.4).
namespace reg {
inline constexpr uint32_t kMagicValue = 0x000;
inline constexpr uint32_t kVersion = 0x004;
inline constexpr uint32_t kDeviceId = 0x008;
inline constexpr uint32_t kVendorId = 0x00c;
inline constexpr uint32_t kDeviceFeatures = 0x010;
inline constexpr uint32_t kDeviceFeaturesSel = 0x014;
inline constexpr uint32_t kDriverFeatures = 0x020;
inline constexpr uint32_t kDriverFeaturesSel = 0x024;
inline constexpr uint32_t kGuestPageSize = 0x028;  // legacy only
inline constexpr uint32_t kQueueSel = 0x030;
inline constexpr uint32_t kQueueNumMax = 0x034;
inline constexpr uint32_t kQueueNum = 0x038;
inline constexpr uint32_t kQueueAlign = 0x03c;  // legacy only
inline constexpr uint32_t kQueuePfn = 0x040;    // legacy only
inline constexpr uint32_t kQueueReady = 0x044;
inline constexpr uint32_t kQueueNotify = 0x050;
inline constexpr uint32_t kInterruptStatus = 0x060;
inline constexpr uint32_t kInterruptAck = 0x064;
inline constexpr uint32_t kStatus = 0x070;
inline constexpr uint32_t kQueueDescLow = 0x080;
inline constexpr uint32_t kQueueDescHigh = 0x084;
inline constexpr uint32_t kQueueDriverLow = 0x090;
inline constexpr uint32_t kQueueDriverHigh = 0x094;
inline constexpr uint32_t kQueueDeviceLow = 0x0a0;
inline constexpr uint32_t kQueueDeviceHigh = 0x0a4;
inline constexpr uint32_t kShmSel = 0x0ac;
inline constexpr uint32_t kShmLenLow = 0x0b0;
inline constexpr uint32_t kShmLenHigh = 0x0b4;
inline constexpr uint32_t kShmBaseLow = 0x0b8;
inline constexpr uint32_t kShmBaseHigh = 0x0bc;
inline constexpr uint32_t kQueueReset = 0x0c0;
inline constexpr uint32_t kConfigGeneration = 0x0fc;
inline constexpr uint32_t kConfig = 0x100;  // device-specific configuration space
}  // namespace reg

inline constexpr uint32_t kMagic = 0x74726976;  // "virt", little-endian (4.2.2)
inline constexpr uint32_t kVersionLegacy = 1;   // 4.2.4
inline constexpr uint32_t kVersionModern = 2;   // 4.2.2
// VendorID: "kvmm" in little-endian ASCII; drivers match on DeviceID only.
inline constexpr uint32_t kVendorId = 0x6d6d766b;
// The window a transport claims on the MMIO bus: registers, then up to 256
// bytes of configuration space (the size device trees give virtio-mmio).
inline constexpr uint64_t kMmioWindowSize = 0x200;
inline constexpr uint32_t kConfigSpaceMax = kMmioWindowSize - reg::kConfig;
// SHMLen and SHMBase of a region that does not exist read as all ones (4.2.2).
inline constexpr uint32_t kNoShmRegion = 0xffffffff;

// InterruptStatus / InterruptACK bits (4.2.2).
namespace interrupt {
inline constexpr uint32_t kUsedBuffer = 1;
inline constexpr uint32_t kConfigChange = 2;
inline constexpr uint32_t kAll = kUsedBuffer | kConfigChange;
}  // namespace interrupt

// Who may access a register (4.2.2 "Direction").
enum class RegAccess : uint8_t { kRead, kWrite, kReadWrite };

// Which register layouts a register belongs to.
enum RegLayouts : uint8_t { kLegacyLayout = 1, kModernLayout = 2, kBothLayouts = 3 };

struct KVMMIO_EXPORT RegisterInfo {
  uint32_t offset;
  const char* name;  // the spec's name, for guest-error messages
  RegAccess access;
  uint8_t layouts;   // RegLayouts bits
};

// The register at `offset` in the layout of `version` (1 or 2), or nullptr
// when that layout has no register there.
KVMMIO_EXPORT const RegisterInfo* find_register(uint32_t offset, uint32_t version);

}  // namespace kvmmio::virtio
