// SPDX-License-Identifier: BSD-2-Clause
// The device status transition table (virtio 1.2 2.1, 3.1.1; legacy 3.1.2).
#include "kvmmio/virtio/device_status.h"

#include <array>
#include <cstddef>

#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {
namespace {

using namespace status;

struct Transition {
  uint32_t from;
  uint32_t to;
  StatusChange change;
};

// Modern drivers (3.1.1): ACKNOWLEDGE, DRIVER, FEATURES_OK, DRIVER_OK, one
// bit at a time, in that order.
constexpr std::array kModern = {
    Transition{0, kAcknowledge, StatusChange::kAcknowledge},
    Transition{kAcknowledge, kAcknowledge | kDriver, StatusChange::kDriver},
    Transition{kAcknowledge | kDriver, kAcknowledge | kDriver | kFeaturesOk,
               StatusChange::kFeaturesOk},
    Transition{kAcknowledge | kDriver | kFeaturesOk,
               kAcknowledge | kDriver | kFeaturesOk | kDriverOk, StatusChange::kDriverOk},
};

// Legacy drivers have no FEATURES_OK (3.1.2): features are fixed by DRIVER_OK.
constexpr std::array kLegacy = {
    Transition{0, kAcknowledge, StatusChange::kAcknowledge},
    Transition{kAcknowledge, kAcknowledge | kDriver, StatusChange::kDriver},
    Transition{kAcknowledge | kDriver, kAcknowledge | kDriver | kDriverOk,
               StatusChange::kDriverOk},
};

template <size_t N>
StatusChange lookup(const std::array<Transition, N>& table, uint32_t from, uint32_t to) {
  for (const Transition& t : table) {
    if (t.from == from && t.to == to) return t.change;
  }
  return StatusChange::kInvalid;
}

}  // namespace

const char* to_string(StatusChange change) {
  switch (change) {
    case StatusChange::kReset: return "reset";
    case StatusChange::kUnchanged: return "unchanged";
    case StatusChange::kAcknowledge: return "ACKNOWLEDGE";
    case StatusChange::kDriver: return "DRIVER";
    case StatusChange::kFeaturesOk: return "FEATURES_OK";
    case StatusChange::kDriverOk: return "DRIVER_OK";
    case StatusChange::kFailed: return "FAILED";
    case StatusChange::kInvalid: return "invalid";
  }
  return "?";
}

StatusChange classify_status_write(uint32_t current, uint32_t written, uint32_t version) {
  if (written == 0) return StatusChange::kReset;
  const uint32_t from = current & ~kDeviceNeedsReset;
  const uint32_t to = written & ~kDeviceNeedsReset;
  if (to == from) return StatusChange::kUnchanged;
  // FAILED may be added in any state: the driver gave up on the device (2.1).
  if (to == (from | kFailed)) return StatusChange::kFailed;
  return version == kVersionLegacy ? lookup(kLegacy, from, to) : lookup(kModern, from, to);
}

}  // namespace kvmmio::virtio
