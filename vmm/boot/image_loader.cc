// SPDX-License-Identifier: BSD-2-Clause
// arm64 Image header checks and boot-file loading.
#include "vmm/boot/image_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/user_path.h"
#include "vmm/boot/gzip_file.h"

namespace kvmmio::vmm {
namespace {

uint32_t le32(std::span<const uint8_t> b, size_t off) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | b[off + i];
  return v;
}

uint64_t le64(std::span<const uint8_t> b, size_t off) {
  return le32(b, off) | (uint64_t{le32(b, off + 4)} << 32);
}

bool has_bytes(std::span<const uint8_t> b, size_t off, const char* text) {
  const size_t n = std::strlen(text);
  return b.size() >= off + n && std::memcmp(b.data() + off, text, n) == 0;
}

// A zboot image's header (drivers/firmware/efi/libstub/zboot-header.S):
// "MZ", "zimg" at 4, the payload's offset and size at 8 and 12, the
// compression's name (NUL-terminated) at 24.
std::string zboot_advice(std::span<const uint8_t> head, const std::string& name) {
  std::string comp;
  for (size_t i = 24; i < std::min<size_t>(head.size(), 56) && head[i] && comp.size() < 16; ++i)
    comp += std::isprint(head[i]) ? static_cast<char>(head[i]) : '?';
  if (head.size() < 16 || comp.empty())
    return "extract the Image from its payload, or give the distribution's uncompressed Image";
  const uint32_t offset = le32(head, 8), size = le32(head, 12);
  const std::string tool = comp == "gzip" ? "gunzip" : comp == "zstd" ? "zstd -d" : comp == "xz" ? "xz -d"
                           : comp + " -d";
  return "its Image is " + comp + "-compressed at offset " + std::to_string(offset) + " (" +
         std::to_string(size) + " bytes): tail -c +" + std::to_string(uint64_t{offset} + 1) + " " +
         name + " | head -c " + std::to_string(size) + " | " + tool +
         " > Image, then --kernel Image; or give the distribution's uncompressed Image";
}

// What a file that is not an arm64 Image most likely is, for the message.
// `decompressed`: `head` is an Image.gz's content.
std::string not_an_image(std::span<const uint8_t> head, const std::string& name, bool decompressed) {
  const std::string prefix =
      "--kernel " + name + (decompressed ? ": is gzip data that decompresses to " : ": is ");
  if (has_bytes(head, 0, "\x1f\x8b"))
    return prefix + "gzip-compressed data; kvmmio decompresses one layer of gzip: gunzip -c " +
           name + " > Image, then --kernel Image";
  if (has_bytes(head, 0,
                "\x7f"
                "ELF"))
    return prefix +
           "an ELF file (vmlinux?); boot the Image made from it: "
           "arch/arm64/boot/Image";
  if (has_bytes(head, 0x202, "HdrS"))
    return prefix +
           "an x86 bzImage; kvmmio boots arm64 kernels: give an arm64 Image "
           "(arch/arm64/boot/Image, or /boot/vmlinuz-*-arm64 of Debian's arm64 kernel)";
  if (has_bytes(head, 0, "MZ") && has_bytes(head, 4, "zimg"))
    return prefix + "an EFI zboot image (vmlinuz.efi: an EFI program that decompresses the kernel); "
           "kvmmio boots the Image itself, without EFI: " + zboot_advice(head, name);
  if (has_bytes(head, 0, "MZ"))
    return prefix +
           "a PE/EFI executable without the arm64 Image header (an EFI application, or an x86 "
           "kernel?); kvmmio does not run EFI programs: give an arm64 Image "
           "(arch/arm64/boot/Image, Image.gz, or /boot/vmlinuz-*-arm64 of Debian's arm64 kernel)";
  return "--kernel " + name + (decompressed ? ": decompresses to data that is" : ": is") +
         " not an arm64 Linux Image (no \"ARM\\x64\" magic at offset 56); give "
         "arch/arm64/boot/Image (or Image.gz), or /boot/vmlinuz-*-arm64 of Debian's arm64 kernel";
}

// Real Images are tens of MiB; a far larger image_size means a corrupted
// header, and trusting it would only produce a misleading "--mem" advice.
constexpr uint64_t kMaxPlausibleImageSize = uint64_t{1} << 30;
constexpr uint64_t kTextOffsetLimit = uint64_t{2} << 20;  // below the 2 MiB alignment
// booting.rst's rule for the guest's Image, whatever the host's page size.
constexpr uint64_t kTextOffsetAlign = 4096;

}  // namespace

unsigned ImageHeader::page_size_kib() const {
  switch ((flags >> 1) & 3) {
    case 1: return 4;
    case 2: return 16;
    case 3: return 64;
    default: return 0;
  }
}

