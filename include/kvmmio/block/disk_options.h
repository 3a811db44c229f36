// SPDX-License-Identifier: BSD-2-Clause
// DiskOptions: one `--disk` specification, parsed.
//
//   PATH[,ro=on|off][,serial=ID][,cache=writeback|none][,engine=io_uring|threads][,TRANSPORT KEYS]
//
// PATH is a raw image: a regular file or a block device. ro, serial,
// cache and engine are the device's keys; any other key is handed to
// TransportOptions::set() (version, notify, irq, regs), as --net does.
// Nothing here touches the file: DiskImage::open() checks it.
#pragma once

#include <string>
#include <string_view>

#include "kvmmio/base/export.h"
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

struct KVMMIO_EXPORT DiskOptions {
  std::string path;
  bool read_only = false;
  std::string serial;  // GET_ID's answer: at most 20 bytes (spec::kIdBytes)
  CacheMode cache = CacheMode::kWriteback;
  EngineChoice engine = EngineChoice::kDefault;
  virtio::TransportOptions transport;

  // Throws UserError whose message starts with "--disk" and names the key
  // and the accepted values.
  static DiskOptions parse(std::string_view spec);
};

}  // namespace kvmmio::block
