// SPDX-License-Identifier: BSD-2-Clause
// arm64 Image headers (Documentation/arm64/booting.rst): good ones parse,
// corrupted ones and other kinds of kernel files are refused with a message
// that says what the file is and what to give instead. Boot files load
// into guest memory through the checked accessor.
#include "vmm/boot/image_loader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <random>

#include "test_files.h"

namespace kvmmio::vmm {
namespace {

using test::kModernFlags;
using test::make_image;

constexpr uint64_t kMiB = uint64_t{1} << 20;

ImageHeader parse(const std::vector<uint8_t>& file) {
  return parse_image_header(file, file.size(), "Image");
}

std::string refusal(const std::vector<uint8_t>& file) {
  try {
    parse(file);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ImageHeader, ModernImageParses) {
  const ImageHeader h = parse(make_image(0, 34 * kMiB, kModernFlags));
  EXPECT_EQ(h.text_offset, 0u);
  EXPECT_EQ(h.image_size, 34 * kMiB);
  EXPECT_EQ(h.page_size_kib(), 4u);
  EXPECT_TRUE(h.placement_anywhere());
  EXPECT_EQ(h.reserved_flags(), 0u);
}

TEST(ImageHeader, OlderLayoutsAndPageSizesParse) {
  // Before v5.8 text_offset was 0x80000; flags bit 3 clear: near RAM start.
  const ImageHeader h = parse(make_image(0x80000, 20 * kMiB, 0x2));
  EXPECT_EQ(h.text_offset, 0x80000u);
  EXPECT_FALSE(h.placement_anywhere());
  EXPECT_EQ(parse(make_image(0, kMiB, 0x4)).page_size_kib(), 16u);
  EXPECT_EQ(parse(make_image(0, kMiB, 0x6)).page_size_kib(), 64u);
  EXPECT_EQ(parse(make_image(0, kMiB, 0x0)).page_size_kib(), 0u);
  // Reserved bits: a newer kernel's; booted with a warning.
  EXPECT_EQ(parse(make_image(0, kMiB, 0x10 | kModernFlags)).reserved_flags(), 1u);
}

TEST(ImageHeader, ImageSizeMayEqualTheFile) {
  EXPECT_NO_THROW(parse(make_image(0, 8192, kModernFlags, 8192)));
}

TEST(ImageHeader, CorruptedHeadersAreRefused) {
  EXPECT_NE(refusal(make_image(0, 0, kModernFlags)).find("before Linux 3.17"), std::string::npos);
  EXPECT_NE(refusal(make_image(0, kMiB, kModernFlags | 1)).find("big-endian"), std::string::npos);
  EXPECT_NE(refusal(make_image(0x80001, kMiB, kModernFlags)).find("text_offset 0x80001"),
            std::string::npos);
  EXPECT_NE(refusal(make_image(2 * kMiB, 4 * kMiB, kModernFlags)).find("below 2 MiB"),
            std::string::npos);
  EXPECT_NE(refusal(make_image(0, 4096, kModernFlags, 8192)).find("smaller than the file"),
            std::string::npos);
  EXPECT_NE(refusal(make_image(0, uint64_t{8} << 30, kModernFlags)).find("implausible"),
            std::string::npos);
  for (const auto& msg :
       {refusal(make_image(0, 0, kModernFlags)), refusal(make_image(0, 4096, 0xa, 8192))})
    EXPECT_NE(msg.find("--kernel Image"), std::string::npos) << msg;
}

TEST(ImageHeader, OtherKernelFormatsAreNamed) {
  std::vector<uint8_t> gz(4096, 0);
  gz[0] = 0x1f, gz[1] = 0x8b;
  EXPECT_NE(refusal(gz).find("gzip-compressed"), std::string::npos);
  EXPECT_NE(refusal(gz).find("gunzip"), std::string::npos);

  std::vector<uint8_t> elf(4096, 0);
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F';
  EXPECT_NE(refusal(elf).find("ELF file (vmlinux?)"), std::string::npos);

  // An x86 bzImage: the "HdrS" setup header signature at 0x202.
  std::vector<uint8_t> bz(8192, 0);
  bz[0x1fe] = 0x55, bz[0x1ff] = 0xaa;
  bz[0x202] = 'H', bz[0x203] = 'd', bz[0x204] = 'r', bz[0x205] = 'S';
  EXPECT_NE(refusal(bz).find("x86 bzImage"), std::string::npos);
  EXPECT_NE(refusal(bz).find("arm64"), std::string::npos);

  std::vector<uint8_t> zboot(4096, 0);
  zboot[0] = 'M', zboot[1] = 'Z', zboot[4] = 'z', zboot[5] = 'i', zboot[6] = 'm', zboot[7] = 'g';
  EXPECT_NE(refusal(zboot).find("zboot"), std::string::npos);
}

TEST(ImageHeader, RandomBytesAndShortFilesAreRefused) {
  std::mt19937 rng(42);
  for (int i = 0; i < 100; ++i) {
    std::vector<uint8_t> junk(4096);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    EXPECT_NE(refusal(junk).find("not an arm64 Linux Image"), std::string::npos);
  }
  EXPECT_NE(refusal(std::vector<uint8_t>(63, 0)).find("too small"), std::string::npos);
  // The magic alone does not make an Image: the fields are checked too.
  std::vector<uint8_t> magic_only(64, 0);
  test::put_le(magic_only, 56, 0x644d5241, 4);
  EXPECT_NE(refusal(magic_only).find("3.17"), std::string::npos);
}

TEST(BootFile, MissingDirectoryAndEmptyFilesAreUserErrors) {
  test::TempDir dir;
  auto message = [](const std::string& path) {
    try {
      BootFile f(path, "--initrd");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message(dir.file("nope")).find("--initrd " + dir.file("nope") + ": cannot open"),
            std::string::npos);
  ::mkdir(dir.file("d").c_str(), 0755);
  EXPECT_NE(message(dir.file("d")).find("not a regular file"), std::string::npos);
  test::write_file(dir.file("empty"), {});
  EXPECT_NE(message(dir.file("empty")).find("empty"), std::string::npos);
}

TEST(BootFile, LoadsIntoGuestMemoryThroughTheCheckedAccessor) {
  test::TempDir dir;
  std::vector<uint8_t> bytes(3 * 4096 + 5);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i ^ (i >> 8));
  test::write_file(dir.file("blob"), bytes);
  BootFile f(dir.file("blob"), "--initrd");
  EXPECT_EQ(f.size(), bytes.size());
  EXPECT_EQ(f.head(10), std::vector<uint8_t>(bytes.begin(), bytes.begin() + 10));

  GuestMemory mem;
  mem.add_ram(0x40000000, 64 * 1024);
  f.load(mem, 0x40001000);
  std::vector<uint8_t> back(bytes.size());
  ASSERT_TRUE(mem.read(0x40001000, back.data(), back.size()));
  EXPECT_EQ(back, bytes);
  // Not RAM (runs past the end): refused, not written.
  EXPECT_THROW(f.load(mem, 0x40000000 + 64 * 1024 - 100), std::runtime_error);
}

TEST(KernelImage, OpensAndChecksAFile) {
  test::TempDir dir;
  test::write_file(dir.file("Image"), make_image(0, 4 * kMiB, kModernFlags, 64 * 1024));
  KernelImage k(dir.file("Image"));
  EXPECT_EQ(k.header().image_size, 4 * kMiB);
  EXPECT_EQ(k.file().size(), 64u * 1024);

  std::vector<uint8_t> bz(8192, 0);
  bz[0x202] = 'H', bz[0x203] = 'd', bz[0x204] = 'r', bz[0x205] = 'S';
  test::write_file(dir.file("bzImage"), bz);
  try {
    KernelImage bad(dir.file("bzImage"));
    ADD_FAILURE() << "bzImage accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--kernel " + dir.file("bzImage") + ": is an x86 bzImage"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace kvmmio::vmm