ImageHeader parse_image_header(std::span<const uint8_t> head, uint64_t file_size,
                               const std::string& name, bool decompressed) {
  const std::string prefix = "--kernel " + name + ": ";
  if (file_size < ImageHeader::kSize || head.size() < ImageHeader::kSize)
    throw UserError(prefix + "only " + std::to_string(file_size) +
                    " bytes, too small for an arm64 Image (its header alone is 64 bytes); give "
                    "arch/arm64/boot/Image");
  if (le32(head, ImageHeader::kMagicOffset) != ImageHeader::kMagic)
    throw UserError(not_an_image(head, name, decompressed));

  ImageHeader h;
  h.text_offset = le64(head, 8);
  h.image_size = le64(head, 16);
  h.flags = le64(head, 24);

  if (h.image_size == 0)
    throw UserError(prefix +
                    "image_size is 0: an Image from before Linux 3.17, whose load "
                    "offset is not reliably little-endian; kvmmio boots Linux 3.17 or later");
  if (h.flags & 1)
    throw UserError(prefix +
                    "is a big-endian kernel (flags bit 0); kvmmio boots little-endian "
                    "arm64 kernels");
  if (h.text_offset % kTextOffsetAlign != 0 || h.text_offset >= kTextOffsetLimit) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(h.text_offset));
    throw UserError(prefix + "corrupted header: text_offset " + buf +
                    " is not a multiple of 4 KiB below 2 MiB; give an intact Image");
  }
  if (h.image_size > kMaxPlausibleImageSize)
    throw UserError(prefix + "corrupted header: image_size " + std::to_string(h.image_size) +
                    " bytes is implausible (over 1 GiB); give an intact Image");
  if (h.image_size < file_size)
    throw UserError(prefix + "corrupted header: image_size (" + std::to_string(h.image_size) +
                    " bytes, which includes bss) is smaller than the file (" +
                    std::to_string(file_size) + " bytes); give an intact Image");
  if (h.reserved_flags() != 0)
    KVMMIO_LOG_WARN("--kernel %s: reserved Image flags bits set (0x%llx); booting anyway",
                    name.c_str(), static_cast<unsigned long long>(h.flags));
  return h;
}

BootFile::BootFile(const std::string& path, const std::string& option)
    : path_(path), option_(option) {
  // By the rule of kvmmio/base/user_path.h: root copies no file into the
  // guest through another user's link, nor another user's FIFO or device.
  const std::string shown = option + " " + path;
  const FoundFile found = find_user_file(path, shown);
  if (found.exists() && !S_ISREG(found.st.st_mode))
    throw UserError(shown + ": " + file_kind(found.st.st_mode) +
                    ", not a regular file; give the file itself");
  fd_ = open_found(found, shown, O_RDONLY);
  if (!fd_) throw UserError(shown + ": cannot open: " + std::strerror(errno) + "; check the path");
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) throw_errno("fstat " + path);
  if (st.st_size == 0) throw UserError(shown + ": the file is empty; check the path");
  size_ = static_cast<uint64_t>(st.st_size);
}

size_t BootFile::read_at(uint64_t offset, std::span<uint8_t> buf) const {
  size_t done = 0;
  while (done < buf.size()) {
    const ssize_t r =
        ::pread(fd_.get(), buf.data() + done, buf.size() - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_errno("read " + path_);
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

std::vector<uint8_t> BootFile::head(size_t n) const {
  std::vector<uint8_t> buf(std::min<uint64_t>(n, size_));
  buf.resize(read_at(0, buf));
  return buf;
}

void BootFile::load(const GuestMemory& memory, uint64_t gpa) const {
  auto dst = memory.span(gpa, size_);
  if (!dst) throw std::runtime_error(option_ + " " + path_ + ": guest range is not RAM");
  if (read_at(0, *dst) != size_)
    throw std::runtime_error(option_ + " " + path_ + ": file shrank while loading");
}

namespace {

// 0x210 bytes: enough to recognise an x86 bzImage ("HdrS" at 0x202).
constexpr size_t kHeadBytes = 0x210;

}  // namespace

KernelImage::KernelImage(const std::string& path)
    : file_(path, "--kernel"), gzip_(is_gzip(file_.head(2))) {
  if (!gzip_) {
    header_ = parse_image_header(file_.head(kHeadBytes), file_.size(), path);
    return;
  }
  // Image.gz: the header of what it decompresses to, without the rest;
  // the Image's own size is known only once it is loaded (load()).
  const std::vector<uint8_t> head = GzipFile(file_, "--kernel " + path).head(kHeadBytes);
  header_ = parse_image_header(head, head.size(), path, /*decompressed=*/true);
}

uint64_t KernelImage::load(const GuestMemory& memory, uint64_t gpa) const {
  if (!gzip_) {
    file_.load(memory, gpa);
    return file_.size();
  }
  // The load area plan_boot() reserved: image_size bytes (the Image and
  // its bss), which an intact Image's file never exceeds. Decompressing
  // straight into it bounds a gzip bomb by the area, in guest RAM that
  // plan_boot() checked is there.
  auto area = memory.span(gpa, header_.image_size);
  if (!area) throw std::runtime_error("--kernel " + file_.path() + ": guest range is not RAM");
  return GzipFile(file_, "--kernel " + file_.path())
      .inflate_into(*area, "the image_size its header gives, " + std::to_string(header_.image_size) +
                               " bytes, which includes bss");
}

}  // namespace kvmmio::vmm
