// SPDX-License-Identifier: BSD-2-Clause
// --kernel Image.gz: a synthetic Image, gzipped here, is read (header from
// its first bytes) and decompressed into guest RAM; what is not an Image
// inside, corrupt or truncated data, and output past the header's
// image_size (a gzip bomb) are refused without touching RAM beyond the
// kernel's area. EFI zboot and other PE files are refused with what to
// give instead.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>

#include "kvmmio/guest_memory.h"
#include "test_files.h"
#include "vmm/boot/boot_layout.h"
#include "vmm/boot/image_loader.h"

namespace kvmmio::vmm {
namespace {

using test::kModernFlags;
using test::make_image;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kRam = 0x40000000;

std::vector<uint8_t> gzip(const std::vector<uint8_t>& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> out(deflateBound(&z, data.size()));
  z.next_in = const_cast<Bytef*>(data.data());
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::vector<uint8_t> patterned_image(uint64_t image_size, size_t file_size) {
  std::vector<uint8_t> image = make_image(0, image_size, kModernFlags, file_size);
  for (size_t i = 64; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i * 7 ^ (i >> 9));
  return image;
}

TEST(ImageGz, IsDecompressedIntoTheKernelsArea) {
  test::TempDir dir;
  const std::vector<uint8_t> image = patterned_image(2 * kMiB, 300 * 1024);
  test::write_file(dir.file("Image.gz"), gzip(image));
  const KernelImage k(dir.file("Image.gz"));
  EXPECT_TRUE(k.compressed());
  EXPECT_EQ(k.header().image_size, 2 * kMiB);
  EXPECT_LT(k.file().size(), image.size());

  GuestMemory mem;
  mem.add_ram(kRam, 8 * kMiB);
  const BootLayout boot = plan_boot(kRam, 8 * kMiB, k.header(), std::nullopt);
  EXPECT_EQ(k.load(mem, boot.kernel_entry), image.size());
  std::vector<uint8_t> back(image.size());
  ASSERT_TRUE(mem.read(boot.kernel_entry, back.data(), back.size()));
  EXPECT_EQ(back, image);
}

TEST(ImageGz, AnImageThatFillsImageSizeExactlyIsAccepted) {
  test::TempDir dir;
  const std::vector<uint8_t> image = patterned_image(256 * 1024, 256 * 1024);
  test::write_file(dir.file("Image.gz"), gzip(image));
  const KernelImage k(dir.file("Image.gz"));
  GuestMemory mem;
  mem.add_ram(kRam, 4 * kMiB);
  EXPECT_EQ(k.load(mem, kRam + 2 * kMiB), image.size());
}

TEST(ImageGz, OutputPastImageSizeIsRefusedAndStaysInTheArea) {
  test::TempDir dir;
  // A header claiming 1 MiB, then 64 MiB of zeros: some 64 KiB of gzip.
  std::vector<uint8_t> bomb = make_image(0, 1 * kMiB, kModernFlags, 64 * kMiB);
  const std::vector<uint8_t> gz = gzip(bomb);
  bomb = {};
  ASSERT_LT(gz.size(), 1 * kMiB);
  test::write_file(dir.file("bomb.gz"), gz);
  const KernelImage k(dir.file("bomb.gz"));  // the header alone is fine
  GuestMemory mem;
  mem.add_ram(kRam, 4 * kMiB);
  // A marker just past the area: the refused output must not reach it.
  const uint8_t marker = 0xa5;
  ASSERT_TRUE(mem.write(kRam + 1 * kMiB, &marker, 1));
  const std::string msg = refusal([&] { k.load(mem, kRam); });
  EXPECT_NE(msg.find("decompresses to more than 1048576 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("image_size"), std::string::npos) << msg;
  uint8_t after = 0;
  ASSERT_TRUE(mem.read(kRam + 1 * kMiB, &after, 1));
  EXPECT_EQ(after, marker);
}

TEST(ImageGz, AHeaderLargerThanRamIsRefusedBeforeDecompressing) {
  test::TempDir dir;
  // image_size 512 MiB in a tiny file: refused by the boot plan for
  // --mem 128, before anything is decompressed.
  test::write_file(dir.file("big.gz"), gzip(make_image(0, 512 * kMiB, kModernFlags, 4096)));
  const KernelImage k(dir.file("big.gz"));
  const std::string msg = refusal([&] { plan_boot(kRam, 128 * kMiB, k.header(), std::nullopt); });
  EXPECT_NE(msg.find("--mem"), std::string::npos) << msg;
}

TEST(ImageGz, WhatIsNotAnImageInsideIsNamed) {
  test::TempDir dir;
  std::vector<uint8_t> elf(4096, 0);
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F';
  test::write_file(dir.file("vmlinux.gz"), gzip(elf));
  std::string msg = refusal([&] { KernelImage k(dir.file("vmlinux.gz")); });
  EXPECT_NE(msg.find("decompresses to an ELF file"), std::string::npos) << msg;

  test::write_file(dir.file("short.gz"), gzip(std::vector<uint8_t>(10, 'x')));
  msg = refusal([&] { KernelImage k(dir.file("short.gz")); });
  EXPECT_NE(msg.find("too small"), std::string::npos) << msg;
}

TEST(ImageGz, CorruptAndTruncatedDataAreRefused) {
  test::TempDir dir;
  const std::vector<uint8_t> gz = gzip(patterned_image(2 * kMiB, 200 * 1024));
  // Truncated: the header decompresses, the load finds the end missing.
  test::write_file(dir.file("cut.gz"), std::vector<uint8_t>(gz.begin(), gz.begin() + gz.size() / 2));
  const KernelImage cut(dir.file("cut.gz"));
  GuestMemory mem;
  mem.add_ram(kRam, 4 * kMiB);
  std::string msg = refusal([&] { cut.load(mem, kRam); });
  EXPECT_NE(msg.find("ends early"), std::string::npos) << msg;
  // Corrupt: the CRC-32 in the trailer no longer matches.
  std::vector<uint8_t> bad = gz;
  bad[bad.size() - 6] ^= 0xff;
  test::write_file(dir.file("bad.gz"), bad);
  const KernelImage corrupt(dir.file("bad.gz"));
  msg = refusal([&] { corrupt.load(mem, kRam); });
  EXPECT_NE(msg.find("corrupt"), std::string::npos) << msg;
}

TEST(ImageFormats, EfiZbootSaysHowToExtractTheImage) {
  test::TempDir dir;
  std::vector<uint8_t> zboot(8192, 0);
  std::memcpy(zboot.data(), "MZ\0\0zimg", 8);
  test::put_le(zboot, 8, 4096, 4);   // payload offset
  test::put_le(zboot, 12, 1234, 4);  // payload size
  std::memcpy(zboot.data() + 24, "gzip", 5);
  test::write_file(dir.file("vmlinuz.efi"), zboot);
  const std::string msg = refusal([&] { KernelImage k(dir.file("vmlinuz.efi")); });
  EXPECT_NE(msg.find("EFI zboot"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tail -c +4097 " + dir.file("vmlinuz.efi") + " | head -c 1234 | gunzip > Image"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("uncompressed Image"), std::string::npos) << msg;
}

TEST(ImageFormats, APeFileThatIsNoArm64ImageIsRefused) {
  test::TempDir dir;
  std::vector<uint8_t> pe(4096, 0);
  pe[0] = 'M', pe[1] = 'Z';
  test::put_le(pe, 0x3c, 0x80, 4);
  std::memcpy(pe.data() + 0x80, "PE\0\0", 4);
  test::write_file(dir.file("app.efi"), pe);
  const std::string msg = refusal([&] { KernelImage k(dir.file("app.efi")); });
  EXPECT_NE(msg.find("PE/EFI executable without the arm64 Image header"), std::string::npos) << msg;
  EXPECT_NE(msg.find("give an arm64 Image"), std::string::npos) << msg;
}

}  // namespace
}  // namespace kvmmio::vmm
