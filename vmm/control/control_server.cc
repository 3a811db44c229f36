// SPDX-License-Identifier: BSD-2-Clause
// ControlServer: the --api-socket listener and its clients (see the header).
#include "vmm/control/control_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"

namespace kvmmio::vmm {
namespace {

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

// A short line on a socket we are about to close: best effort.
void tell(int fd, const std::string& line) {
  const std::string out = line + "\n";
  const ssize_t ignored = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)ignored;
}

std::string duration_text(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s" : std::to_string(d.count()) + " ms";
}

}  // namespace

ControlServer::ControlServer(std::string path, std::chrono::milliseconds idle_timeout)
    : path_(std::move(path)),
      listener_(path_, "--api-socket " + path_, static_cast<int>(kMaxClients)),
      idle_timeout_(idle_timeout),
      idle_timer_(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (!idle_timer_) throw_errno("--api-socket " + path_ + ": timerfd_create");
}

ControlServer::~ControlServer() { stop(); }  // the listener removes the socket file

void ControlServer::give_to(uid_t uid, gid_t gid) { listener_.give_to(uid, gid); }

void ControlServer::start(EventLoop& loop, VmControl& vm) {
  publish();
  loop_ = &loop;
  vm_ = &vm;
  listen_watch_ = loop.watch(listener_.fd(), [this] { on_connection(); });
  idle_watch_ = loop.watch(idle_timer_.get(), [this] { on_idle_timer(); });
}

void ControlServer::stop() {
  // No timer call here: stop() runs on the main thread, whose seccomp
  // class has none; an armed timer only finds nobody idle when it fires.
  listen_watch_ = {};
  idle_watch_ = {};
  for (Client& c : clients_) {
    c.watch = {};
    c.fd.reset();
    c.partial.clear();
  }
}

void ControlServer::on_connection() {
  UniqueFd fd = listener_.accept(counters_.foreign_clients);
  if (!fd) return;
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
  c.idle_since = Clock::now();
  c.watch = loop_->watch(c.fd.get(), [this, &c] { on_client(c); });
  ++counters_.clients;
  // An armed timer fires no later than this client's time is up: it is
  // re-armed for the next deadline when it fires.
  if (!idle_timer_armed_) arm_idle_timer();
}

void ControlServer::arm_idle_timer() {
  std::optional<Clock::time_point> first;
  for (const Client& c : clients_)
    if (c.fd && (!first || c.idle_since < *first)) first = c.idle_since;
  itimerspec when{};  // zero: disarmed
  if (first) {
    // At least 1 ns: a zero it_value would disarm the timer.
    const auto left = std::max<Clock::duration>(*first + idle_timeout_ - Clock::now(), std::chrono::nanoseconds(1));
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    when.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
    when.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
  }
  // A failure leaves it unarmed: the next client tries again.
  const bool set = ::timerfd_settime(idle_timer_.get(), 0, &when, nullptr) == 0;
  idle_timer_armed_ = set && first.has_value();
}

void ControlServer::on_idle_timer() {
  uint64_t expirations = 0;
  const ssize_t ignored = ::read(idle_timer_.get(), &expirations, sizeof expirations);  // clears it
  (void)ignored;
  const Clock::time_point now = Clock::now();
  for (Client& c : clients_) {
    if (!c.fd || now - c.idle_since < idle_timeout_) continue;
    ++counters_.idle_clients;
    tell(c.fd.get(), control_error_line("no complete request for " + duration_text(idle_timeout_) +
                                        ": closed; send each request as one line, at once"));
    if (const uint64_t k = idle_log_.next())
      KVMMIO_LOG_INFO("--api-socket %s: a client idle for %s closed (#%llu)", path_.c_str(),
                      duration_text(idle_timeout_).c_str(), static_cast<unsigned long long>(k));
    drop(c, nullptr);
  }
  arm_idle_timer();
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
  c.idle_since = Clock::now();
  answer(c, line);
}

void ControlServer::answer(Client& c, std::string_view request) {
  ++counters_.requests;
  ControlReply r = handle_control_request(request, *vm_, identity_);
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
