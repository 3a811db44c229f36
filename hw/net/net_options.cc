// SPDX-License-Identifier: BSD-2-Clause
// NetOptions' own checks and names: interface names, the default MAC.
#include "kvmmio/net/net_options.h"

#include <net/if.h>

#include <cctype>
#include <cstdio>

#include "kvmmio/base/error.h"

namespace kvmmio::net {

std::array<uint8_t, 6> NetOptions::effective_mac() const {
  return mac.value_or(default_mac(vhost_user.empty() ? tap : vhost_user));
}

const char* to_string(VhostMode mode) {
  switch (mode) {
    case VhostMode::kAuto: return "auto";
    case VhostMode::kOn: return "on";
    case VhostMode::kOff: return "off";
  }
  return "?";
}

void check_interface_name(std::string_view name, std::string_view shown) {
  const std::string what(shown);
  if (name.empty() || name.size() >= IFNAMSIZ)
    throw UserError(what + ": an interface name is 1 to " + std::to_string(IFNAMSIZ - 1) +
                    " characters (IFNAMSIZ)");
  if (name == "." || name == "..")
    throw UserError(what + ": '.' and '..' are not interface names");
  for (char c : name)
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)))
      throw UserError(what + ": an interface name has no '/', ':' or white space");
}

std::string mac_text(const std::array<uint8_t, 6>& mac) {
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
                mac[5]);
  return text;
}

std::array<uint8_t, 6> default_mac(std::string_view tap) {
  // FNV-1a: fixed by its definition, so the MAC never changes with the
  // compiler or the library version (std::hash may).
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : tap) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  std::array<uint8_t, 6> mac{};
  for (size_t i = 0; i < mac.size(); ++i) mac[i] = static_cast<uint8_t>(h >> (8 * (5 - i)));
  mac[0] = static_cast<uint8_t>((mac[0] & 0xfc) | 0x02);  // locally administered, unicast
  return mac;
}

}  // namespace kvmmio::net
