// SPDX-License-Identifier: BSD-2-Clause
// Tap: a Linux tap interface as a virtio-net backend sees it: one fd per
// queue, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR (IFF_MULTI_QUEUE for more than
// one queue), the vnet header size and offloads set to match what the guest
// negotiated. Created if absent, attached if present; owns its fds.
//
// Tap::socketpair() makes a stand-in with no interface behind it, for
// tests and the fuzzer: each queue's fd is one end of a SOCK_SEQPACKET
// socketpair (a frame keeps its boundaries and its vnet header, as through a
// tap), and the caller gets the other ends, the "wire". Its link state, vnet
// header size and offloads are recorded instead of applied.
#pragma once

#include <string>
#include <vector>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio::net {

class KVMMIO_EXPORT Tap {
 public:
  // Opens `queues` fds on tap `name` (created if it does not exist).
  // UserError, naming the fix, when /dev/net/tun is missing, permission is
  // lacking, or an existing interface of that name cannot be attached.
  Tap(const std::string& name, unsigned queues = 1);

  // The socketpair stand-in (see above): `wire` receives the other end of
  // each queue's socketpair, in queue order. Throws std::system_error if
  // socketpair() fails.
  static Tap socketpair(const std::string& name, unsigned queues, std::vector<UniqueFd>& wire);
  bool is_socketpair() const { return socketpair_; }

  const std::string& name() const { return name_; }
  unsigned queues() const { return static_cast<unsigned>(fds_.size()); }
  int fd(unsigned queue) const { return fds_.at(queue).get(); }

  // After the interface was removed (`ip link del`: the fds stay open but
  // detached, reads and writes fail with EBADFD): TUNSETIFF again on the
  // same fds, attaching them to the interface of that name now present, or
  // creating one. The vnet header size and offloads belong to the
  // interface: set them again afterwards. UserError as for the constructor.
  void reattach();

  // Whether queue `queue`'s fd is attached to an interface (TUNGETIFF
  // answers EBADFD once the interface was removed).
  bool attached(unsigned queue) const;

  // TUNSETVNETHDRSZ on every queue: 12 for VERSION_1 or MRG_RXBUF, else 10.
  void set_vnet_hdr_size(int bytes);
  // What set_vnet_hdr_size() last set (0: never called).
  int vnet_hdr_size() const { return vnet_hdr_size_; }
  // TUNSETOFFLOAD on every queue (TUN_F_CSUM, TUN_F_TSO4, ...).
  void set_offload(unsigned tun_flags);
  unsigned offload() const { return offload_; }
  // Brings the interface up or down (SIOCSIFFLAGS), unless it already is
  // (then no privilege is needed). UserError on EPERM, naming the fix.
  void set_link(bool up);
  bool link_up() const;
  int ifindex() const;

 private:
  Tap() = default;

  std::string name_;
  std::vector<UniqueFd> fds_;
  bool socketpair_ = false;
  bool link_up_ = true;  // the socketpair stand-in's link
  int vnet_hdr_size_ = 0;
  unsigned offload_ = 0;
};

}  // namespace kvmmio::net
