// SPDX-License-Identifier: BSD-2-Clause
// NetOptions: one network device's configuration (the kvmmio program's
// --net, the C API's kvmmio_net_config): a tap, or a vhost-user backend's
// socket, and how the device and its transport use it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kvmmio/base/export.h"
#include "kvmmio/base/setting_words.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/virtio/transport_options.h"

namespace kvmmio::net {

enum class VhostMode { kAuto, kOn, kOff };
KVMMIO_EXPORT const char* to_string(VhostMode mode);

struct KVMMIO_EXPORT NetOptions {
  std::string tap;
  // Not empty: a vhost-user backend's socket (VhostUserNet) instead of a
  // tap; then only mac, reply_timeout_ms and the transport's keys apply.
  std::string vhost_user;
  // vhost-user: the longest wait for one of the backend's replies
  // (reply_timeout_ms=, 1 to 60000).
  std::chrono::milliseconds reply_timeout = vhost::VhostUserFrontend::kDefaultReplyTimeout;
  VhostMode vhost = VhostMode::kAuto;
  std::optional<std::array<uint8_t, 6>> mac;  // default: default_mac(tap)
  uint16_t queue_pairs = 1;
  static constexpr uint16_t kMaxQueuePairs = 16;
  uint16_t mtu = 0;  // 0: VIRTIO_NET_F_MTU not offered; else kMinMtu to 65535
  static constexpr uint16_t kMinMtu = 68;  // IPv4's minimum
  virtio::TransportOptions transport;
  std::string bridge;  // empty: none; else the tap is added to this existing bridge
  // vhost-net's busy polling (VHOST_SET_VRING_BUSYLOOP_TIMEOUT, per vring):
  // after a kick, or when the guest's ring runs empty, the vhost worker
  // polls the ring and the tap this long before it sleeps. 0: off (the
  // kernel's default). Not for the userspace backend.
  uint32_t poll_us = 0;
  static constexpr uint32_t kMaxPollUs = 10000;
  // How the device's messages (the bridge's) name it and its settings, in
  // its configurer's words (the kvmmio program's --net, the C API's
  // kvmmio_net_config); null: these fields' names (struct_words()).
  std::shared_ptr<const SettingWords> words;

  // mac, or default_mac() of the tap's name (of the socket's path for
  // vhost-user).
  std::array<uint8_t, 6> effective_mac() const;
};

// A network interface name as Linux takes it (IFNAMSIZ, dev_valid_name()):
// 1 to 15 bytes, not "." or "..", no '/', ':' or whitespace. Throws
// UserError starting with `shown`.
KVMMIO_EXPORT void check_interface_name(std::string_view name, std::string_view shown);

// The MAC a device on tap `tap` gets when none is set: a 64-bit FNV-1a hash
// of the tap's name, its low 48 bits, with the first byte's two low bits
// made 10 (locally administered, unicast), so 46 bits are the hash. The
// same tap always gives the same MAC (a guest's DHCP lease and the
// bridge's tables survive a restart), and two VMs on one bridge, whose
// taps are necessarily named apart on one host, collide only by chance
// (about n^2 / 2^47 for n taps). Taps of the same name on two hosts that
// share a link get the same MAC: give mac= there.
KVMMIO_EXPORT std::array<uint8_t, 6> default_mac(std::string_view tap);

// "52:54:00:12:34:56": a MAC as mac= takes it, lower case.
KVMMIO_EXPORT std::string mac_text(const std::array<uint8_t, 6>& mac);

}  // namespace kvmmio::net
