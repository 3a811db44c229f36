// SPDX-License-Identifier: BSD-2-Clause
// execute_request(): one checked virtio-blk request against the image, with
// blocking system calls (pread/pwritev/fdatasync/fallocate): run on an I/O
// worker thread, never a vCPU or the event loop.
//
// Data moves between the image and guest RAM through
// chain_host_spans() (GuestMemory::span, the one accessor) without a copy,
// except with O_DIRECT, where guest buffers need not be aligned: there it
// goes through `bounce`, an aligned buffer of kBounceBytes, a piece at a
// time. It does not write the status byte: the caller does, after the I/O
// (a FLUSH's after fdatasync returned), unless a reset made the request
// stale meanwhile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kvmmio/block/block_request.h"
#include "kvmmio/block/disk_image.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/descriptor_chain.h"

namespace kvmmio::block {

// An aligned buffer for O_DIRECT (allocated by the worker that needs it).
struct BounceBuffer {
  static constexpr size_t kBytes = 256 * 1024;
  static constexpr size_t kAlign = 65536;  // at least any DiskImage::alignment()
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data;
  BounceBuffer();
};

struct IoOutcome {
  uint8_t status = spec::kSOk;
  uint32_t written = 0;  // bytes written into the chain's device-writable part (with the status byte)
  int error = 0;         // errno of a failed host call, else 0
};

IoOutcome execute_request(const GuestMemory& memory, const DiskImage& disk, const std::string& serial,
                          const virtio::DescriptorChain& chain, const BlockRequest& request,
                          BounceBuffer* bounce);

// fallocate()'s mode for a DISCARD or WRITE_ZEROES request (both engines).
int fallocate_mode(const DiskImage& disk, const BlockRequest& request);

// Writes `status` as the chain's status byte (`status_offset` in its
// device-writable part).
void write_status(const GuestMemory& memory, const virtio::DescriptorChain& chain, uint64_t status_offset,
                  uint8_t status);

}  // namespace kvmmio::block
