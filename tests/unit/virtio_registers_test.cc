// SPDX-License-Identifier: BSD-2-Clause
// The register file's access rules (virtio 1.2 4.2.2, 4.2.2.2, 4.2.4): what
// each layout has, directions, widths, the config window, ConfigGeneration.
// Every refused access is a counted guest error and changes nothing.
#include <gtest/gtest.h>

#include <cstring>

#include "../virtio/harness.h"
#include "kvmmio/base/error.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::virtio {
namespace {

using test::EchoDevice;
using test::TransportHarness;

TransportHarness::Config version(uint32_t v) {
  TransportHarness::Config c;
  c.options.version = v;
  return c;
}

class Registers : public ::testing::TestWithParam<uint32_t> {
 protected:
  Registers() : h(version(GetParam())) { EXPECT_TRUE(h.driver->probe()); }
  uint32_t read(uint32_t offset) { return h.reg(offset); }
  void write(uint32_t offset, uint32_t value) { h.driver->write(offset, value); }
  uint64_t errors() const { return h.counters().guest_errors.load(); }
  bool modern() const { return GetParam() == kVersionModern; }
  TransportHarness h;
};

TEST_P(Registers, IdentifyAsAVirtioMmioDevice) {
  EXPECT_EQ(read(reg::kMagicValue), kMagic);
  EXPECT_EQ(read(reg::kVersion), GetParam());
  EXPECT_EQ(read(reg::kDeviceId), EchoDevice::kDeviceId);
  EXPECT_EQ(read(reg::kVendorId), kVendorId);
  EXPECT_EQ(errors(), 0u);
}

TEST_P(Registers, FeatureWordsByLayout) {
  write(reg::kDeviceFeaturesSel, 0);
  const uint32_t low = read(reg::kDeviceFeatures);
  EXPECT_TRUE(low & EchoDevice::kEchoFeature);
  EXPECT_TRUE(low & feature::bit(feature::kRingIndirectDesc));
  EXPECT_TRUE(low & feature::bit(feature::kRingEventIdx));
  write(reg::kDeviceFeaturesSel, 1);
  const uint32_t high = read(reg::kDeviceFeatures);
  if (modern()) {
    EXPECT_EQ(high, (feature::bit(feature::kVersion1) | feature::bit(feature::kRingReset)) >> 32);
  } else {
    EXPECT_EQ(high, 0u);  // a legacy device has 32 feature bits
  }
  write(reg::kDeviceFeaturesSel, 2);
  EXPECT_EQ(read(reg::kDeviceFeatures), 0u);
  EXPECT_EQ(errors(), 0u);
}

TEST_P(Registers, ReadsOfWriteOnlyRegistersAreGuestErrorsAndReadZero) {
  const uint32_t write_only[] = {reg::kDeviceFeaturesSel, reg::kDriverFeatures, reg::kDriverFeaturesSel,
                                 reg::kQueueSel, reg::kQueueNum, reg::kQueueNotify, reg::kInterruptAck};
  write(reg::kQueueSel, 1);
  for (uint32_t r : write_only) EXPECT_EQ(read(r), 0u) << std::hex << r;
  EXPECT_EQ(errors(), std::size(write_only));
}

TEST_P(Registers, WritesToReadOnlyRegistersAreGuestErrorsAndIgnored) {
  const uint32_t read_only[] = {reg::kMagicValue, reg::kVersion, reg::kDeviceId, reg::kVendorId,
                                reg::kDeviceFeatures, reg::kQueueNumMax, reg::kInterruptStatus};
  for (uint32_t r : read_only) write(r, 0x12345678);
  EXPECT_EQ(errors(), std::size(read_only));
  EXPECT_EQ(read(reg::kMagicValue), kMagic);
  EXPECT_EQ(read(reg::kQueueNumMax), 256u);
  EXPECT_EQ(read(reg::kInterruptStatus), 0u);
}

TEST_P(Registers, RegistersOfTheOtherLayoutDoNotExist) {
  const uint32_t legacy_only[] = {reg::kGuestPageSize, reg::kQueueAlign, reg::kQueuePfn};
  const uint32_t modern_only[] = {reg::kQueueReady, reg::kQueueDescLow, reg::kQueueDescHigh,
                                  reg::kQueueDriverLow, reg::kQueueDriverHigh, reg::kQueueDeviceLow,
                                  reg::kQueueDeviceHigh, reg::kShmSel, reg::kQueueReset};
  for (uint32_t r : modern() ? std::span<const uint32_t>(legacy_only) : std::span<const uint32_t>(modern_only))
    write(r, 1);
  const uint64_t expected = modern() ? std::size(legacy_only) : std::size(modern_only);
  EXPECT_EQ(errors(), expected);
  if (!modern()) {
    EXPECT_EQ(read(reg::kConfigGeneration), 0u);
    EXPECT_EQ(read(reg::kShmLenLow), 0u);
    EXPECT_EQ(errors(), expected + 2);
  }
}

TEST_P(Registers, HolesInTheRegisterFileAreGuestErrors) {
  for (uint32_t hole : {0x018u, 0x02cu, 0x048u, 0x054u, 0x068u, 0x074u, 0x0f8u}) {
    EXPECT_EQ(read(hole), 0u);
    write(hole, 1);
  }
  EXPECT_EQ(errors(), 14u);
}

TEST_P(Registers, RegistersTakeOnlyAlignedWordAccesses) {
  uint8_t data[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  h.transport->mmio_read(reg::kMagicValue, {data, 1});
  EXPECT_EQ(data[0], 0);
  h.transport->mmio_read(reg::kMagicValue, {data, 2});
  h.transport->mmio_read(reg::kMagicValue, {data, 8});
  EXPECT_EQ(data[7], 0);
  h.transport->mmio_read(reg::kMagicValue + 2, {data, 4});  // misaligned word
  const uint8_t ack[2] = {1, 0};
  h.transport->mmio_write(reg::kStatus, {ack, 1});  // a byte write to Status
  EXPECT_EQ(errors(), 5u);
  EXPECT_EQ(read(reg::kStatus), 0u);  // ignored
}

TEST_P(Registers, QueuesBeyondTheDeviceAreUnavailable) {
  write(reg::kQueueSel, 2);  // the echo device has queues 0 and 1
  EXPECT_EQ(read(reg::kQueueNumMax), 0u);
  EXPECT_EQ(errors(), 0u);
  write(reg::kQueueNum, 8);
  EXPECT_EQ(errors(), 1u);
  write(reg::kQueueSel, 0xffffffff);
  EXPECT_EQ(read(reg::kQueueNumMax), 0u);
}

// --- the configuration window ---------------------------------------------

TEST_P(Registers, ConfigReadsBytesHalvesAndWords) {
  // EchoDevice's config is 0xc0, 0xc1, ... 0xcf.
  EXPECT_EQ(h.driver->read_config(0, 1), 0xc0u);
  uint8_t half[2];
  h.transport->mmio_read(reg::kConfig + 2, half);
  EXPECT_EQ(half[0], 0xc2);
  EXPECT_EQ(half[1], 0xc3);
  uint8_t word[4];
  h.transport->mmio_read(reg::kConfig + 12, word);
  uint32_t v;
  std::memcpy(&v, word, 4);
  EXPECT_EQ(v, 0xcfcecdccu);
  EXPECT_EQ(errors(), 0u);
}

TEST_P(Registers, ConfigAccessesMustBeNaturallyAlignedAndNarrow) {
  uint8_t data[8];
  std::memset(data, 0xff, sizeof(data));
  h.transport->mmio_read(reg::kConfig + 1, {data, 2});  // misaligned half
  EXPECT_EQ(data[0], 0);
  h.transport->mmio_read(reg::kConfig + 2, {data, 4});  // misaligned word
  h.transport->mmio_read(reg::kConfig, {data, 8});      // 64-bit: two words instead (4.2.2.2)
  EXPECT_EQ(data[7], 0);
  h.transport->mmio_write(reg::kConfig + 3, {data, 2});
  EXPECT_EQ(errors(), 4u);
}

TEST_P(Registers, ConfigBeyondTheDevicesSpaceIsAGuestError) {
  uint8_t data[4] = {1, 2, 3, 4};
  h.transport->mmio_read(reg::kConfig + EchoDevice::kConfigSize, {data, 1});
  EXPECT_EQ(data[0], 0);
  h.transport->mmio_read(reg::kConfig + EchoDevice::kConfigSize - 2, {data, 4});  // straddles (and misaligned)
  h.transport->mmio_read(reg::kConfig + 0xfc, {data, 4});
  h.transport->mmio_write(reg::kConfig + 0x80, {data, 4});
  h.transport->mmio_read(0x1000, {data, 4});  // far beyond the window
  EXPECT_EQ(errors(), 5u);
}

TEST_P(Registers, ConfigWritesReachTheDeviceAndMoveTheGeneration) {
  const uint32_t generation = h.driver->config_generation();
  h.driver->write_config(4, 1, 0x5a);
  EXPECT_EQ(h.driver->read_config(4, 1), 0x5au);
  if (modern()) {
    EXPECT_NE(h.driver->config_generation(), generation);
  }
  EXPECT_EQ(errors(), 0u);
}

TEST_P(Registers, DeviceConfigChangeMovesTheGenerationAndInterruptsOnceDriverOk) {
  const uint32_t generation = h.driver->config_generation();
  h.device->change_config(0, 0x11);  // before DRIVER_OK: no interrupt
  if (modern()) {
    EXPECT_EQ(h.driver->config_generation(), generation + 1);
  }
  EXPECT_EQ(h.interrupts(), 0u);
  EXPECT_EQ(read(reg::kInterruptStatus), 0u);

  h.bring_up();
  h.interrupts();
  h.device->change_config(0, 0x22);
  if (modern()) {
    EXPECT_EQ(h.driver->config_generation(), generation + 2);
  }
  EXPECT_EQ(h.interrupts(), 1u);
  EXPECT_EQ(h.driver->interrupt(), interrupt::kConfigChange);  // read and ACK
  EXPECT_EQ(read(reg::kInterruptStatus), 0u);
  EXPECT_EQ(h.driver->read_config(0, 1), 0x22u);
  EXPECT_EQ(h.counters().config_interrupts.load(), 1u);
}

TEST_P(Registers, AcknowledgingUndefinedInterruptBitsIsAGuestError) {
  write(reg::kInterruptAck, 0x4);
  EXPECT_EQ(errors(), 1u);
}

TEST_P(Registers, GuestErrorsAreAllCountedWhileTheLogIsRateLimited) {
  for (int i = 0; i < 5000; ++i) read(0x018);
  EXPECT_EQ(errors(), 5000u);
}

INSTANTIATE_TEST_SUITE_P(Versions, Registers, ::testing::Values(kVersionLegacy, kVersionModern),
                         [](const auto& info) { return info.param == 1 ? "Legacy" : "Modern"; });

TEST(ModernRegisters, SharedMemoryRegionsDoNotExist) {
  test::TransportHarness h(version(kVersionModern));
  for (uint32_t id : {0u, 1u, 255u}) {
    h.driver->write(reg::kShmSel, id);
    EXPECT_EQ(h.reg(reg::kShmLenLow), kNoShmRegion);
    EXPECT_EQ(h.reg(reg::kShmLenHigh), kNoShmRegion);
    EXPECT_EQ(h.reg(reg::kShmBaseLow), kNoShmRegion);
    EXPECT_EQ(h.reg(reg::kShmBaseHigh), kNoShmRegion);
  }
  EXPECT_EQ(h.counters().guest_errors.load(), 0u);
}

}  // namespace
}  // namespace kvmmio::virtio
