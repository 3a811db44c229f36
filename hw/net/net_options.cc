// Parsing of --net specifications.
#include "kvmmio/net/net_options.h"

#include <cstdio>

#include "kvmmio/base/error.h"

namespace kvmmio::net {
namespace {

unsigned long parse_number(std::string_view key, std::string_view value, unsigned long min,
                           unsigned long max) {
  std::string s(value);
  char* end = nullptr;
  errno = 0;
  const unsigned long n = std::strtoul(s.c_str(), &end, 10);
  if (s.empty() || *end || errno || n < min || n > max)
    throw UserError("--net " + std::string(key) + "=" + s + ": expected a number from " +
                    std::to_string(min) + " to " + std::to_string(max));
  return n;
}

std::array<uint8_t, 6> parse_mac(std::string_view value) {
  std::array<unsigned, 6> b{};
  std::string s(value);
  char extra;
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                  &extra) != 6)
    throw UserError("--net mac=" + s + ": expected six hex bytes, e.g. mac=02:6b:76:00:00:01");
  if (b[0] & 1) throw UserError("--net mac=" + s + ": a multicast address cannot be a NIC's MAC");
  std::array<uint8_t, 6> mac;
  for (int i = 0; i < 6; ++i) mac[i] = static_cast<uint8_t>(b[i]);
  return mac;
}

}  // namespace

const char* to_string(VhostMode mode) {
  switch (mode) {
    case VhostMode::kAuto: return "auto";
    case VhostMode::kOn: return "on";
    case VhostMode::kOff: return "off";
  }
  return "?";
}

NetOptions NetOptions::parse(std::string_view spec) {
  NetOptions o;
  // The VMM's default (the library's is regs=trap): register reads from the
  // read-only mirror, where KVM supports it (vmm/virtio_slot.cc).
  o.transport.regs = virtio::RegsMode::kMirror;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw UserError("--net: '" + std::string(item) + "' is not KEY=VALUE (e.g. tap=kvmtap0)");
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "tap") {
      o.tap = std::string(value);
    } else if (key == "vhost") {
      if (value == "on") o.vhost = VhostMode::kOn;
      else if (value == "off") o.vhost = VhostMode::kOff;
      else if (value == "auto") o.vhost = VhostMode::kAuto;
      else throw UserError("--net vhost=" + std::string(value) + ": expected on, off or auto");
    } else if (key == "mac") {
      o.mac = parse_mac(value);
    } else if (key == "queues") {
      o.queue_pairs = static_cast<uint16_t>(parse_number(key, value, 1, 16));
    } else if (key == "mtu") {
      o.mtu = static_cast<uint16_t>(parse_number(key, value, 68, 65535));
    } else if (key == "irq" || key == "notify" || key == "regs" || key == "version") {
      o.transport.set(key, value);
    } else {
      throw UserError("--net: unknown key '" + std::string(key) +
                      "' (known: tap, vhost, irq, notify, regs, version, mac, queues, mtu)");
    }
  }
  if (o.tap.empty()) throw UserError("--net needs tap=NAME (the tap is created if it does not exist)");
  return o;
}

std::array<uint8_t, 6> default_mac(unsigned index) {
  return {0x02, 0x6b, 0x76, 0x00, static_cast<uint8_t>(index >> 8), static_cast<uint8_t>(index + 1)};
}

}  // namespace kvmmio::net
