// SPDX-License-Identifier: BSD-2-Clause
// The device status state machine as a table of valid transitions (virtio
// 1.2 section 2.1 "Device Status Field", 3.1.1 "Driver Requirements: Device
// Initialization"; legacy drivers skip FEATURES_OK, 3.1.2).
//
// classify_status_write() only decides what a driver's write to Status
// means; the transport acts on the answer (reset, feature check, activation).
#pragma once

#include <cstdint>

#include "kvmmio/base/export.h"

namespace kvmmio::virtio {

enum class StatusChange {
  kReset,        // 0 written: reset the device (4.2.2 Status)
  kUnchanged,    // the same bits written again
  kAcknowledge,  // 0 -> ACKNOWLEDGE
  kDriver,       // ACKNOWLEDGE -> +DRIVER
  kFeaturesOk,   // +FEATURES_OK (modern only): the transport checks the features
  kDriverOk,     // +DRIVER_OK: the device goes live
  kFailed,       // +FAILED, from any state: the driver gave up
  kInvalid,      // anything else: a guest error, the write is ignored
};

KVMMIO_EXPORT const char* to_string(StatusChange change);

// What writing `written` to Status means when it holds `current`, under the
// rules of `version` (1 legacy, 2 modern). DEVICE_NEEDS_RESET is the
// device's bit: drivers echo it back (Linux writes get_status() | bit), so
// it is ignored in `written` and in the table.
KVMMIO_EXPORT StatusChange classify_status_write(uint32_t current, uint32_t written, uint32_t version);

}  // namespace kvmmio::virtio
