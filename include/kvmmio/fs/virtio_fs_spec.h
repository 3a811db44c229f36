// SPDX-License-Identifier: BSD-2-Clause
// The virtio-fs device as virtio 1.2 section 5.11 defines it: device ID,
// queues, configuration layout.
#pragma once

#include <cstdint>

namespace kvmmio::fs::spec {

inline constexpr uint32_t kDeviceId = 26;

// 5.11.2: the high-priority queue (FUSE_INTERRUPT, FUSE_FORGET), then the
// request queues. kvmmio offers one request queue: Debian's virtiofsd
// serves one (both the C one of QEMU 7.2 and the Rust one).
inline constexpr uint32_t kHiprioQueue = 0;
inline constexpr uint32_t kRequestQueue = 1;
inline constexpr uint32_t kNumQueues = 2;

// 5.11.3: VIRTIO_FS_F_NOTIFICATION (a notification queue) is not offered:
// Linux's driver does not use it.

// 5.11.4: u8 tag[36] (UTF-8, NUL-padded, not NUL-terminated when 36
// bytes long), le32 num_request_queues.
inline constexpr uint32_t kTagSize = 36;
inline constexpr uint32_t kNumRequestQueuesOffset = 36;
inline constexpr uint32_t kConfigSize = 40;

}  // namespace kvmmio::fs::spec
