// SPDX-License-Identifier: BSD-2-Clause
// A tap as a port of an existing bridge (see bridge.h).
#include "bridge.h"

#include <limits.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::net {
namespace {

// The bridge (or bond, team...) `dev` is a port of, from sysfs: "" if none.
std::string master_of(const std::string& dev) {
  char target[PATH_MAX];
  const std::string link = "/sys/class/net/" + dev + "/master";
  const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  if (n <= 0) return "";
  const std::string path(target, static_cast<size_t>(n));
  return path.substr(path.rfind('/') + 1);
}

bool is_bridge(const std::string& dev) {
  struct stat st {};
  return ::stat(("/sys/class/net/" + dev + "/bridge").c_str(), &st) == 0;
}

}  // namespace

void add_to_bridge(const std::string& tap, const std::string& bridge, const SettingWords& words) {
  // The bridge as it was given, in its configurer's words.
  const Setting id{"tap", tap};
  const std::string shown = words.named("net", id, {"bridge", bridge});
  const std::string make_it = " (ip link add " + bridge + " type bridge && ip link set " + bridge + " up)";
  if (::if_nametoindex(bridge.c_str()) == 0)
    throw UserError(shown + ": there is no interface " + bridge + "; kvmmio adds its tap to an "
                    "existing bridge: create it first" + make_it);
  if (!is_bridge(bridge))
    throw UserError(shown + ": " + bridge + " is not a bridge; name a bridge" + make_it);
  const std::string master = master_of(tap);
  if (master == bridge) return;  // already a port: nothing to do
  if (!master.empty())
    throw UserError(shown + ": tap " + tap + " is a port of " + master + " already; take it out (ip "
                    "link set " + tap + " nomaster) or " + words.ask("net", id, {"bridge", master}));
  const unsigned index = ::if_nametoindex(tap.c_str());
  if (index == 0) throw UserError(shown + ": tap " + tap + " has gone");
  UniqueFd s(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!s) throw_errno("socket for SIOCBRADDIF");
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, bridge.c_str(), IFNAMSIZ - 1);
  ifr.ifr_ifindex = static_cast<int>(index);
  if (::ioctl(s.get(), SIOCBRADDIF, &ifr) != 0) {
    if (errno == EPERM)
      throw UserError(shown + ": adding a port to a bridge needs CAP_NET_ADMIN: run kvmmio as root, "
                      "or add the tap beforehand (ip link set " + tap + " master " + bridge +
                      "): then kvmmio only checks it");
    throw UserError(shown + ": cannot add " + tap + " to " + bridge + ": " + std::strerror(errno));
  }
}

}  // namespace kvmmio::net
