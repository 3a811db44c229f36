// NetOptions: one `--net` specification, parsed.
//
//   tap=NAME[,vhost=on|off|auto][,irq=irqfd|relay][,notify=ioeventfd|trap]
//          [,version=1|2][,mac=XX:XX:XX:XX:XX:XX][,queues=N][,mtu=N]
//
// irq, notify and version belong to the virtio-mmio transport and are
// handed to TransportOptions::set(); the rest to the device.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvmmio/virtio/transport_options.h"

namespace kvmmio::net {

enum class VhostMode { kAuto, kOn, kOff };
const char* to_string(VhostMode mode);

struct NetOptions {
  std::string tap;
  VhostMode vhost = VhostMode::kAuto;
  std::optional<std::array<uint8_t, 6>> mac;  // default: derived from the device index
  uint16_t queue_pairs = 1;
  uint16_t mtu = 0;  // 0: VIRTIO_NET_F_MTU not offered
  virtio::TransportOptions transport;

  // Throws UserError naming the option and the accepted values.
  static NetOptions parse(std::string_view spec);
};

// The MAC kvmmio gives device `index` when none is set: locally administered
// (52:54:00 is QEMU's; kvmmio uses 02:6b:76 "kv").
std::array<uint8_t, 6> default_mac(unsigned index);

}  // namespace kvmmio::net
