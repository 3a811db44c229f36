// SPDX-License-Identifier: BSD-2-Clause
// Bounded gzip decompression of a boot file (see the header).
#include "vmm/boot/gzip_file.h"

#include <zlib.h>

#include <climits>
#include <memory>

#include "kvmmio/base/error.h"
#include "vmm/boot/image_loader.h"

namespace kvmmio::vmm {
namespace {

// z_stream with inflateEnd() on every way out.
class Inflater {
 public:
  explicit Inflater(const std::string& shown) {
    // 16 + MAX_WBITS: a gzip header and trailer (CRC-32, size) are
    // required and checked; a raw zlib or deflate stream is refused.
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK)
      throw std::runtime_error(shown + ": zlib inflateInit2 failed");
  }
  ~Inflater() { inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream* get() { return &z_; }

 private:
  z_stream z_{};
};

}  // namespace

bool is_gzip(std::span<const uint8_t> head) {
  return head.size() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
}

GzipFile::GzipFile(const BootFile& file, std::string shown) : file_(file), shown_(std::move(shown)) {}

std::pair<uint64_t, bool> GzipFile::inflate(std::span<uint8_t> out, bool probe_end) const {
  Inflater inflater(shown_);
  z_stream* z = inflater.get();
  std::vector<uint8_t> in(kChunk);
  uint64_t offset = 0;  // in the compressed file
  uint64_t produced = 0;
  // Once `out` is full, one scratch byte tells a stream that ends exactly
  // there (zlib may still have its trailer to check) from one that goes on.
  uint8_t scratch;
  for (;;) {
    const bool full = produced == out.size();
    if (full && !probe_end) return {produced, false};
    if (z->avail_in == 0) {
      const size_t got = file_.read_at(offset, in);
      if (got == 0)
        throw UserError(shown_ + ": the gzip data ends early (a truncated Image.gz?); give an "
                        "intact file");
      offset += got;
      z->next_in = in.data();
      z->avail_in = static_cast<uInt>(got);
    }
    // avail_out is 32 bits wide: large destinations go in pieces.
    const uint64_t room = full ? 1 : std::min<uint64_t>(out.size() - produced, UINT_MAX);
    z->next_out = full ? &scratch : out.data() + produced;
    z->avail_out = static_cast<uInt>(room);
    const int rc = ::inflate(z, Z_NO_FLUSH);
    const uint64_t made = room - z->avail_out;
    if (full && made > 0) return {produced, false};  // more than fits
    produced += made;
    if (rc == Z_STREAM_END) return {produced, true};
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw UserError(shown_ + ": the gzip data is corrupt (zlib: " +
                      (z->msg ? std::string(z->msg) : "error " + std::to_string(rc)) +
                      "); give an intact file");
  }
}

std::vector<uint8_t> GzipFile::head(size_t n) const {
  std::vector<uint8_t> out(n);
  out.resize(inflate(out, false).first);
  return out;
}

uint64_t GzipFile::inflate_into(std::span<uint8_t> out, const std::string& limit_what) const {
  const auto [produced, ended] = inflate(out, true);
  if (!ended)
    throw UserError(shown_ + ": decompresses to more than " + std::to_string(out.size()) +
                    " bytes (" + limit_what + "): not an intact Image.gz (or a gzip bomb); give "
                    "an intact file");
  return produced;
}

}  // namespace kvmmio::vmm
