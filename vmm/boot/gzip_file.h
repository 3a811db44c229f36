// SPDX-License-Identifier: BSD-2-Clause
// Decompressing a gzip file (an Image.gz) with zlib, in bounded pieces:
// the first bytes only (the Image header, to plan the boot before any RAM
// is touched), or the whole stream into a fixed destination that it must
// fit (the kernel's load area in guest RAM). Output never goes anywhere
// else, so a gzip bomb costs at most the destination's size, and is then
// refused. Input is read in kChunk pieces through BootFile::read_at().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kvmmio::vmm {

class BootFile;

// gzip's magic: 1f 8b.
bool is_gzip(std::span<const uint8_t> head);

class GzipFile {
 public:
  static constexpr size_t kChunk = 64 * 1024;

  // `file` must outlive this; `shown` prefixes messages ("--kernel PATH").
  GzipFile(const BootFile& file, std::string shown);

  // Up to `n` bytes from the start of the decompressed stream (fewer if it
  // ends sooner). UserError if the data is corrupt.
  std::vector<uint8_t> head(size_t n) const;
  // The whole decompressed stream into `out`; returns its size. UserError
  // if it does not fit (`limit_what` says what the bound is, for the
  // message), is corrupt or ends early. Bytes past the gzip stream's end
  // (padding) are ignored.
  uint64_t inflate_into(std::span<uint8_t> out, const std::string& limit_what) const;

 private:
  // Inflates into `out` until the stream ends or `out` is full: returns the
  // bytes written and whether the stream ended. With `probe_end`, a full
  // `out` is checked for the stream ending exactly there.
  std::pair<uint64_t, bool> inflate(std::span<uint8_t> out, bool probe_end) const;

  const BootFile& file_;
  std::string shown_;
};

}  // namespace kvmmio::vmm
