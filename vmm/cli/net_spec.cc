// SPDX-License-Identifier: BSD-2-Clause
// --net specifications, with every check that needs no system call (the
// tap is created or opened later, by Tap).
#include <cstdint>
#include <string>

#include "kvmmio/base/error.h"
#include "vmm/cli/device_specs.h"
#include "vmm/cli/option_words.h"
#include "vmm/process/parse.h"

namespace kvmmio::vmm {

using net::check_interface_name;
using net::NetOptions;
using net::VhostMode;

namespace {

std::string shown(std::string_view key, std::string_view value) {
  return "--net " + std::string(key) + "=" + std::string(value);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// XX:XX:XX:XX:XX:XX, two hex digits per byte; a unicast address that is
// not all zeros.
std::array<uint8_t, 6> parse_mac(std::string_view value) {
  const std::string what = shown("mac", value);
  std::array<uint8_t, 6> mac{};
  bool ok = value.size() == 17;
  for (size_t i = 0; ok && i < 6; ++i) {
    const int hi = hex_digit(value[3 * i]), lo = hex_digit(value[3 * i + 1]);
    ok = hi >= 0 && lo >= 0 && (i == 5 || value[3 * i + 2] == ':');
    mac[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  if (!ok)
    throw UserError(what + ": expected six hex bytes of two digits each, separated by ':', e.g. "
                           "mac=02:6b:76:00:00:01");
  if (mac == std::array<uint8_t, 6>{})
    throw UserError(what + ": the all-zero address is not a NIC's MAC; e.g. mac=02:6b:76:00:00:01");
  if (mac[0] & 1)
    throw UserError(what + ": a multicast address (the first byte is odd) cannot be a NIC's MAC; "
                           "e.g. mac=02:6b:76:00:00:01");
  return mac;
}

// One setter per device key. A new device key is one line here.
using Setter = void (*)(NetOptions&, std::string_view value);
struct DeviceKey {
  std::string_view key;
  Setter set;
};
constexpr DeviceKey kDeviceKeys[] = {
    {"tap",
     [](NetOptions& o, std::string_view v) {
       check_interface_name(v, shown("tap", v));
       o.tap = std::string(v);
     }},
    {"vhost-user",
     [](NetOptions& o, std::string_view v) {
       if (v.empty())
         throw UserError("--net vhost-user= is empty: give the vhost-user socket of a running backend, e.g. "
                         "--net vhost-user=/run/vhost-user0.sock");
       o.vhost_user = std::string(v);
     }},
    {"reply_timeout_ms",
     [](NetOptions& o, std::string_view v) {
       o.reply_timeout = std::chrono::milliseconds(parse_uint(v, shown("reply_timeout_ms", v), 1,
                                                              vhost::VhostUserFrontend::kMaxReplyTimeout.count()));
     }},
    {"vhost",
     [](NetOptions& o, std::string_view v) {
       if (v == "on") o.vhost = VhostMode::kOn;
       else if (v == "off") o.vhost = VhostMode::kOff;
       else if (v == "auto") o.vhost = VhostMode::kAuto;
       else throw UserError(shown("vhost", v) + ": expected on, off or auto");
     }},
    {"mac", [](NetOptions& o, std::string_view v) { o.mac = parse_mac(v); }},
    {"queues",
     [](NetOptions& o, std::string_view v) {
       o.queue_pairs = static_cast<uint16_t>(parse_uint(v, shown("queues", v), 1, NetOptions::kMaxQueuePairs));
     }},
    {"mtu",
     [](NetOptions& o, std::string_view v) {
       o.mtu = static_cast<uint16_t>(parse_uint(v, shown("mtu", v), NetOptions::kMinMtu, 65535));
     }},
    {"bridge",
     [](NetOptions& o, std::string_view v) {
       check_interface_name(v, shown("bridge", v));
       o.bridge = std::string(v);
     }},
    {"poll_us",
     [](NetOptions& o, std::string_view v) {
       o.poll_us = static_cast<uint32_t>(parse_uint(v, shown("poll_us", v), 0, NetOptions::kMaxPollUs));
     }},
};

// vhost-user=PATH takes mac= and the transport's keys; the tap's own keys
// have no meaning for a backend in another process.
void check_vhost_user(const NetOptions& o, std::string_view spec) {
  const auto refuse = [&](bool given, const char* key) {
    if (given)
      throw UserError("--net " + std::string(spec) + ": " + key +
                      " is the tap's setting; with vhost-user=PATH the backend owns the link (take " + key +
                      " out; vhost-user takes mac=, reply_timeout_ms= and the transport's keys)");
  };
  refuse(!o.tap.empty(), "tap=");
  refuse(o.vhost != VhostMode::kAuto, "vhost=");
  refuse(o.queue_pairs != 1, "queues=");
  refuse(o.mtu != 0, "mtu=");
  refuse(!o.bridge.empty(), "bridge=");
  refuse(o.poll_us != 0, "poll_us=");
}

}  // namespace

NetOptions parse_net_spec(std::string_view spec) {
  NetOptions o;
  o.words = option_words();
  for (const auto& [key, value] : parse_key_values(spec, "--net " + std::string(spec))) {
    const DeviceKey* device_key = nullptr;
    for (const DeviceKey& k : kDeviceKeys)
      if (k.key == key) device_key = &k;
    if (device_key) {
      device_key->set(o, value);
      continue;
    }
    try {
      set_transport_key(o.transport, key, value);  // version, notify, irq, ...: the transport's keys
    } catch (const UserError& e) {
      throw UserError("--net " + std::string(key) + "=" + std::string(value) + ": " + e.what() +
                      " (--net's own keys: tap, vhost-user, vhost, mac, queues, mtu, bridge, poll_us, "
                      "reply_timeout_ms)");
    }
  }
  if (!o.vhost_user.empty()) {
    check_vhost_user(o, spec);
    return o;
  }
  if (o.reply_timeout != vhost::VhostUserFrontend::kDefaultReplyTimeout)
    throw UserError("--net " + std::string(spec) +
                    ": reply_timeout_ms is a vhost-user backend's bound: use it with vhost-user=PATH");
  if (o.tap.empty())
    throw UserError("--net " + std::string(spec) +
                    ": needs tap=NAME (the tap is created if it does not exist) or vhost-user=PATH (a "
                    "user-space switch's socket)");
  if (o.poll_us && o.vhost == VhostMode::kOff)
    throw UserError("--net " + std::string(spec) +
                    ": poll_us is vhost-net's busy polling: use it with vhost=on or auto, or leave it out");
  return o;
}

}  // namespace kvmmio::vmm
