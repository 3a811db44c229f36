// SPDX-License-Identifier: BSD-2-Clause
// virtio-net definitions from the virtio 1.2 specification, section 5.1.
// Linux's <linux/virtio_net.h> is not valid C++ (a field named `class`), so
// the constants and layouts kvmmio needs are stated here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kvmmio/base/export.h"

namespace kvmmio::net::spec {

// Feature bits (5.1.3).
constexpr unsigned kFCsum = 0;           // VIRTIO_NET_F_CSUM: device handles partial csum
constexpr unsigned kFGuestCsum = 1;      // VIRTIO_NET_F_GUEST_CSUM
constexpr unsigned kFMtu = 3;            // VIRTIO_NET_F_MTU
constexpr unsigned kFMac = 5;            // VIRTIO_NET_F_MAC
constexpr unsigned kFGuestTso4 = 7;
constexpr unsigned kFGuestTso6 = 8;
constexpr unsigned kFGuestUfo = 10;
constexpr unsigned kFHostTso4 = 11;
constexpr unsigned kFHostTso6 = 12;
constexpr unsigned kFHostUfo = 14;
constexpr unsigned kFMrgRxbuf = 15;      // VIRTIO_NET_F_MRG_RXBUF
constexpr unsigned kFStatus = 16;        // VIRTIO_NET_F_STATUS
constexpr unsigned kFCtrlVq = 17;        // VIRTIO_NET_F_CTRL_VQ
constexpr unsigned kFMq = 22;            // VIRTIO_NET_F_MQ
constexpr unsigned kFEventIdx = 29;      // VIRTIO_RING_F_EVENT_IDX (2.7.10)
constexpr unsigned kFVersion1 = 32;      // VIRTIO_F_VERSION_1

// The header that precedes every packet (5.1.6). With VERSION_1 it always
// has num_buffers: 12 bytes.
struct KVMMIO_EXPORT NetHdrV1 {
  uint8_t flags;
  uint8_t gso_type;
  uint16_t hdr_len;
  uint16_t gso_size;
  uint16_t csum_start;
  uint16_t csum_offset;
  uint16_t num_buffers;
};
static_assert(sizeof(NetHdrV1) == 12);
// A legacy driver without MRG_RXBUF uses the header without num_buffers
// (5.1.6.1 legacy interface): 10 bytes.
constexpr size_t kNetHdrLegacySize = offsetof(NetHdrV1, num_buffers);
static_assert(kNetHdrLegacySize == 10);

// The header size for negotiated `features` (5.1.6.1): 12 bytes with
// VERSION_1 or MRG_RXBUF, else 10.
constexpr size_t net_hdr_size(uint64_t features) {
  return features & ((uint64_t{1} << kFVersion1) | (uint64_t{1} << kFMrgRxbuf)) ? sizeof(NetHdrV1)
                                                                                : kNetHdrLegacySize;
}

constexpr uint8_t kHdrFNeedsCsum = 1;
constexpr uint8_t kGsoNone = 0;
constexpr uint8_t kGsoTcpv4 = 1;
constexpr uint8_t kGsoUdp = 3;
constexpr uint8_t kGsoTcpv6 = 4;

// Device configuration layout (5.1.4).
struct KVMMIO_EXPORT NetConfig {
  uint8_t mac[6];
  uint16_t status;
  uint16_t max_virtqueue_pairs;
  uint16_t mtu;
} __attribute__((packed));
static_assert(sizeof(NetConfig) == 12);
constexpr uint16_t kStatusLinkUp = 1;

// Control virtqueue (5.1.6.5).
struct KVMMIO_EXPORT CtrlHdr {
  uint8_t cls;
  uint8_t cmd;
} __attribute__((packed));
constexpr uint8_t kCtrlOk = 0;
constexpr uint8_t kCtrlErr = 1;
constexpr uint8_t kCtrlClassRx = 0;
constexpr uint8_t kCtrlClassMac = 1;
constexpr uint8_t kCtrlClassMq = 4;
constexpr uint8_t kCtrlMqVqPairsSet = 0;
constexpr uint16_t kMqVqPairsMin = 1;
constexpr uint16_t kMqVqPairsMax = 0x8000;

}  // namespace kvmmio::net::spec
