// SPDX-License-Identifier: BSD-2-Clause
// ControlServer: the --api-socket listener and its clients (see the header).
#include "vmm/control_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "vmm/unix_socket.h"

namespace kvmmio::vmm {
namespace {

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

// A short line on a socket we are about to close: best effort.
void tell(int fd, const std::string& line) {
  const std::string out = line + "\n";
  const ssize_t ignored = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)ignored;
}

}  // namespace

ControlServer::ControlServer(std::string path) : path_(std::move(path)) {
  listener_ = listen_unix_socket(path_, "--api-socket " + path_, static_cast<int>(kMaxClients));
}

ControlServer::~ControlServer() {
  stop();
  ::unlink(path_.c_str());
}

void ControlServer::give_to(uid_t uid, gid_t gid) {
  // The socket itself, not a link someone put in its place.
  if (::lchown(path_.c_str(), uid, gid) != 0)
    throw UserError("--api-socket " + path_ + ": cannot give it to --user/--group: " + std::strerror(errno));
}

void ControlServer::start(EventLoop& loop, VmControl& vm) {
  loop_ = &loop;
  vm_ = &vm;
  listen_watch_ = loop.watch(listener_.get(), [this] { on_connection(); });
}

void ControlServer::stop() {
  listen_watch_ = {};
  for (Client& c : clients_) {
    c.watch = {};
    c.fd.reset();
    c.partial.clear();
  }
}

void ControlServer::on_connection() {
  UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!fd) return;  // gone already, or out of fds: the next one may do
  auto free_slot = std::find_if(clients_.begin(), clients_.end(), [](const Client& c) { return !c.fd; });
  if (free_slot == clients_.end()) {
    ++counters_.refused_clients;
    tell(fd.get(), control_error_line("too many clients: at most " + std::to_string(kMaxClients) +
                                      " at once; close one and try again"));
    if (const uint64_t k = refused_log_.next())
      KVMMIO_LOG_INFO("--api-socket %s: a client refused, %zu connected already (#%llu)", path_.c_str(),
                      kMaxClients, static_cast<unsigned long long>(k));
    return;
  }
  Client& c = *free_slot;
  c.fd = std::move(fd);
  c.partial.clear();
  c.watch = loop_->watch(c.fd.get(), [this, &c] { on_client(c); });
  ++counters_.clients;
}

// One request at most: peek, then consume up to and including the first
// newline, so whatever follows stays in the socket and brings the next
// callback (level-triggered) instead of waiting in kvmmio.
void ControlServer::on_client(Client& c) {
  // Backpressure instead of a queue: a client whose socket has no room
  // for an answer (it does not read them) is not read from until it has.
  // Writable means a quarter of the socket's send buffer or less is in
  // use (unix_writable()), far more room than any answer needs.
  pollfd room_for_answer{c.fd.get(), POLLOUT, 0};
  if (::poll(&room_for_answer, 1, 0) == 0) {
    c.watch = loop_->watch_writable(c.fd.get(), [this, &c] {  // replaces the running watch: allowed
      c.watch = loop_->watch(c.fd.get(), [this, &c] { on_client(c); });
    });
    return;
  }
  char buf[kMaxLine + 1];
  const size_t room = kMaxLine + 1 - c.partial.size();
  const ssize_t peeked = ::recv(c.fd.get(), buf, room, MSG_PEEK);
  if (peeked < 0 && (errno == EINTR || would_block(errno))) return;
  if (peeked <= 0) return drop(c, nullptr);  // the client left (or its socket failed)
  const auto n = static_cast<size_t>(peeked);
  const char* newline = static_cast<const char*>(std::memchr(buf, '\n', n));
  const size_t take = newline ? static_cast<size_t>(newline - buf) + 1 : n;
  const ssize_t got = ::recv(c.fd.get(), buf, take, 0);
  if (got != static_cast<ssize_t>(take)) return drop(c, "a read failed");
  if (!newline) {
    c.partial.append(buf, take);
    if (c.partial.size() > kMaxLine) {
      ++counters_.requests;
      ++counters_.errors;
      tell(c.fd.get(), control_error_line("request longer than " + std::to_string(kMaxLine) +
                                          " bytes: send one short JSON object per line"));
      drop(c, "a request line too long");
    }
    return;
  }
  std::string line = std::move(c.partial);
  c.partial.clear();
  line.append(buf, take - 1);
  if (!line.empty() && line.back() == '\r') line.pop_back();  // a client sending CRLF
  answer(c, line);
}

void ControlServer::answer(Client& c, std::string_view request) {
  ++counters_.requests;
  ControlReply r = handle_control_request(request, *vm_);
  if (r.error) {
    ++counters_.errors;
    if (const uint64_t k = error_log_.next())
      KVMMIO_LOG_WARN("--api-socket %s: a malformed request answered with an error: %s (#%llu)",
                      path_.c_str(), r.line.c_str(), static_cast<unsigned long long>(k));
  }
  reply(c, r.line);
}

bool ControlServer::reply(Client& c, const std::string& line) {
  const std::string out = line + "\n";
  const ssize_t w = ::send(c.fd.get(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w == static_cast<ssize_t>(out.size())) return true;
  drop(c, w < 0 && !would_block(errno) ? "it left" : "no room for an answer");
  return false;
}

void ControlServer::drop(Client& c, const char* why) {
  if (why) {
    ++counters_.dropped_clients;
    if (const uint64_t k = drop_log_.next())
      KVMMIO_LOG_INFO("--api-socket %s: a client closed: %s (#%llu)", path_.c_str(), why,
                      static_cast<unsigned long long>(k));
  }
  c.watch = {};  // from its own callback: allowed
  c.fd.reset();
  c.partial.clear();
}

}  // namespace kvmmio::vmm
