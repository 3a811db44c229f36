// SPDX-License-Identifier: BSD-2-Clause
// A vhost-user backend of the tests' own (not a real one: Debian's
// virtiofsd runs on the arm64 platform, in the nested tests): a thread at
// the other end of a socketpair that speaks the protocol, receives each
// message with its fds and answers as the test says.
#pragma once

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kvmmio/base/device_lock.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_user_protocol.h"
#include "kvmmio/virtio/virtio_device.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::vhost::test {

using user::Request;

// One message as the backend received it.
struct Message {
  user::Header header;
  std::vector<uint8_t> payload;
  std::vector<UniqueFd> fds;
  Request request() const { return static_cast<Request>(header.request); }
  uint64_t u64() const {
    uint64_t v = 0;
    std::memcpy(&v, payload.data(), std::min(payload.size(), sizeof(v)));
    return v;
  }
  template <typename T>
  T as() const {
    T v{};
    std::memcpy(&v, payload.data(), std::min(payload.size(), sizeof(v)));
    return v;
  }
};

// The backend's end: a thread that receives messages and hands each to
// `answer`, which replies (or not) through reply()/send_raw().
class TestBackend {
 public:
  using Answer = std::function<bool(TestBackend&, Message&)>;  // false: stop serving

  explicit TestBackend(Answer answer) : answer_(std::move(answer)) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    front_.reset(fds[0]);
    back_.reset(fds[1]);
    thread_ = std::thread([this] { serve(); });
  }
  ~TestBackend() {
    ::shutdown(back_.get(), SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
  }

  UniqueFd take_front() { return std::move(front_); }

  void reply(const Message& to, const void* data, uint32_t size, uint32_t flags = user::kVersion | user::kFlagReply) {
    user::Header h{to.header.request, flags, size};
    send_raw(&h, sizeof(h));
    send_raw(data, size);
  }
  void reply_u64(const Message& to, uint64_t v) { reply(to, &v, sizeof(v)); }
  void send_raw(const void* data, size_t size) {
    if (size == 0) return;
    // A peer that has gone may refuse it (EPIPE): the front end's side of
    // that is what the hostile tests look at, not this send.
    ::send(back_.get(), data, size, MSG_NOSIGNAL);
  }
  void close_now() { ::shutdown(back_.get(), SHUT_RDWR); }

  std::vector<Request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  bool receive(Message& m) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
    iovec iov{&m.header, sizeof(m.header)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    if (::recvmsg(back_.get(), &msg, MSG_WAITALL | MSG_CMSG_CLOEXEC) != sizeof(m.header)) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < n; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        m.fds.emplace_back(fd);
      }
    }
    m.payload.resize(m.header.size);
    return m.header.size == 0 ||
           ::recv(back_.get(), m.payload.data(), m.payload.size(), MSG_WAITALL) == static_cast<ssize_t>(m.header.size);
  }
  void serve() {
    for (;;) {
      Message m;
      if (!receive(m)) return;
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(m.request());
      }
      if (!answer_(*this, m)) return;
    }
  }

  Answer answer_;
  UniqueFd front_, back_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Request> requests_;
};

constexpr uint64_t kRingFeatures = virtio::feature::bit(virtio::feature::kVersion1) |
                                   virtio::feature::bit(virtio::feature::kRingIndirectDesc);
constexpr uint64_t kEventIdx = virtio::feature::bit(virtio::feature::kRingEventIdx);
constexpr uint64_t kProtocolFeaturesBit = 1ull << user::kFeatureProtocolFeatures;

// What a backend does with one request: answer it right, stall (no
// answer), or close the connection.
enum class Behaviour { kAnswer, kStall, kClose };

// A backend that does what virtiofsd and DPDK's vhost PMD do: the handshake with REPLY_ACK, every set-up
// acked; `misbehave_on` gets `behaviour` instead.
struct AckingBackend {
  uint64_t features = kRingFeatures | kEventIdx | kProtocolFeaturesBit;
  std::optional<Request> misbehave_on;
  Behaviour behaviour = Behaviour::kAnswer;
  std::vector<Message> kept;  // the vring messages and the memory table, with their fds
  std::mutex mutex;

