// SPDX-License-Identifier: BSD-2-Clause
// The virtio constants every transport and device share, whatever the
// transport: the device status bits (virtio 1.2 section 2.1), the reserved
// feature bits (6), the descriptor and ring flags of split virtqueues
// (2.7.5, 2.7.6, 2.7.8) and the largest split-queue size (2.7).
//
// The virtio-mmio register file (offsets, InterruptStatus bits) is
// mmio_regs.h, the transport's own: devices include this header, never that
// one (tests/check-layers.sh).
#pragma once

#include <cstdint>

namespace kvmmio::virtio {

// The largest split-queue size (2.7: "The maximum Queue Size value is 32768").
inline constexpr uint32_t kMaxQueueSize = 32768;

// Device status bits (2.1 "Device Status Field").
namespace status {
inline constexpr uint32_t kAcknowledge = 1;
inline constexpr uint32_t kDriver = 2;
inline constexpr uint32_t kDriverOk = 4;
inline constexpr uint32_t kFeaturesOk = 8;
inline constexpr uint32_t kDeviceNeedsReset = 64;
inline constexpr uint32_t kFailed = 128;
}  // namespace status

// Feature bit numbers the transport and the ring implementation own (6).
namespace feature {
inline constexpr unsigned kRingIndirectDesc = 28;
inline constexpr unsigned kRingEventIdx = 29;
inline constexpr unsigned kVersion1 = 32;
inline constexpr unsigned kAccessPlatform = 33;
inline constexpr unsigned kRingPacked = 34;
inline constexpr unsigned kInOrder = 35;
inline constexpr unsigned kOrderPlatform = 36;
inline constexpr unsigned kSrIov = 37;
inline constexpr unsigned kNotificationData = 38;
inline constexpr unsigned kNotifConfigData = 39;
inline constexpr unsigned kRingReset = 40;

constexpr uint64_t bit(unsigned n) { return uint64_t{1} << n; }
constexpr bool has(uint64_t features, unsigned n) { return (features & bit(n)) != 0; }
}  // namespace feature

// Descriptor flags (2.7.5) and ring flags (2.7.6, 2.7.8).
namespace desc_flag {
inline constexpr uint16_t kNext = 1;
inline constexpr uint16_t kWrite = 2;
inline constexpr uint16_t kIndirect = 4;
}  // namespace desc_flag
inline constexpr uint16_t kAvailFlagNoInterrupt = 1;
inline constexpr uint16_t kUsedFlagNoNotify = 1;

}  // namespace kvmmio::virtio
