// SPDX-License-Identifier: BSD-2-Clause
// The C API's config structs (kvmmio/kvmmio.h) as the library's C++
// options and devices: each struct read by its size (widened()), each field
// checked, a mistake thrown as an ArgumentError that names the field
// ("kvmmio_net_config.mtu: 40: ..."). No text is parsed. Internal to the
// library: capi/kvmmio.cc makes its handles from these, and the tests
// check them without KVM (tests/unit/capi_config_test.cc).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/block/disk_options.h"
#include "kvmmio/block/virtio_blk.h"
#include "kvmmio/console/virtio_console.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/kvmmio.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/virtio/transport_options.h"

namespace kvmmio::capi {

// A mistake of the caller's: KVMMIO_ERR_INVALID.
struct ArgumentError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws unless `size` (what `size_name` says, e.g. "kvmmio_net_config.size")
// is a `type` this library reads: from `first_version` (the bytes the
// struct's first version covers) to `known` (its sizeof here).
void check_size(size_t size, const char* size_name, const char* type, size_t first_version, size_t known);

// The caller's `type` of `size` bytes as this library's T: the fields the
// size covers, the others as `defaults` has them.
template <typename T>
T widened(const T* given, size_t size, const char* size_name, const char* type, size_t first_version,
          T defaults = {}) {
  if (!given) throw ArgumentError(std::string(type) + " is NULL");
  check_size(size, size_name, type, first_version, sizeof(T));
  std::memcpy(&defaults, given, size);
  return defaults;
}

// The sizes of the configs' first versions: up to their last field.
constexpr size_t kTransportConfigV1 =
    offsetof(kvmmio_transport_config, event_idx) + sizeof(kvmmio_transport_config::event_idx);
constexpr size_t kNetConfigV1 = offsetof(kvmmio_net_config, transport) + sizeof(kvmmio_net_config::transport);
constexpr size_t kBlkConfigV1 = offsetof(kvmmio_blk_config, queues) + sizeof(kvmmio_blk_config::queues);
constexpr size_t kConsoleConfigV1 =
    offsetof(kvmmio_console_config, input_opaque) + sizeof(kvmmio_console_config::input_opaque);

// `defaults` (a device's) with what `config` sets: each KVMMIO_*_DEFAULT
// field keeps the default's value; NULL keeps them all.
virtio::TransportOptions transport_options(const kvmmio_transport_config* config,
                                           const virtio::TransportOptions& defaults);

// A net device's options, its messages in the C API's words (kvmmio_net_config's fields).
net::NetOptions net_options(const kvmmio_net_config* config);

// A disk's options, its messages in the C API's words (kvmmio_blk_config's
// fields), and its device's.
struct BlockOptions {
  block::DiskOptions disk;
  block::BlockDeviceOptions device;
};
BlockOptions block_options(const kvmmio_blk_config* config);

// What a console device is made of: its output fd and input callback.
struct ConsoleOptions {
  int output_fd = -1;
  kvmmio_console_space_fn input_space = nullptr;
  void* input_opaque = nullptr;
};
ConsoleOptions console_options(const kvmmio_console_config* config);

// What a virtio-fs device is made of: its tag, a duplicate of the
// caller's socket and the reply timeout.
struct FsConfig {
  std::string tag;
  UniqueFd socket;
  std::chrono::milliseconds reply_timeout;
};
constexpr size_t kFsConfigV1 =
    offsetof(kvmmio_fs_config, reply_timeout_ms) + sizeof(kvmmio_fs_config::reply_timeout_ms);
FsConfig fs_config(const kvmmio_fs_config* config);

// What a vhost-user-net device is made of: a duplicate of the caller's
// socket, the guest's MAC and the reply timeout.
struct VhostUserNetConfig {
  UniqueFd socket;
  std::array<uint8_t, 6> mac{};
  std::chrono::milliseconds reply_timeout;
};
constexpr size_t kVhostUserNetConfigV1 =
    offsetof(kvmmio_vhost_user_net_config, reply_timeout_ms) + sizeof(kvmmio_vhost_user_net_config::reply_timeout_ms);
VhostUserNetConfig vhost_user_net_config(const kvmmio_vhost_user_net_config* config);

// The devices, on `memory` and `loop`. The disk's image is opened here: a
// UserError (KVMMIO_ERR_USER) in the C API's words when it cannot be.
std::unique_ptr<block::VirtioBlock> make_block(const BlockOptions& options, const GuestMemory& memory,
                                               EventLoop& loop);
std::unique_ptr<console::VirtioConsole> make_console(const ConsoleOptions& options, const GuestMemory& memory,
                                                     EventLoop& loop);

}  // namespace kvmmio::capi
