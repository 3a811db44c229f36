// SPDX-License-Identifier: BSD-2-Clause
// Tap: TUNSETIFF per queue, vnet header and offload settings, link state.
#include "kvmmio/net/tap.h"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/net/net_options.h"

namespace kvmmio::net {
namespace {

constexpr const char* kTunPath = "/dev/net/tun";

ifreq make_ifreq(const std::string& name) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  return ifr;
}

// A socket to issue interface ioctls (SIOCGIFFLAGS and friends) on.
UniqueFd control_socket() {
  UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!s) throw_errno("socket for interface ioctls");
  return s;
}

// TUNSETIFF: attaches `fd` to tap `name`, creating it if absent.
void set_iff(int fd, const std::string& name, bool multi_queue) {
  ifreq ifr = make_ifreq(name);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
  if (multi_queue) ifr.ifr_flags |= IFF_MULTI_QUEUE;
  if (::ioctl(fd, TUNSETIFF, &ifr) == 0) return;
  const int err = errno;
  if (err == EPERM)
    throw UserError("cannot create or attach tap " + name +
                    ": permission denied (run as root or with CAP_NET_ADMIN)");
  if (err == EINVAL || err == EBUSY)
    throw UserError("cannot attach tap " + name + ": " + std::strerror(err) +
                    " (an interface of that name exists with other flags, e.g. without "
                    "vnet_hdr or multi-queue, or is in use: delete it with "
                    "`ip link del " + name + "` or pick another name)");
  errno = err;
  throw_errno("TUNSETIFF " + name);
}

}  // namespace

Tap::Tap(const std::string& name, unsigned queues) : name_(name) {
  check_interface_name(name, "tap '" + name + "'");
  if (queues == 0) throw UserError("a tap needs at least one queue");
  for (unsigned q = 0; q < queues; ++q) {
    UniqueFd fd(::open(kTunPath, O_RDWR | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
      const int err = errno;
      if (err == ENOENT || err == ENODEV)
        throw UserError(std::string(kTunPath) + " is missing: load the tun module (modprobe tun)");
      throw UserError(std::string("cannot open ") + kTunPath + ": " + std::strerror(err) +
                      " (run as root or with CAP_NET_ADMIN)");
    }
    set_iff(fd.get(), name, queues > 1);
    fds_.push_back(std::move(fd));
  }
}

Tap Tap::socketpair(const std::string& name, unsigned queues, std::vector<UniqueFd>& wire) {
  if (queues == 0) throw UserError("a tap needs at least one queue");
  Tap tap;
  tap.name_ = name;
  tap.socketpair_ = true;
  for (unsigned q = 0; q < queues; ++q) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) != 0)
      throw_errno("socketpair for a tap stand-in");
    tap.fds_.emplace_back(fds[0]);
    wire.emplace_back(fds[1]);
  }
  return tap;
}

void Tap::reattach() {
  if (socketpair_) return;
  for (auto& fd : fds_) set_iff(fd.get(), name_, fds_.size() > 1);
}

bool Tap::attached(unsigned queue) const {
  if (socketpair_) return queue < fds_.size();
  ifreq ifr{};
  return ::ioctl(fd(queue), TUNGETIFF, &ifr) == 0;
}

void Tap::set_vnet_hdr_size(int bytes) {
  vnet_hdr_size_ = bytes;
  if (socketpair_) return;
  for (auto& fd : fds_)
    if (::ioctl(fd.get(), TUNSETVNETHDRSZ, &bytes) != 0) throw_errno("TUNSETVNETHDRSZ");
}

void Tap::set_offload(unsigned tun_flags) {
  offload_ = tun_flags;
  if (socketpair_) return;
  for (auto& fd : fds_)
    if (::ioctl(fd.get(), TUNSETOFFLOAD, static_cast<unsigned long>(tun_flags)) != 0)
      throw_errno("TUNSETOFFLOAD");
}

void Tap::set_link(bool up) {
  if (socketpair_) {
    link_up_ = up;
    return;
  }
  UniqueFd s = control_socket();
  ifreq ifr = make_ifreq(name_);
  if (::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) throw_errno("SIOCGIFFLAGS " + name_);
  // Already so: nothing to change, and no privilege needed (an unprivileged
  // kvmmio on a tap its administrator brought up; docs/security.md).
  if (((ifr.ifr_flags & IFF_UP) != 0) == up) return;
  ifr.ifr_flags = static_cast<short>(up ? (ifr.ifr_flags | IFF_UP) : (ifr.ifr_flags & ~IFF_UP));
  if (::ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0) {
    if (errno == EPERM)
      throw UserError("cannot bring tap " + name_ + (up ? " up" : " down") +
                      ": permission denied (run kvmmio as root, or bring it up beforehand: "
                      "ip link set " + name_ + " up)");
    throw_errno("SIOCSIFFLAGS " + name_);
  }
}

bool Tap::link_up() const {
  if (socketpair_) return link_up_;
  UniqueFd s = control_socket();
  ifreq ifr = make_ifreq(name_);
  if (::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) throw_errno("SIOCGIFFLAGS " + name_);
  return (ifr.ifr_flags & IFF_UP) != 0;
}

int Tap::ifindex() const {
  if (socketpair_) return 0;
  UniqueFd s = control_socket();
  ifreq ifr = make_ifreq(name_);
  if (::ioctl(s.get(), SIOCGIFINDEX, &ifr) != 0) throw_errno("SIOCGIFINDEX " + name_);
  return ifr.ifr_ifindex;
}

}  // namespace kvmmio::net
