// SPDX-License-Identifier: BSD-2-Clause
// execute_request(): the system calls of each request type (see the header).
#include "block_io.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <new>
#include <span>
#include <vector>

namespace kvmmio::block {
namespace {

// Host calls that return a byte count, retried on EINTR and continued after
// a short transfer. Returns 0 or the errno.
template <typename Call>
int transfer_all(std::vector<iovec>& iov, uint64_t offset, Call call) {
  size_t first = 0;
  while (first < iov.size()) {
    const int count = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
    const ssize_t n = call(iov.data() + first, count, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // the image shrank under us: never loop
    offset += static_cast<uint64_t>(n);
    auto left = static_cast<size_t>(n);
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return 0;
}

int rw_direct_to_guest(const GuestMemory& memory, const DiskImage& disk, const virtio::DescriptorChain& chain,
                       bool in, uint64_t chain_offset, uint64_t image_offset, uint64_t len) {
  std::vector<std::span<uint8_t>> spans;
  if (virtio::chain_host_spans(memory, chain, in, chain_offset, len, spans) != len) return EFAULT;
  std::vector<iovec> iov;
  iov.reserve(spans.size());
  for (auto s : spans) iov.push_back({s.data(), s.size()});
  if (in)
    return transfer_all(iov, image_offset, [&](const iovec* v, int n, off_t at) { return ::preadv(disk.fd(), v, n, at); });
  return transfer_all(iov, image_offset, [&](const iovec* v, int n, off_t at) { return ::pwritev(disk.fd(), v, n, at); });
}

// O_DIRECT: through the aligned bounce buffer, a piece at a time.
int rw_bounced(const GuestMemory& memory, const DiskImage& disk, const virtio::DescriptorChain& chain, bool in,
               uint64_t chain_offset, uint64_t image_offset, uint64_t len, BounceBuffer& bounce) {
  for (uint64_t done = 0; done < len;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len - done, BounceBuffer::kBytes));
    std::span<uint8_t> buf(bounce.data.get(), n);
    iovec v{buf.data(), n};
    std::vector<iovec> one{v};
    if (in) {
      if (int e = transfer_all(one, image_offset + done,
                               [&](const iovec* p, int c, off_t at) { return ::preadv(disk.fd(), p, c, at); }))
        return e;
      if (virtio::write_to_chain(memory, chain, chain_offset + done, buf) != n) return EFAULT;
    } else {
      if (virtio::read_from_chain(memory, chain, chain_offset + done, buf) != n) return EFAULT;
      if (int e = transfer_all(one, image_offset + done,
                               [&](const iovec* p, int c, off_t at) { return ::pwritev(disk.fd(), p, c, at); }))
        return e;
    }
    done += n;
  }
  return 0;
}

int sync_data(int fd) {
  while (::fdatasync(fd) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

int punch_or_zero(int fd, int mode, uint64_t offset, uint64_t len) {
  while (::fallocate(fd, mode, static_cast<off_t>(offset), static_cast<off_t>(len)) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

}  // namespace

void BounceBuffer::Free::operator()(uint8_t* p) const { std::free(p); }

BounceBuffer::BounceBuffer() {
  void* p = nullptr;
  if (::posix_memalign(&p, kAlign, kBytes) != 0) throw std::bad_alloc();
  data.reset(static_cast<uint8_t*>(p));
}

int fallocate_mode(const DiskImage& disk, const BlockRequest& r) {
  // A hole reads as zeroes too: with unmap allowed it frees the space.
  const bool punch = r.type == spec::kTDiscard || (r.unmap && disk.can_discard());
  return (punch ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE) | FALLOC_FL_KEEP_SIZE;
}

void write_status(const GuestMemory& memory, const virtio::DescriptorChain& chain, uint64_t status_offset,
                  uint8_t status) {
  virtio::write_to_chain(memory, chain, status_offset, {&status, 1});
}

IoOutcome execute_request(const GuestMemory& memory, const DiskImage& disk, const std::string& serial,
                          const virtio::DescriptorChain& chain, const BlockRequest& r, BounceBuffer* bounce) {
  IoOutcome out;
  uint32_t data_written = 0;
  const uint64_t image_offset = r.sector * spec::kSectorSize;  // checked against the capacity: no overflow
  switch (r.type) {
    case spec::kTIn:
    case spec::kTOut: {
      const bool in = r.type == spec::kTIn;
      const uint64_t chain_offset = in ? 0 : sizeof(spec::RequestHeader);
      out.error = disk.direct() && bounce
                      ? rw_bounced(memory, disk, chain, in, chain_offset, image_offset, r.data_bytes, *bounce)
                      : rw_direct_to_guest(memory, disk, chain, in, chain_offset, image_offset, r.data_bytes);
      if (in && !out.error) data_written = static_cast<uint32_t>(r.data_bytes);
      break;
    }
    case spec::kTFlush:
      out.error = sync_data(disk.fd());
      break;
    case spec::kTGetId: {
      uint8_t id[spec::kIdBytes] = {};
      std::copy_n(serial.begin(), std::min(serial.size(), sizeof id), id);
      const size_t n = std::min<uint64_t>(r.data_bytes, sizeof id);
      data_written = static_cast<uint32_t>(virtio::write_to_chain(memory, chain, 0, {id, n}));
      break;
    }
    case spec::kTDiscard:
    case spec::kTWriteZeroes:
      out.error = punch_or_zero(disk.fd(), fallocate_mode(disk, r), image_offset, r.data_bytes);
      break;
    default:
      out.error = ENOTSUP;  // parse_request() lets no other type through
      break;
  }
  out.status = out.error ? spec::kSIoErr : spec::kSOk;
  // 2.7.8: the used length counts the bytes written, the status byte among them.
  out.written = data_written + 1;
  return out;
}

}  // namespace kvmmio::block
