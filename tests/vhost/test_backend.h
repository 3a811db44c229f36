// SPDX-License-Identifier: BSD-2-Clause
// A vhost-user backend of the tests' own (not a real one: Debian's
// virtiofsd runs on the arm64 platform, in the nested tests): a thread at
// the other end of a socketpair that speaks the protocol, receives each
// message with its fds and answers as the test says.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "kvmmio/base/unique_fd.h"
#include "kvmmio/vhost/vhost_user_protocol.h"

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

}  // namespace kvmmio::vhost::test
