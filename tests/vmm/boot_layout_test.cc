// SPDX-License-Identifier: BSD-2-Clause
// Placement of kernel, initrd and DTB (booting.rst): alignment, no
// overlaps, the 32 GiB window, and a "--mem" advice that really fits.
#include "vmm/boot/boot_layout.h"

#include <gtest/gtest.h>

#include "test_files.h"
#include "vmm/boot/memory_map_arm64.h"

namespace kvmmio::vmm {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

ImageHeader header(uint64_t text_offset, uint64_t image_size) {
  ImageHeader h;
  h.text_offset = text_offset;
  h.image_size = image_size;
  h.flags = test::kModernFlags;
  return h;
}

void expect_valid(const BootLayout& l, uint64_t ram_base, uint64_t ram_size, const ImageHeader& h,
                  std::optional<uint64_t> initrd) {
  EXPECT_EQ(l.kernel_base % (2 * kMiB), 0u);
  EXPECT_EQ(l.kernel_base, ram_base);  // as close to the start of RAM as can be
  EXPECT_EQ(l.kernel_entry, l.kernel_base + h.text_offset);
  EXPECT_EQ(l.kernel_end, l.kernel_entry + h.image_size);
  EXPECT_EQ(l.dtb % 8, 0u);
  EXPECT_EQ(l.dtb % (2 * kMiB), 0u);  // a 2 MiB block of its own
  EXPECT_GE(l.dtb, l.kernel_end);
  EXPECT_LE(l.dtb + BootLayout::kDtbMaxSize, ram_base + ram_size);
  ASSERT_EQ(l.initrd.has_value(), initrd.has_value());
  if (initrd) {
    EXPECT_EQ(l.initrd->size(), *initrd);
    EXPECT_EQ(l.initrd->start % 4096, 0u);
    EXPECT_GE(l.initrd->start, l.kernel_end);  // never over the kernel's image_size
    EXPECT_LE(l.initrd->end, l.dtb);           // nor over the DTB block
    // One 1 GiB aligned window of at most 32 GiB covers kernel and initrd.
    const uint64_t window = l.kernel_base / kGiB * kGiB;
    EXPECT_LE(l.initrd->end, window + 32 * kGiB);
  }
}

TEST(BootLayout, TypicalGuest) {
  const ImageHeader h = header(0, 34 * kMiB);
  const BootLayout l = plan_boot(layout::kRamBase, 512 * kMiB, h, 12 * kMiB + 123);
  expect_valid(l, layout::kRamBase, 512 * kMiB, h, 12 * kMiB + 123);
  EXPECT_EQ(l.kernel_entry, 0x40000000u);
  EXPECT_EQ(l.dtb, 0x40000000u + 510 * kMiB);
  EXPECT_EQ(l.initrd->end, l.initrd->start + 12 * kMiB + 123);
}

TEST(BootLayout, TextOffsetIsHonoured) {
  const ImageHeader h = header(0x80000, 20 * kMiB);
  const BootLayout l = plan_boot(layout::kRamBase, 256 * kMiB, h, std::nullopt);
  expect_valid(l, layout::kRamBase, 256 * kMiB, h, std::nullopt);
  EXPECT_EQ(l.kernel_entry, 0x40080000u);
}

TEST(BootLayout, OddMemorySizesKeepTheDtbBlockAligned) {
  const ImageHeader h = header(0, 30 * kMiB);
  for (uint64_t mem : {65 * kMiB, 99 * kMiB, 1025 * kMiB})
    expect_valid(plan_boot(layout::kRamBase, mem, h, 5 * kMiB), layout::kRamBase, mem, h, 5 * kMiB);
}

TEST(BootLayout, LargeRamKeepsTheInitrdInsideTheWindow) {
  const ImageHeader h = header(0, 34 * kMiB);
  const BootLayout l = plan_boot(layout::kRamBase, 64 * kGiB, h, 100 * kMiB);
  expect_valid(l, layout::kRamBase, 64 * kGiB, h, 100 * kMiB);
  EXPECT_EQ(l.dtb + BootLayout::kDtbMaxSize, 33 * kGiB);
}

TEST(BootLayout, TooLittleMemoryAdvisesASizeThatFits) {
  const ImageHeader h = header(0, 34 * kMiB);
  for (uint64_t initrd : {uint64_t{0}, 20 * kMiB, 20 * kMiB + 1}) {
    std::optional<uint64_t> rd = initrd ? std::optional(initrd) : std::nullopt;
    try {
      plan_boot(layout::kRamBase, 32 * kMiB, h, rd);
      ADD_FAILURE() << "fitted";
    } catch (const UserError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("do not fit in --mem 32M"), std::string::npos) << msg;
      const size_t at = msg.find("at least --mem ");
      ASSERT_NE(at, std::string::npos) << msg;
      const uint64_t advised = std::stoull(msg.substr(at + 15)) * kMiB;
      // The advice is right: it fits, and one MiB less does not.
      expect_valid(plan_boot(layout::kRamBase, advised, h, rd), layout::kRamBase, advised, h, rd);
      EXPECT_THROW(plan_boot(layout::kRamBase, advised - kMiB, h, rd), UserError);
    }
  }
}

}  // namespace
}  // namespace kvmmio::vmm
