// SPDX-License-Identifier: BSD-2-Clause
// PacketSocket: an AF_PACKET socket bound to one interface, for tests to see
// the frames a tap carries and to send frames into it from the host side.
// Frames use the local-experimental EtherType 0x88b5 so that the kernel's own
// traffic on the interface (IPv6 router solicitations...) is filtered out.
#pragma once

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kvmmio/base/unique_fd.h"

namespace kvmmio::test {

constexpr uint16_t kTestEtherType = 0x88b5;

// A 60+ byte Ethernet frame: broadcast destination, a fixed source, the test
// EtherType, then `payload_len` bytes of a pattern derived from `seed`.
inline std::vector<uint8_t> test_frame(uint8_t seed, size_t payload_len = 64) {
  std::vector<uint8_t> f(14 + payload_len);
  std::memset(f.data(), 0xff, 6);
  const uint8_t src[6] = {0x02, 0x6b, 0x76, 0x6d, 0x6d, 0x01};
  std::memcpy(f.data() + 6, src, 6);
  f[12] = kTestEtherType >> 8;
  f[13] = kTestEtherType & 0xff;
  for (size_t i = 0; i < payload_len; ++i) f[14 + i] = static_cast<uint8_t>(seed + i * 7);
  return f;
}

class PacketSocket {
 public:
  explicit PacketSocket(int ifindex) : ifindex_(ifindex) {
    fd_ = UniqueFd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(kTestEtherType)));
    if (!fd_) throw std::runtime_error("AF_PACKET socket (needs root)");
    sockaddr_ll addr{};
    addr.sll_family = AF_PACKET;
    addr.sll_protocol = htons(kTestEtherType);
    addr.sll_ifindex = ifindex;
    if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      throw std::runtime_error("bind AF_PACKET socket");
  }

  // Sends a frame out of the interface (towards whoever reads the tap fd).
  void send(const std::vector<uint8_t>& frame) {
    sockaddr_ll addr{};
    addr.sll_family = AF_PACKET;
    addr.sll_ifindex = ifindex_;
    addr.sll_halen = 6;
    std::memcpy(addr.sll_addr, frame.data(), 6);
    if (::sendto(fd_.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&addr),
                 sizeof(addr)) != static_cast<ssize_t>(frame.size()))
      throw std::runtime_error("sendto on AF_PACKET socket");
  }

  // The next test frame the interface received, or nullopt after timeout_ms.
  std::optional<std::vector<uint8_t>> receive(int timeout_ms) {
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    std::vector<uint8_t> buf(65536);
    const ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n <= 0) return std::nullopt;
    buf.resize(static_cast<size_t>(n));
    return buf;
  }

 private:
  int ifindex_;
  UniqueFd fd_;
};

}  // namespace kvmmio::test
