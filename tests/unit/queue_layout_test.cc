// SPDX-License-Identifier: BSD-2-Clause
// Queue layout validation (virtio 1.2 2.7) and the legacy layout (2.7.2).
#include <gtest/gtest.h>

#include "kvmmio/virtio/queue_layout.h"

namespace kvmmio::virtio {
namespace {

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRamSize = 1 << 20;

class QueueLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override { memory.add_ram(kRam, kRamSize); }
  LayoutError check(QueueLayout l, uint32_t max = 256) { return validate_layout(memory, l, max); }
  static QueueLayout at(uint64_t base, uint32_t size) {
    return {size, base, base + desc_table_bytes(size), (base + desc_table_bytes(size) + avail_ring_bytes(size) + 3) & ~3ull};
  }
  GuestMemory memory;
};

TEST_F(QueueLayoutTest, PartSizesFollowTheSpecTable) {
  EXPECT_EQ(desc_table_bytes(256), 4096u);
  EXPECT_EQ(avail_ring_bytes(256), 6u + 512u);
  EXPECT_EQ(used_ring_bytes(256), 6u + 2048u);
}

TEST_F(QueueLayoutTest, AcceptsAWellFormedLayout) { EXPECT_EQ(check(at(kRam, 256)), LayoutError::kNone); }

TEST_F(QueueLayoutTest, RejectsBadSizes) {
  EXPECT_EQ(check(at(kRam, 0)), LayoutError::kSizeZero);
  EXPECT_EQ(check(at(kRam, 3)), LayoutError::kSizeNotPowerOfTwo);
  EXPECT_EQ(check(at(kRam, 96)), LayoutError::kSizeNotPowerOfTwo);
  EXPECT_EQ(check(at(kRam, 512), 256), LayoutError::kSizeAboveMax);
  EXPECT_EQ(check(at(kRam, 65536), 65536), LayoutError::kSizeAboveMax);  // spec maximum 32768
}

TEST_F(QueueLayoutTest, RejectsMisalignedParts) {
  QueueLayout l = at(kRam, 16);
  l.desc += 8;
  EXPECT_EQ(check(l), LayoutError::kDescMisaligned);
  l = at(kRam, 16);
  l.avail += 1;
  EXPECT_EQ(check(l), LayoutError::kAvailMisaligned);
  l = at(kRam, 16);
  l.used += 2;
  EXPECT_EQ(check(l), LayoutError::kUsedMisaligned);
}

TEST_F(QueueLayoutTest, RejectsPartsOutsideOrWrappingOrStraddlingRam) {
  QueueLayout l = at(kRam, 16);
  l.desc = 0x1000;  // below RAM
  EXPECT_EQ(check(l), LayoutError::kDescOutsideRam);
  l = at(kRam, 16);
  l.avail = kRam + kRamSize - 8;  // runs past the end
  EXPECT_EQ(check(l), LayoutError::kAvailOutsideRam);
  l = at(kRam, 16);
  l.used = UINT64_MAX - 63;  // wraps (and 4-aligned)
  EXPECT_EQ(check(l), LayoutError::kUsedOutsideRam);
  l = at(kRam + kRamSize - desc_table_bytes(256) + 16, 256);  // desc table straddles the end
  EXPECT_EQ(check(l), LayoutError::kDescOutsideRam);
}

TEST_F(QueueLayoutTest, LegacyLayoutPutsUsedAtTheNextAlignBoundary) {
  auto l = legacy_layout(0x40010, 4096, 4096, 256);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->desc, 0x40010000u);
  EXPECT_EQ(l->avail, 0x40010000u + 4096);
  // avail ends at +4096+518: the used ring starts at the next page.
  EXPECT_EQ(l->used, 0x40012000u);
  auto small = legacy_layout(1, 4096, 64, 8);
  ASSERT_TRUE(small);
  // desc 4096 + 128 bytes, avail 6 + 16 bytes: ends at 4246, aligned to 4288.
  EXPECT_EQ(small->used, 4288u);
  EXPECT_FALSE(legacy_layout(1, 4000, 4096, 8));
  EXPECT_FALSE(legacy_layout(1, 4096, 0, 8));
}

TEST_F(QueueLayoutTest, LegacyLayoutOfTheLargestPfnDoesNotOverflow) {
  auto l = legacy_layout(UINT32_MAX, 1u << 31, 1u << 31, 32768);
  ASSERT_TRUE(l);
  EXPECT_GT(l->used, l->desc);
  EXPECT_EQ(check(*l, 32768), LayoutError::kDescOutsideRam);
}

}  // namespace
}  // namespace kvmmio::virtio
