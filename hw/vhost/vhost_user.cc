// SPDX-License-Identifier: BSD-2-Clause
// VhostUserFrontend: the vhost-user messages, sent and awaited with bounds.
#include "kvmmio/vhost/vhost_user.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::vhost {

using user::Request;
using Clock = std::chrono::steady_clock;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

VhostUserFrontend::VhostUserFrontend(UniqueFd socket, std::string name, std::chrono::milliseconds reply_timeout)
    : socket_(std::move(socket)), name_(std::move(name)), timeout_(reply_timeout) {
  const int flags = ::fcntl(socket_.get(), F_GETFL);
  if (flags < 0 || ::fcntl(socket_.get(), F_SETFL, flags | O_NONBLOCK) != 0)
    throw BackendError("vhost-user backend " + name_ + ": not a usable socket: " + std::strerror(errno));
}

void VhostUserFrontend::fail(const std::string& what) {
  broken_ = true;
  throw BackendError("vhost-user backend " + name_ + ": " + what);
}

void VhostUserFrontend::wait_for(short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) fail("nothing within " + std::to_string(timeout_.count()) + " ms while awaiting " + what);
    pollfd p{socket_.get(), events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("poll: ") + std::strerror(errno));
    if (n == 0) continue;  // the deadline check above ends it
    if (p.revents & (events | POLLHUP | POLLERR)) return;
  }
}

void VhostUserFrontend::read_exact(uint8_t* dst, size_t len, Clock::time_point deadline, const char* what) {
  size_t got = 0;
  while (got < len) {
    const ssize_t n = ::recv(socket_.get(), dst + got, len - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0) {
      fail(std::string("closed the connection while awaiting ") + what + (got ? " (mid-message)" : ""));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_for(POLLIN, deadline, what);
    } else if (errno != EINTR) {
      fail(std::string("recv: ") + std::strerror(errno));
    }
  }
}

void VhostUserFrontend::send(Request request, std::span<const uint8_t> payload, std::span<const int> fds,
                             bool confirm) {
  if (!usable()) throw BackendError("vhost-user backend " + name_ + ": the connection is broken");
  const bool ack = confirm && has_protocol_feature(user::protocol_feature::kReplyAck);
  user::Header header{static_cast<uint32_t>(request), user::kVersion | (ack ? user::kFlagNeedReply : 0u),
                      static_cast<uint32_t>(payload.size())};
  std::vector<uint8_t> bytes(sizeof(header) + payload.size());
  std::memcpy(bytes.data(), &header, sizeof(header));
  if (!payload.empty()) std::memcpy(bytes.data() + sizeof(header), payload.data(), payload.size());

  // The fds go with the message's first byte: one sendmsg, retried whole
  // while nothing went, the rest with send.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * user::kMaxMemRegions)] = {};
  const auto deadline = Clock::now() + timeout_;
  size_t sent = 0;
  while (sent < bytes.size()) {
    iovec iov{bytes.data() + sent, bytes.size() - sent};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (sent == 0 && !fds.empty()) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t n = ::sendmsg(socket_.get(), &msg, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait_for(POLLOUT, deadline, (std::string("room to send ") + user::to_string(request)).c_str());
    } else if (n < 0 && errno == EPIPE) {
      fail(std::string("closed the connection before ") + user::to_string(request));
    } else if (n < 0 && errno != EINTR) {
      fail(std::string(user::to_string(request)) + ": sendmsg: " + std::strerror(errno));
    }
  }
  if (ack) {
    uint64_t status = 0;
    receive(user::Awaited{request, /*ack=*/true}, {reinterpret_cast<uint8_t*>(&status), sizeof(status)});
    if (status != 0) fail(std::string("refused ") + user::to_string(request) + " (status " + hex(status) + ")");
  }
}

void VhostUserFrontend::send_u64(Request request, uint64_t value, std::span<const int> fds) {
  send(request, {reinterpret_cast<const uint8_t*>(&value), sizeof(value)}, fds);
}

