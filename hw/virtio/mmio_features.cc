// SPDX-License-Identifier: BSD-2-Clause
// FeatureNegotiation: what is offered, what may be accepted.
#include "mmio_features.h"

#include <cinttypes>

namespace kvmmio::virtio {
namespace {

// Transport bits the transport decides on, whatever the device says: ring
// features it implements or not, VERSION_1 by layout, PCI-only bits.
constexpr uint64_t kTransportOwnedFeatures =
    feature::bit(feature::kRingIndirectDesc) | feature::bit(feature::kRingEventIdx) |
    feature::bit(feature::kVersion1) | feature::bit(feature::kRingPacked) |
    feature::bit(feature::kSrIov) | feature::bit(feature::kNotificationData) |
    feature::bit(feature::kNotifConfigData) | feature::bit(feature::kRingReset);

}  // namespace

uint64_t FeatureNegotiation::offered() const {
  uint64_t features = ctx_.device.device_features() & ~kTransportOwnedFeatures;
  features |= feature::bit(feature::kRingIndirectDesc);
  if (ctx_.options.event_idx) features |= feature::bit(feature::kRingEventIdx);
  if (ctx_.options.version == kVersionLegacy) features &= 0xffffffff;  // 32 feature bits
  else features |= feature::bit(feature::kVersion1);
  if (ctx_.options.version != kVersionLegacy && ctx_.device.supports_queue_reset())
    features |= feature::bit(feature::kRingReset);
  return features & ~ctx_.device.withheld_transport_features();
}

uint32_t FeatureNegotiation::read_offered_word() const {
  // Selector 0: bits 0-31, 1: bits 32-63; there are no others.
  return offered_word_ < 2 ? static_cast<uint32_t>(offered() >> (32 * offered_word_)) : 0;
}

void FeatureNegotiation::write_accepted_word(uint32_t value, uint32_t device_status) {
  // Fixed once FEATURES_OK (modern) or DRIVER_OK (legacy) is set (3.1.1).
  if (device_status & (status::kFeaturesOk | status::kDriverOk))
    return ctx_.guest_error("DriverFeatures written after feature negotiation ended");
  if (accepted_word_ >= 2 || (ctx_.options.version == kVersionLegacy && accepted_word_ == 1)) {
    if (value) ctx_.guest_error("DriverFeatures word %u: no such feature bits", accepted_word_);
    return;
  }
  const unsigned shift = 32 * accepted_word_;
  accepted_ = (accepted_ & ~(uint64_t{0xffffffff} << shift)) | (uint64_t{value} << shift);
}

bool FeatureNegotiation::acceptable() {
  const uint64_t unoffered = accepted_ & ~offered();
  if (unoffered) {
    ctx_.guest_error("FEATURES_OK refused: features 0x%" PRIx64 " were not offered", unoffered);
    return false;
  }
  // A modern device only works with a modern driver (6.1, 4.2.2 Version 2).
  if (!accepted(feature::kVersion1)) {
    ctx_.guest_error("FEATURES_OK refused: VIRTIO_F_VERSION_1 not accepted by a driver of a Version 2 device");
    return false;
  }
  if (!ctx_.device.accept_features(accepted_)) {
    ctx_.guest_error("FEATURES_OK refused: the device does not accept features 0x%" PRIx64
                     " together (a feature without one it depends on)", accepted_);
    return false;
  }
  return true;
}

bool FeatureNegotiation::settle_legacy() {
  // A legacy driver cannot be refused, only held to what was offered.
  const uint64_t unoffered = accepted_ & ~offered();
  if (unoffered) {
    ctx_.guest_error("driver accepted features 0x%" PRIx64 " that were not offered; ignored", unoffered);
    accepted_ &= ~unoffered;
  }
  // The device's own rules (a feature without one it depends on) hold in
  // legacy too; with no FEATURES_OK to clear, the device refuses to start.
  if (ctx_.device.accept_features(accepted_)) return true;
  ctx_.guest_error("DRIVER_OK refused: the device does not accept features 0x%" PRIx64
                   " together (a feature without one it depends on)", accepted_);
  return false;
}

void FeatureNegotiation::reset() {
  accepted_ = 0;
  offered_word_ = accepted_word_ = 0;
}

}  // namespace kvmmio::virtio
