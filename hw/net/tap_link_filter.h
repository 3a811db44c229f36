// SPDX-License-Identifier: BSD-2-Clause
// The socket filter of TapMonitor's rtnetlink socket (internal to hw/net).
//
// Why it exists: RTMGRP_LINK carries every link message of the host, about
// every interface, in every family. Unfiltered, each one woke the event
// loop (one wake-up, two ioctls, no change), so another VM's tap coming up
// on the same bridge, or a bridge port's state, cost this VMM a wake-up in
// the middle of guest traffic that the VMM is meant to leave alone. The
// kernel runs the filter before it queues a notification, so what the
// filter drops never wakes the loop (nor fills the socket's buffer).
#pragma once

#include <linux/filter.h>

#include <vector>

namespace kvmmio::net {

// A classic BPF program that passes RTM_NEWLINK and RTM_DELLINK messages of
// family AF_UNSPEC (the generic link messages, which carry IFF_UP, the name
// and the removal) about interface `ifindex`, and drops everything else:
// other interfaces, AF_BRIDGE and AF_INET6 link messages (protocol details
// that say nothing about IFF_UP or the name), anything too short to be a
// link message. `ifindex` 0: about any interface (the interface is absent,
// and the one that appears under its name has an index not known yet).
//
// It reads the message at fixed offsets, which holds because rtnetlink
// sends each notification as its own skb: nlmsghdr.nlmsg_type at 4, then
// the ifinfomsg at 16 (ifi_family at 16, ifi_index at 20), all in host
// byte order.
std::vector<sock_filter> tap_link_filter(int ifindex);

}  // namespace kvmmio::net
