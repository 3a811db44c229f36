// SPDX-License-Identifier: BSD-2-Clause
// virtio-blk definitions from the virtio 1.2 specification, section 5.2:
// the feature bits, request types and status values kvmmio implements, and
// the request header and configuration layouts. Stated here rather than
// taken from <linux/virtio_blk.h>, as virtio_net_spec.h does for the net
// device, so the device builds against any kernel's headers. kvmmio runs
// on little-endian hosts only (arm64, x86-64 for tests), so the spec's
// le16/le32/le64 fields are plain integers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kvmmio/base/export.h"

namespace kvmmio::block::spec {

// Feature bits (5.2.3).
constexpr unsigned kFSizeMax = 1;
constexpr unsigned kFSegMax = 2;
constexpr unsigned kFRo = 5;
constexpr unsigned kFBlkSize = 6;
constexpr unsigned kFFlush = 9;
constexpr unsigned kFMq = 12;  // num_queues in the configuration is valid
constexpr unsigned kFDiscard = 13;
constexpr unsigned kFWriteZeroes = 14;
// Not a feature bit but the GET_ID request, which needs no negotiation
// (5.2.6: every driver may send it; a device without it answers UNSUPP).

// Request types (5.2.6).
constexpr uint32_t kTIn = 0;
constexpr uint32_t kTOut = 1;
constexpr uint32_t kTFlush = 4;
constexpr uint32_t kTGetId = 8;
constexpr uint32_t kTDiscard = 11;
constexpr uint32_t kTWriteZeroes = 13;

// Status byte values (5.2.6).
constexpr uint8_t kSOk = 0;
constexpr uint8_t kSIoErr = 1;
constexpr uint8_t kSUnsupp = 2;

constexpr uint64_t kSectorSize = 512;
// GET_ID answers with at most 20 bytes, NUL-padded (5.2.6).
constexpr size_t kIdBytes = 20;

// The header every request starts with (struct virtio_blk_req, 5.2.6).
struct KVMMIO_EXPORT RequestHeader {
  uint32_t type;
  uint32_t reserved;  // ioprio in legacy drivers; ignored
  uint64_t sector;
};
static_assert(sizeof(RequestHeader) == 16);

// One range of a DISCARD or WRITE_ZEROES request (5.2.6).
struct KVMMIO_EXPORT DiscardRange {
  uint64_t sector;
  uint32_t num_sectors;
  uint32_t flags;  // bit 0: unmap (WRITE_ZEROES may deallocate)
};
static_assert(sizeof(DiscardRange) == 16);
constexpr uint32_t kDiscardFlagUnmap = 1;

// struct virtio_blk_config (5.2.4) up to write_zeroes_may_unmap and its
// padding: the fields of the features kvmmio offers, the others zero.
struct KVMMIO_EXPORT BlockConfig {
  uint64_t capacity;  // in 512-byte sectors, whatever blk_size says
  uint32_t size_max;
  uint32_t seg_max;
  uint16_t cylinders;
  uint8_t heads;
  uint8_t sectors;
  uint32_t blk_size;
  uint8_t physical_block_exp;
  uint8_t alignment_offset;
  uint16_t min_io_size;
  uint32_t opt_io_size;
  uint8_t writeback;
  uint8_t unused0;
  uint16_t num_queues;
  uint32_t max_discard_sectors;
  uint32_t max_discard_seg;
  uint32_t discard_sector_alignment;
  uint32_t max_write_zeroes_sectors;
  uint32_t max_write_zeroes_seg;
  uint8_t write_zeroes_may_unmap;
  uint8_t unused1[3];
};
// The bytes a driver may read: the struct's own alignment pads it to 64.
constexpr size_t kConfigBytes = offsetof(BlockConfig, unused1) + 3;
static_assert(kConfigBytes == 60);
static_assert(offsetof(BlockConfig, blk_size) == 20);
static_assert(offsetof(BlockConfig, writeback) == 32);
static_assert(offsetof(BlockConfig, num_queues) == 34);
static_assert(offsetof(BlockConfig, max_discard_sectors) == 36);
static_assert(offsetof(BlockConfig, write_zeroes_may_unmap) == 56);

}  // namespace kvmmio::block::spec
