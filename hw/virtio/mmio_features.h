// SPDX-License-Identifier: BSD-2-Clause
// FeatureNegotiation: the feature bits the transport offers and those the
// driver accepted (virtio 1.2 2.2, 3.1.1): DeviceFeatures(Sel),
// DriverFeatures(Sel), and the checks at FEATURES_OK (modern) or DRIVER_OK
// (legacy, which has no FEATURES_OK). Called with the device lock held.
#pragma once

#include <cstdint>

#include "mmio_context.h"

namespace kvmmio::virtio {

class FeatureNegotiation {
 public:
  explicit FeatureNegotiation(TransportContext& ctx) : ctx_(ctx) {}

  // The device's bits with the transport's own decided here: the ring
  // features it implements, VERSION_1 by layout, RING_RESET if the device
  // resets queues; legacy offers bits 0-31 only.
  uint64_t offered() const;
  // What the driver accepted so far.
  uint64_t accepted() const { return accepted_; }
  bool accepted(unsigned bit) const { return feature::has(accepted_, bit); }

  void select_offered_word(uint32_t word) { offered_word_ = word; }
  void select_accepted_word(uint32_t word) { accepted_word_ = word; }
  uint32_t read_offered_word() const;  // DeviceFeatures
  // DriverFeatures; refused once negotiation ended (3.1.1): FEATURES_OK or
  // DRIVER_OK set in `device_status`.
  void write_accepted_word(uint32_t value, uint32_t device_status);

  // FEATURES_OK (modern): whether the accepted set may stand; a guest
  // error says why not.
  bool acceptable();
  // DRIVER_OK (legacy): unoffered bits are dropped (a guest error); false
  // when the device refuses the rest together.
  bool settle_legacy();
  void reset();

 private:
  TransportContext& ctx_;
  uint32_t offered_word_ = 0;   // DeviceFeaturesSel
  uint32_t accepted_word_ = 0;  // DriverFeaturesSel
  uint64_t accepted_ = 0;
};

}  // namespace kvmmio::virtio
