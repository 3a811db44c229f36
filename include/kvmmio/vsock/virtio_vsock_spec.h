// SPDX-License-Identifier: BSD-2-Clause
// The virtio-vsock device as virtio 1.2 section 5.10 defines it: device ID,
// queues, feature bits, configuration layout, the one event.
#pragma once

#include <cstdint>

namespace kvmmio::vsock::spec {

inline constexpr uint32_t kDeviceId = 19;

// 5.10.2: rx (host to guest), tx (guest to host), event.
inline constexpr uint32_t kRxQueue = 0;
inline constexpr uint32_t kTxQueue = 1;
inline constexpr uint32_t kEventQueue = 2;
inline constexpr uint32_t kNumQueues = 3;

// 5.10.3. STREAM (0) and NO_IMPLIED_STREAM (2) came later (1.3): Linux's
// driver does not know them and vhost-vsock does not offer them, and
// without either bit stream sockets are implied.
inline constexpr unsigned kFSeqpacket = 1;

// 5.10.4: one field, le64 guest_cid (its upper 32 bits are 0: CIDs are 32
// bits wide in Linux's AF_VSOCK).
inline constexpr uint32_t kConfigSize = 8;

// 5.10.6.4: the only event, VIRTIO_VSOCK_EVENT_TRANSPORT_RESET (after a
// migration, the guest's connections are gone).
inline constexpr uint32_t kEventTransportReset = 0;

}  // namespace kvmmio::vsock::spec
