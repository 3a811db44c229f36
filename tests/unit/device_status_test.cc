// SPDX-License-Identifier: BSD-2-Clause
// The status transition table (virtio 1.2 2.1, 3.1.1; legacy 3.1.2).
#include <gtest/gtest.h>

#include "kvmmio/virtio/device_status.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {
namespace {

using namespace status;
constexpr uint32_t kAck = kAcknowledge;
constexpr uint32_t kAckDrv = kAcknowledge | kDriver;
constexpr uint32_t kFok = kAckDrv | kFeaturesOk;

StatusChange modern(uint32_t from, uint32_t to) { return classify_status_write(from, to, kVersionModern); }
StatusChange legacy(uint32_t from, uint32_t to) { return classify_status_write(from, to, kVersionLegacy); }

TEST(DeviceStatus, ModernInitialisationOneBitAtATime) {
  EXPECT_EQ(modern(0, kAck), StatusChange::kAcknowledge);
  EXPECT_EQ(modern(kAck, kAckDrv), StatusChange::kDriver);
  EXPECT_EQ(modern(kAckDrv, kFok), StatusChange::kFeaturesOk);
  EXPECT_EQ(modern(kFok, kFok | kDriverOk), StatusChange::kDriverOk);
}

TEST(DeviceStatus, LegacyGoesFromDriverToDriverOkWithoutFeaturesOk) {
  EXPECT_EQ(legacy(0, kAck), StatusChange::kAcknowledge);
  EXPECT_EQ(legacy(kAck, kAckDrv), StatusChange::kDriver);
  EXPECT_EQ(legacy(kAckDrv, kAckDrv | kDriverOk), StatusChange::kDriverOk);
  EXPECT_EQ(legacy(kAckDrv, kFok), StatusChange::kInvalid);
  EXPECT_EQ(modern(kAckDrv, kAckDrv | kDriverOk), StatusChange::kInvalid);
}

TEST(DeviceStatus, SkippingOrClearingBitsIsInvalid) {
  EXPECT_EQ(modern(0, kAckDrv), StatusChange::kInvalid);             // two at once
  EXPECT_EQ(modern(0, kDriver), StatusChange::kInvalid);             // out of order
  EXPECT_EQ(modern(kAck, kAck | kFeaturesOk), StatusChange::kInvalid);
  EXPECT_EQ(modern(kFok, kAckDrv), StatusChange::kInvalid);          // clears FEATURES_OK
  EXPECT_EQ(modern(kFok | kDriverOk, kAck), StatusChange::kInvalid);
  EXPECT_EQ(modern(kAck, 0x10), StatusChange::kInvalid);             // undefined bit
}

TEST(DeviceStatus, ZeroIsAResetFromAnyState) {
  for (uint32_t s : {0u, kAck, kFok, kFok | kDriverOk, kFailed, kDeviceNeedsReset | kFok | kDriverOk}) {
    EXPECT_EQ(modern(s, 0), StatusChange::kReset) << s;
    EXPECT_EQ(legacy(s, 0), StatusChange::kReset) << s;
  }
}

TEST(DeviceStatus, FailedCanBeAddedInAnyStateAndThenNothingElse) {
  for (uint32_t s : {0u, kAck, kAckDrv, kFok, kFok | kDriverOk}) EXPECT_EQ(modern(s, s | kFailed), StatusChange::kFailed) << s;
  EXPECT_EQ(modern(kAck | kFailed, kAckDrv | kFailed), StatusChange::kInvalid);
  EXPECT_EQ(modern(kAck | kFailed, kAck | kFailed), StatusChange::kUnchanged);
}

TEST(DeviceStatus, DeviceNeedsResetEchoedByTheDriverIsIgnored) {
  // Linux writes get_status() | bit: the device's bit comes back.
  EXPECT_EQ(modern(kAckDrv | kDeviceNeedsReset, kFok | kDeviceNeedsReset), StatusChange::kFeaturesOk);
  EXPECT_EQ(modern(kFok | kDriverOk | kDeviceNeedsReset, kFok | kDriverOk | kDeviceNeedsReset),
            StatusChange::kUnchanged);
  // A driver cannot set it either: without the echo it is "unchanged".
  EXPECT_EQ(modern(kAck, kAck | kDeviceNeedsReset), StatusChange::kUnchanged);
}

TEST(DeviceStatus, RewritingTheSameValueIsUnchanged) {
  EXPECT_EQ(modern(kAck, kAck), StatusChange::kUnchanged);
  EXPECT_EQ(legacy(kAckDrv | kDriverOk, kAckDrv | kDriverOk), StatusChange::kUnchanged);
}

}  // namespace
}  // namespace kvmmio::virtio