void VhostUserFrontend::receive(const user::Awaited& awaited, std::span<uint8_t> out) {
  const auto deadline = Clock::now() + timeout_;
  const std::string what = std::string("the reply to ") + user::to_string(awaited.request);
  user::Header header;
  read_exact(reinterpret_cast<uint8_t*>(&header), sizeof(header), deadline, what.c_str());
  if (auto wrong = user::check_reply_header(awaited, header)) fail("sent " + *wrong + " (awaiting " + what + ")");
  // check_reply_header bounded the size by the reply's own.
  std::vector<uint8_t> payload(header.size);
  read_exact(payload.data(), payload.size(), deadline, what.c_str());
  if (auto wrong = user::check_reply_payload(awaited, payload)) fail("sent " + *wrong);
  if (payload.size() != out.size()) fail("sent " + what + " of an unexpected size");
  std::memcpy(out.data(), payload.data(), out.size());
}

uint64_t VhostUserFrontend::request_u64(Request request) {
  send(request, {}, {}, /*confirm=*/false);
  uint64_t value = 0;
  receive(user::Awaited{request}, {reinterpret_cast<uint8_t*>(&value), sizeof(value)});
  return value;
}

uint64_t VhostUserFrontend::start(uint64_t wanted_protocol) {
  send(Request::kSetOwner, {}, {}, /*confirm=*/false);
  features_ = request_u64(Request::kGetFeatures);
  if ((features_ >> user::kFeatureProtocolFeatures) & 1) {
    const uint64_t offered = request_u64(Request::kGetProtocolFeatures);
    const uint64_t wanted = wanted_protocol | (1ull << user::protocol_feature::kReplyAck);
    const uint64_t agreed = offered & wanted;
    send(Request::kSetProtocolFeatures, {reinterpret_cast<const uint8_t*>(&agreed), sizeof(agreed)}, {},
         /*confirm=*/false);
    protocol_features_ = agreed;
    protocol_negotiated_ = true;
  }
  return features_;
}

void VhostUserFrontend::set_features(uint64_t guest_features) {
  // No IOMMU is modelled, as for the kernel's vhost (vhost_device.h).
  uint64_t wanted = guest_features & ~virtio::feature::bit(virtio::feature::kAccessPlatform);
  if (wanted & ~features_)
    throw std::invalid_argument("vhost-user backend " + name_ + " does not offer features " +
                                hex(wanted & ~features_));
  if (protocol_negotiated_) wanted |= 1ull << user::kFeatureProtocolFeatures;
  send_u64(Request::kSetFeatures, wanted);
}

uint64_t VhostUserFrontend::queue_num() {
  if (!has_protocol_feature(user::protocol_feature::kMq))
    throw std::logic_error("vhost-user GET_QUEUE_NUM without the MQ protocol feature");
  return request_u64(Request::kGetQueueNum);
}

void VhostUserFrontend::set_mem_table(const GuestMemory& memory) {
  const auto& regions = memory.regions();
  if (regions.size() > user::kMaxMemRegions)
    throw std::invalid_argument("vhost-user takes at most " + std::to_string(user::kMaxMemRegions) +
                                " RAM regions, not " + std::to_string(regions.size()));
  user::MemTable table{};
  int fds[user::kMaxMemRegions];
  table.nregions = static_cast<uint32_t>(regions.size());
  for (size_t i = 0; i < regions.size(); ++i) {
    const RamRegion& r = *regions[i];
    if (r.memfd() < 0)
      throw std::invalid_argument("vhost-user needs every RAM region in a file the backend can map; the region at " +
                                  hex(r.gpa()) + " is the embedder's own mapping (give it as a RamMapping fd)");
    table.regions[i] = {r.gpa(), r.size(), reinterpret_cast<uint64_t>(r.host()), r.fd_offset()};
    fds[i] = r.memfd();
  }
  // The payload carries the regions given, not the whole array.
  const size_t size = offsetof(user::MemTable, regions) + regions.size() * sizeof(user::MemRegion);
  send(Request::kSetMemTable, {reinterpret_cast<const uint8_t*>(&table), size}, {fds, regions.size()});
}

