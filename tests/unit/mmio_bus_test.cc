// SPDX-License-Identifier: BSD-2-Clause
// MmioBus: claims, overlap refusal, dispatch with offsets, unclaimed accesses.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kvmmio/mmio_bus.h"

namespace kvmmio {
namespace {

struct RecordingDevice : MmioDevice {
  struct Access {
    uint64_t offset;
    size_t len;
    bool write;
    uint64_t value;
  };
  std::vector<Access> log;
  void mmio_read(uint64_t offset, std::span<uint8_t> data) override {
    log.push_back({offset, data.size(), false, 0});
    std::memset(data.data(), 0xab, data.size());
  }
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override {
    uint64_t v = 0;
    std::memcpy(&v, data.data(), data.size());
    log.push_back({offset, data.size(), true, v});
  }
};

TEST(MmioBus, DispatchesWithDeviceRelativeOffsets) {
  MmioBus bus;
  RecordingDevice a, b;
  bus.claim(0x1000, 0x200, a, "a");
  bus.claim(0x1200, 0x200, b, "b");  // adjacent is fine
  uint32_t v = 7;
  EXPECT_TRUE(bus.write(0x1050, {reinterpret_cast<uint8_t*>(&v), 4}));
  uint8_t buf[2];
  EXPECT_TRUE(bus.read(0x13fe, buf));
  ASSERT_EQ(a.log.size(), 1u);
  EXPECT_EQ(a.log[0].offset, 0x50u);
  EXPECT_EQ(a.log[0].value, 7u);
  ASSERT_EQ(b.log.size(), 1u);
  EXPECT_EQ(b.log[0].offset, 0x1feu);
  EXPECT_EQ(buf[0], 0xab);
  EXPECT_EQ(bus.unclaimed_accesses(), 0u);
}

TEST(MmioBus, RejectsOverlappingEmptyAndWrappingClaims) {
  MmioBus bus;
  RecordingDevice d;
  bus.claim(0x1000, 0x200, d, "first");
  EXPECT_THROW(bus.claim(0x11ff, 0x10, d, "overlap-end"), std::invalid_argument);
  EXPECT_THROW(bus.claim(0x0f00, 0x101, d, "overlap-start"), std::invalid_argument);
  EXPECT_THROW(bus.claim(0x0f00, 0x1000, d, "covers"), std::invalid_argument);
  EXPECT_THROW(bus.claim(0x5000, 0, d, "empty"), std::invalid_argument);
  EXPECT_THROW(bus.claim(UINT64_MAX - 0xf, 0x20, d, "wraps"), std::invalid_argument);
}

TEST(MmioBus, UnclaimedAndStraddlingAccessesAreGuestErrors) {
  MmioBus bus;
  RecordingDevice d;
  bus.claim(0x1000, 0x100, d, "d");
  uint8_t buf[4] = {1, 2, 3, 4};
  EXPECT_FALSE(bus.read(0x2000, buf));
  EXPECT_EQ(buf[0] | buf[1] | buf[2] | buf[3], 0);  // reads of nothing are zero
  EXPECT_FALSE(bus.read(0x10fe, buf));               // straddles the end
  EXPECT_FALSE(bus.write(0x0ffe, buf));              // straddles the start
  EXPECT_TRUE(d.log.empty());
  EXPECT_EQ(bus.unclaimed_accesses(), 3u);
}

}  // namespace
}  // namespace kvmmio
