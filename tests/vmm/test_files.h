// SPDX-License-Identifier: BSD-2-Clause
// Helpers for the vmm tests: a scratch directory removed at the end, file
// writing, and crafted arm64 Image headers.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kvmmio::vmm::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kvmmio-vmm-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline void put_le(std::vector<uint8_t>& b, size_t off, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

// An arm64 Image of `file_size` bytes (at least 64) with this header: the
// layout of Documentation/arm64/booting.rst, magic "ARM\x64" at 56.
inline std::vector<uint8_t> make_image(uint64_t text_offset, uint64_t image_size, uint64_t flags,
                                       size_t file_size = 4096) {
  std::vector<uint8_t> b(std::max<size_t>(file_size, 64), 0);
  b[0] = 'M';  // like Linux's EFI stub: "MZ" in code0
  b[1] = 'Z';
  put_le(b, 8, text_offset, 8);
  put_le(b, 16, image_size, 8);
  put_le(b, 24, flags, 8);
  put_le(b, 56, 0x644d5241, 4);
  for (size_t i = 64; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7);
  return b;
}

// Flags of a modern little-endian 4 KiB-page kernel that may go anywhere.
constexpr uint64_t kModernFlags = 0xa;

}  // namespace kvmmio::vmm::test