void VhostUserFrontend::setup_vring(const GuestMemory& memory, const Vring& v) {
  user::VringState num{v.index, v.size};
  send(Request::kSetVringNum, {reinterpret_cast<const uint8_t*>(&num), sizeof(num)});
  user::VringState base{v.index, v.next_avail};
  send(Request::kSetVringBase, {reinterpret_cast<const uint8_t*>(&base), sizeof(base)});
  const RingHostAddresses rings = ring_host_addresses(memory, v);
  user::VringAddr addr{};
  addr.index = v.index;
  addr.desc_user_addr = rings.desc;
  addr.avail_user_addr = rings.avail;
  addr.used_user_addr = rings.used;
  send(Request::kSetVringAddr, {reinterpret_cast<const uint8_t*>(&addr), sizeof(addr)});
  set_vring_kick(v.index, v.kick_fd);
  set_vring_call(v.index, v.call_fd);
  set_vring_err(v.index, v.err_fd);
}

void VhostUserFrontend::set_vring_fd(Request request, unsigned index, int fd) {
  if (index > 0xff) throw std::invalid_argument("vhost-user vring index " + std::to_string(index) + " above 255");
  const uint64_t value = index | (fd < 0 ? user::kVringNoFd : 0);
  if (fd < 0) {
    send_u64(request, value);
  } else {
    const int one[1] = {fd};
    send_u64(request, value, one);
  }
}

void VhostUserFrontend::set_vring_kick(unsigned index, int fd) { set_vring_fd(Request::kSetVringKick, index, fd); }
void VhostUserFrontend::set_vring_call(unsigned index, int fd) { set_vring_fd(Request::kSetVringCall, index, fd); }
void VhostUserFrontend::set_vring_err(unsigned index, int fd) { set_vring_fd(Request::kSetVringErr, index, fd); }

void VhostUserFrontend::set_vring_enable(unsigned index, bool enable) {
  user::VringState state{index, enable ? 1u : 0u};
  send(Request::kSetVringEnable, {reinterpret_cast<const uint8_t*>(&state), sizeof(state)});
}

uint16_t VhostUserFrontend::vring_base(unsigned index) {
  user::VringState state{index, 0};
  send(Request::kGetVringBase, {reinterpret_cast<const uint8_t*>(&state), sizeof(state)}, {}, /*confirm=*/false);
  receive(user::Awaited{Request::kGetVringBase, false, index}, {reinterpret_cast<uint8_t*>(&state), sizeof(state)});
  if (state.num > 0xffff) fail("GET_VRING_BASE answered " + std::to_string(state.num) + ", not a 16-bit index");
  return static_cast<uint16_t>(state.num);
}

void VhostUserFrontend::get_config(uint32_t offset, std::span<uint8_t> out) {
  if (!has_protocol_feature(user::protocol_feature::kConfig))
    throw std::logic_error("vhost-user GET_CONFIG without the CONFIG protocol feature");
  if (out.size() > user::kMaxConfigSize)
    throw std::invalid_argument("vhost-user GET_CONFIG of more than " + std::to_string(user::kMaxConfigSize) + " bytes");
  const auto size = static_cast<uint32_t>(out.size());
  std::vector<uint8_t> payload(sizeof(user::ConfigHeader) + size);
  const user::ConfigHeader header{offset, size, 0};
  std::memcpy(payload.data(), &header, sizeof(header));
  send(Request::kGetConfig, payload, {}, /*confirm=*/false);
  receive(user::Awaited{Request::kGetConfig, false, 0, offset, size}, payload);
  std::memcpy(out.data(), payload.data() + sizeof(header), size);
}

}  // namespace kvmmio::vhost