  TestBackend::Answer answer() {
    return [this](TestBackend& b, Message& m) {
      if (m.request() == misbehave_on && behaviour != Behaviour::kAnswer) {
        if (behaviour == Behaviour::kClose) b.close_now();
        return behaviour != Behaviour::kClose;
      }
      // Kept before any answer: when the front end has it, the test sees
      // the message.
      {
        std::lock_guard lock(mutex);
        if (m.request() != Request::kGetFeatures && m.request() != Request::kGetProtocolFeatures &&
            m.request() != Request::kSetProtocolFeatures && m.request() != Request::kSetOwner) {
          kept.push_back(Message{m.header, m.payload, {}});
          for (auto& fd : m.fds) kept.back().fds.push_back(std::move(fd));
        }
      }
      switch (m.request()) {
        case Request::kGetFeatures: b.reply_u64(m, features); break;
        case Request::kGetProtocolFeatures:
          b.reply_u64(m, 1ull << user::protocol_feature::kReplyAck);
          break;
        case Request::kGetVringBase: {
          auto s = m.as<user::VringState>();
          s.num = 0;
          b.reply(m, &s, sizeof(s));
          break;
        }
        default: break;
      }
      if (m.header.flags & user::kFlagNeedReply) b.reply_u64(m, 0);
      return true;
    };
  }
  std::vector<Request> kept_requests() {
    std::lock_guard lock(mutex);
    std::vector<Request> out;
    for (const Message& m : kept) out.push_back(m.request());
    return out;
  }
};

// The transport's side, as a device sees it (a recording double: the
// transport's own tests cover the real one).
struct RecordingInterrupt final : virtio::VirtioInterrupt {
  void signal_used() override {}
  void signal_config_change() override {}
  void needs_reset(const char*) override { ++resets; }
  std::atomic<int> resets{0};
};

// What `make` throws, its message; "accepted" when it throws nothing.
template <typename Make>
std::string refusal(Make make) {
  try {
    make();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "accepted";
}

// A vhost-user device's surroundings at DRIVER_OK: 1 MiB of guest RAM
// with two queues laid out in it, each with the eventfds the transport
// would give (its ioeventfd as kick, the irqfd as call), the device lock,
// the event loop, and an AckingBackend at the other end of the socket
// (link.take_front() is the device's end).
class HandOverTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kQueues = 2;
  HandOverTest() { memory.add_ram(0x4000'0000, 1 << 20); }

  virtio::DeviceActivation activation(uint64_t features, uint16_t queue_size) {
    virtio::DeviceActivation a;
    a.features = features;
    a.interrupt = &interrupt;
    a.lock = &lock;
    for (uint32_t q = 0; q < kQueues; ++q) {
      virtio::ActiveQueue active;
      active.index = q;
      active.layout = {queue_size, 0x4000'0000 + q * 0x4000ull, 0x4000'1000 + q * 0x4000ull,
                       0x4000'2000 + q * 0x4000ull};
      active.notify_fd = kicks[q].get();
      active.interrupt_fd = call.get();
      a.queues.push_back(active);
    }
    return a;
  }
  bool activate(virtio::VirtioDevice& device, uint64_t features, uint16_t queue_size) {
    auto guard = lock.lock();
    return device.activate(activation(features, queue_size));
  }
  void reset(virtio::VirtioDevice& device) {
    auto guard = lock.lock();
    device.reset();
  }

  GuestMemory memory;
  EventLoop loop;
  DeviceLock lock;
  RecordingInterrupt interrupt;
  std::array<UniqueFd, kQueues> kicks{UniqueFd(::eventfd(0, EFD_CLOEXEC)), UniqueFd(::eventfd(0, EFD_CLOEXEC))};
  UniqueFd call{::eventfd(0, EFD_CLOEXEC)};
  AckingBackend backend;
  TestBackend link{backend.answer()};
};

}  // namespace kvmmio::vhost::test
