// SPDX-License-Identifier: BSD-2-Clause
// Boot files: the arm64 Linux Image (header parsed and checked per
// Documentation/arm64/booting.rst, "4. Call the kernel image") and the
// initrd, opened once and copied into guest RAM through GuestMemory::span().
//
// Anything wrong with a file the user gave is a UserError naming the file,
// what it looks like instead (gzip, ELF vmlinux, x86 bzImage, ...) and what
// to give instead.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::vmm {

// The 64-byte header at the start of an arm64 Image (all fields little
// endian since Linux 3.17).
struct ImageHeader {
  static constexpr size_t kSize = 64;
  static constexpr size_t kMagicOffset = 56;
  static constexpr uint32_t kMagic = 0x644d5241;  // "ARM\x64"

  uint64_t text_offset = 0;  // the Image goes this far above a 2 MiB aligned base
  uint64_t image_size = 0;   // bytes from the Image's start the kernel may use (incl. bss)
  uint64_t flags = 0;

  // flags bits 1-2: 0 unspecified, else 4, 16 or 64.
  unsigned page_size_kib() const;
  // flags bit 3: the 2 MiB base may be anywhere (else: near the start of RAM).
  bool placement_anywhere() const { return (flags >> 3) & 1; }
  // flags bits 4-63, reserved today.
  uint64_t reserved_flags() const { return flags >> 4; }
};

// Parses and checks the header of a kernel file. `head` holds the file's
// first bytes (at least ImageHeader::kSize when the file has them, and up
// to 0x210 to recognise an x86 bzImage); `file_size` is the whole file's.
// `name` appears in messages; `decompressed`: `head` is what an Image.gz
// decompresses to (said so in messages). Throws UserError.
ImageHeader parse_image_header(std::span<const uint8_t> head, uint64_t file_size,
                               const std::string& name, bool decompressed = false);

// A read-only file to be copied into guest RAM, opened (and checked to be a
// non-empty regular file) on construction, by the rule of
// kvmmio/base/user_path.h (no other user's links or files where others can
// write).
class BootFile {
 public:
  // `option` ("--kernel", "--initrd") names the file in messages.
  BootFile(const std::string& path, const std::string& option);

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Up to n bytes from the start of the file.
  std::vector<uint8_t> head(size_t n) const;
  // Fills `buf` from `offset` on; fewer bytes at the end of the file.
  size_t read_at(uint64_t offset, std::span<uint8_t> buf) const;
  // Copies the whole file to guest physical address `gpa` (through the
  // checked accessor; std::runtime_error if the range is not RAM).
  void load(const GuestMemory& memory, uint64_t gpa) const;

 private:
  std::string path_;
  std::string option_;
  UniqueFd fd_;
  uint64_t size_ = 0;
};

// The kernel: a BootFile whose header has been checked. An Image or an
// Image.gz (gzip: Ubuntu and others ship arm64 kernels so), whose header is
// read by decompressing its first bytes only; the rest is decompressed by
// load() straight into guest RAM, bounded by the header's image_size.
// EFI zboot images, PE files and other kernels are refused, saying what to
// give instead.
class KernelImage {
 public:
  explicit KernelImage(const std::string& path);

  const BootFile& file() const { return file_; }
  const ImageHeader& header() const { return header_; }
  bool compressed() const { return gzip_; }
  // Copies (or decompresses) the Image to `gpa`, where plan_boot() put it;
  // returns its size. UserError for an Image.gz that turns out bad
  // (corrupt, truncated, larger than image_size); std::runtime_error if
  // the range is not RAM.
  uint64_t load(const GuestMemory& memory, uint64_t gpa) const;

 private:
  BootFile file_;
  bool gzip_;
  ImageHeader header_;
};

}  // namespace kvmmio::vmm
