// SPDX-License-Identifier: BSD-2-Clause
// parse_request(): the checks of a virtio-blk request (see the header).
#include "kvmmio/block/block_request.h"

namespace kvmmio::block {
namespace {

ParsedRequest refuse(ParsedRequest p, uint8_t status, const char* why) {
  p.status = status;
  p.error = why;
  return p;
}

// [sector, sector + count) within the capacity, without overflow.
bool within(uint64_t sector, uint64_t count, uint64_t capacity) {
  return sector <= capacity && count <= capacity - sector;
}

}  // namespace

uint32_t segments_spanned(const virtio::DescriptorChain& chain, bool writable, uint64_t offset, uint64_t len) {
  uint32_t n = 0;
  uint64_t at = 0;  // where this segment starts in its part
  for (const virtio::Segment& s : chain.segments) {
    if (s.device_writable != writable) continue;
    const uint64_t end = at + s.len;
    if (s.len && end > offset && at < offset + len) ++n;
    at = end;
  }
  return n;
}

ParsedRequest parse_request(const GuestMemory& memory, const virtio::DescriptorChain& chain,
                            const DiskLimits& limits) {
  ParsedRequest p;
  if (chain.writable_bytes == 0)
    return refuse(p, spec::kSIoErr, "no device-writable byte for the status (5.2.6: it is the last, device-writable)");
  p.status_offset = chain.writable_bytes - 1;
  spec::RequestHeader h{};
  if (chain.readable_bytes < sizeof h ||
      virtio::read_from_chain(memory, chain, 0, {reinterpret_cast<uint8_t*>(&h), sizeof h}) != sizeof h)
    return refuse(p, spec::kSIoErr, "request shorter than its 16-byte header");
  p.type = h.type;
  const uint64_t readable_data = chain.readable_bytes - sizeof h;
  const uint64_t writable_data = chain.writable_bytes - 1;
  BlockRequest r;
  r.type = h.type;
  r.sector = h.sector;
  r.status_offset = *p.status_offset;
  switch (h.type) {
    case spec::kTIn:
    case spec::kTOut: {
      const bool in = h.type == spec::kTIn;
      if (in ? readable_data != 0 : writable_data != 0)
        return refuse(p, spec::kSIoErr,
                      in ? "IN request with device-readable data (it reads into device-writable buffers)"
                         : "OUT request with device-writable data (it writes from device-readable buffers)");
      if (!in && limits.read_only) return refuse(p, spec::kSIoErr, "OUT request to a read-only disk");
      r.data_bytes = in ? writable_data : readable_data;
      if (r.data_bytes == 0) return refuse(p, spec::kSIoErr, "IN/OUT request without data");
      if (limits.max_request_bytes && r.data_bytes > limits.max_request_bytes)
        return refuse(p, spec::kSIoErr, "IN/OUT request larger than size_max x seg_max");
      if (r.data_bytes % limits.alignment != 0 || (r.sector * spec::kSectorSize) % limits.alignment != 0)
        return refuse(p, spec::kSIoErr, "IN/OUT request not aligned to the disk's block size");
      if (!within(r.sector, r.data_bytes / spec::kSectorSize, limits.capacity_sectors))
        return refuse(p, spec::kSIoErr, "IN/OUT request beyond the disk's capacity");
      if (segments_spanned(chain, in, in ? 0 : sizeof h, r.data_bytes) > limits.seg_max)
        return refuse(p, spec::kSIoErr, "IN/OUT request with more data segments than SEG_MAX");
      break;
    }
    case spec::kTFlush:
      // 5.2.6.1: a FLUSH carries no data; its sector is ignored.
      if (readable_data || writable_data)
        return refuse(p, spec::kSIoErr, "FLUSH request with data");
      break;
    case spec::kTGetId:
      if (readable_data) return refuse(p, spec::kSIoErr, "GET_ID request with device-readable data");
      r.data_bytes = writable_data;  // up to 20 bytes of it are answered
      break;
    case spec::kTDiscard:
    case spec::kTWriteZeroes: {
      const bool discard = h.type == spec::kTDiscard;
      if (discard ? !limits.discard : !limits.write_zeroes)
        return refuse(p, spec::kSUnsupp, discard ? "DISCARD not offered" : "WRITE_ZEROES not offered");
      if (limits.read_only) return refuse(p, spec::kSIoErr, "DISCARD/WRITE_ZEROES to a read-only disk");
      if (writable_data) return refuse(p, spec::kSIoErr, "DISCARD/WRITE_ZEROES with device-writable data");
      spec::DiscardRange range{};
      if (readable_data != sizeof range)
        return refuse(p, spec::kSIoErr, "DISCARD/WRITE_ZEROES without exactly one range (max_*_seg is 1)");
      virtio::read_from_chain(memory, chain, sizeof h, {reinterpret_cast<uint8_t*>(&range), sizeof range});
      if (range.flags & ~spec::kDiscardFlagUnmap)
        return refuse(p, spec::kSUnsupp, "DISCARD/WRITE_ZEROES with unknown flags");
      if (discard && range.flags)
        return refuse(p, spec::kSUnsupp, "DISCARD with the unmap flag (5.2.6.2: only for WRITE_ZEROES)");
      if (range.num_sectors == 0 || range.num_sectors > limits.max_range_sectors ||
          !within(range.sector, range.num_sectors, limits.capacity_sectors))
        return refuse(p, spec::kSIoErr,
                      "DISCARD/WRITE_ZEROES range empty, longer than offered, or beyond the disk's capacity");
      r.sector = range.sector;
      r.data_bytes = uint64_t{range.num_sectors} * spec::kSectorSize;
      r.unmap = range.flags & spec::kDiscardFlagUnmap;
      break;
    }
    default:
      return refuse(p, spec::kSUnsupp, "unknown request type");
  }
  p.request = r;
  return p;
}

}  // namespace kvmmio::block
