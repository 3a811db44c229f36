// SPDX-License-Identifier: BSD-2-Clause
// Tap: a Linux tap interface as a virtio-net backend sees it: one fd per
// queue, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR (IFF_MULTI_QUEUE for more than
// one queue), the vnet header size and offloads set to match what the guest
// negotiated. Created if absent, attached if present; owns its fds.
#pragma once

#include <string>
#include <vector>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::net {

class Tap {
 public:
  // Opens `queues` fds on tap `name` (created if it does not exist).
  // UserError, naming the fix, when /dev/net/tun is missing, permission is
  // lacking, or an existing interface of that name cannot be attached.
  Tap(const std::string& name, unsigned queues = 1);

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
  // TUNSETOFFLOAD on every queue (TUN_F_CSUM, TUN_F_TSO4, ...).
  void set_offload(unsigned tun_flags);
  // Brings the interface up or down (SIOCSIFFLAGS).
  void set_link(bool up);
  bool link_up() const;
  int ifindex() const;

 private:
  std::string name_;
  std::vector<UniqueFd> fds_;
};

}  // namespace kvmmio::net
