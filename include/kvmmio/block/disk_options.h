// SPDX-License-Identifier: BSD-2-Clause
// DiskOptions: one disk's configuration (the kvmmio program's --disk, the
// C API's kvmmio_blk_config).
//
// path is a raw image: a regular file, or with block_device a block device
// (giving the guest a host disk is said out loud, never reached through a
// link that once led to a file). Nothing here touches the file:
// DiskImage::open() checks it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/setting_words.h"
#include "kvmmio/block/virtio_blk_spec.h"
#include "kvmmio/virtio/transport_options.h"

namespace kvmmio::block {

enum class CacheMode {
  kWriteback,  // the host's page cache; a write is durable after the next FLUSH
  kNone,       // O_DIRECT: no host page cache (alignment: DiskImage)
};
KVMMIO_EXPORT const char* to_string(CacheMode mode);

// The I/O engine of the disk's queue (VirtioBlock).
enum class EngineChoice {
  kDefault,  // io_uring; where the ring cannot be set up, one warning and threads
  kIoUring,  // engine=io_uring: io_uring or an error naming the fix
  kThreads,  // engine=threads: a worker thread with pread/pwritev
};

// The most request queues a disk may have (queues=N, VirtioBlock).
constexpr unsigned kMaxDiskQueues = 16;

struct KVMMIO_EXPORT DiskOptions {
  std::string path;
  bool read_only = false;
  std::string serial;  // GET_ID's answer: at most 20 bytes (spec::kIdBytes)
  CacheMode cache = CacheMode::kWriteback;
  EngineChoice engine = EngineChoice::kDefault;
  // queues=N (1 to kMaxDiskQueues); unset, the VMM decides (kvmmio: one
  // per vCPU, at most kMaxDiskQueues), a library user's VirtioBlock has 1.
  std::optional<unsigned> queues;
  bool block_device = false;  // device=on: PATH may be a block device
  virtio::TransportOptions transport;
  // How messages about the disk (DiskImage::open(), lock_image(),
  // VirtioBlock) name it and the settings that fix a problem, in its
  // configurer's words (the kvmmio program's --disk, the C API's
  // kvmmio_blk_config); null: these fields' names (struct_words()).
  std::shared_ptr<const SettingWords> words;
};

}  // namespace kvmmio::block
