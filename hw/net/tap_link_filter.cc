// SPDX-License-Identifier: BSD-2-Clause
// TapMonitor's socket filter (see tap_link_filter.h).
#include "tap_link_filter.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace kvmmio::net {

std::vector<sock_filter> tap_link_filter(int ifindex) {
  constexpr uint32_t kType = offsetof(nlmsghdr, nlmsg_type);
  constexpr uint32_t kFamily = NLMSG_HDRLEN + offsetof(ifinfomsg, ifi_family);
  constexpr uint32_t kIndex = NLMSG_HDRLEN + offsetof(ifinfomsg, ifi_index);
  constexpr uint8_t kToDrop = 0xff;  // a jump to the last instruction, resolved below
  // Classic BPF loads half-words and words in network byte order, and the
  // message holds them in host order: the constants are converted alike
  // (htons, htonl), which is right on either byte order. A load past the
  // message's end drops it.
  std::vector<sock_filter> p = {
      BPF_STMT(BPF_LD | BPF_H | BPF_ABS, kType),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(RTM_NEWLINK), 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(RTM_DELLINK), 0, kToDrop),
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, kFamily),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNSPEC, 0, kToDrop),
  };
  if (ifindex != 0) {
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIndex));
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(static_cast<uint32_t>(ifindex)), 0, kToDrop));
  }
  p.push_back(BPF_STMT(BPF_RET | BPF_K, UINT32_MAX));  // pass, whole
  p.push_back(BPF_STMT(BPF_RET | BPF_K, 0));           // drop
  // Jump offsets count from the next instruction.
  for (size_t i = 0; i < p.size(); ++i)
    if (BPF_CLASS(p[i].code) == BPF_JMP && p[i].jf == kToDrop) p[i].jf = static_cast<uint8_t>(p.size() - 2 - i);
  return p;
}

}  // namespace kvmmio::net
