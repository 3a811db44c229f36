// SPDX-License-Identifier: BSD-2-Clause
// What an administrator does to a VMM's tap behind its back, for the fault
// tests: delete the interface (as `ip link del NAME`: RTM_DELLINK) and
// create a persistent tap of that name again (as `ip tuntap add NAME mode
// tap vnet_hdr`: TUNSETIFF and TUNSETPERSIST on a throw-away fd); and a
// bridge for one test.
#pragma once

#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::test {

inline void delete_link(int ifindex) {
  UniqueFd s(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!s) throw std::runtime_error("rtnetlink socket");
  struct {
    nlmsghdr h;
    ifinfomsg i;
  } req{};
  req.h.nlmsg_len = sizeof(req);
  req.h.nlmsg_type = RTM_DELLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  req.i.ifi_family = AF_UNSPEC;
  req.i.ifi_index = ifindex;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(s.get(), &req, sizeof(req), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0)
    throw std::runtime_error("RTM_DELLINK send");
  alignas(nlmsghdr) char buf[1024];
  const ssize_t n = ::recv(s.get(), buf, sizeof(buf), 0);
  const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
  if (n < static_cast<ssize_t>(sizeof(nlmsghdr) + sizeof(nlmsgerr)) || h->nlmsg_type != NLMSG_ERROR)
    throw std::runtime_error("RTM_DELLINK: no acknowledgement");
  const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
  if (err->error != 0) throw std::runtime_error(std::string("RTM_DELLINK: ") + std::strerror(-err->error));
}

inline void delete_link(const std::string& name) {
  if (const unsigned index = ::if_nametoindex(name.c_str())) delete_link(static_cast<int>(index));
}

// `owner` >= 0: as `ip tuntap add NAME mode tap vnet_hdr user OWNER`, a
// tap that user may attach to without privileges (TUNSETOWNER).
inline void create_persistent_tap(const std::string& name, long owner = -1) {
  UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
  if (!fd) throw std::runtime_error("open /dev/net/tun");
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
  if (::ioctl(fd.get(), TUNSETIFF, &ifr) != 0) throw std::runtime_error("TUNSETIFF " + name);
  if (owner >= 0 && ::ioctl(fd.get(), TUNSETOWNER, owner) != 0) throw std::runtime_error("TUNSETOWNER " + name);
  if (::ioctl(fd.get(), TUNSETPERSIST, 1) != 0) throw std::runtime_error("TUNSETPERSIST " + name);
}

// Deletes the interface `name` at scope exit, if one exists then (a test
// that created a persistent tap must not leave it behind, even on failure).
class LinkCleanup {
 public:
  explicit LinkCleanup(std::string name) : name_(std::move(name)) {}
  ~LinkCleanup() {
    try {
      delete_link(name_);
    } catch (...) {
    }
  }

 private:
  std::string name_;
};

// A bridge for one test (SIOCBRADDBR), removed at the end.
class TestBridge {
 public:
  explicit TestBridge(std::string name) : name_(std::move(name)) {
    delete_link(name_);  // left over by an interrupted run
    ioctl_or_skip(SIOCBRADDBR);
  }
  ~TestBridge() {
    UniqueFd s(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ::ioctl(s.get(), SIOCBRDELBR, name_.c_str());
  }
  const std::string& name() const { return name_; }
  bool created() const { return created_; }

 private:
  void ioctl_or_skip(unsigned long request) {
    UniqueFd s(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    created_ = ::ioctl(s.get(), request, name_.c_str()) == 0;
  }
  std::string name_;
  bool created_ = false;
};

}  // namespace kvmmio::test
