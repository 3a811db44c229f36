// SPDX-License-Identifier: BSD-2-Clause
// ConsoleRelay: the console between the devices' socket pair and a pty or
// a unix socket's client (see the header).
#include "vmm/console/console_relay.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "vmm/process/unix_socket.h"

namespace kvmmio::vmm {
namespace {

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

std::string shown(const ConsoleDestination& d) { return "--console ..." + d.to_string(); }

}  // namespace

ConsoleRelay::ConsoleRelay(const ConsoleDestination& destination) : kind_(destination.kind) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) != 0)
    throw_errno("console relay: socketpair");
  device_.reset(pair[0]);
  relay_.reset(pair[1]);
  if (kind_ == ConsoleDestination::Kind::kPty) {
    open_pty();
  } else if (kind_ == ConsoleDestination::Kind::kSocket) {
    path_ = destination.path;
    listener_.emplace(path_, shown(destination), 4);
  } else {
    throw std::logic_error("ConsoleRelay is for pty and socket consoles");
  }
}

ConsoleRelay::~ConsoleRelay() { stop(); }

void ConsoleRelay::open_pty() {
  const ConsoleDestination d{ConsoleDestination::Kind::kPty, {}};
  pty_master_.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
  if (!pty_master_ || ::grantpt(pty_master_.get()) != 0 || ::unlockpt(pty_master_.get()) != 0)
    throw UserError(shown(d) + ": cannot allocate a pseudo-terminal: " + std::strerror(errno) +
                    " (is /dev/pts mounted? else use --console ...,socket=PATH)");
  char name[128];
  if (::ptsname_r(pty_master_.get(), name, sizeof name) != 0)
    throw UserError(shown(d) + ": ptsname: " + std::strerror(errno));
  path_ = name;
  pty_slave_.reset(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
  if (!pty_slave_) throw UserError(shown(d) + ": cannot open " + path_ + ": " + std::strerror(errno));
  // Raw: no echo of the guest's output back as its input, no line editing;
  // whoever attaches (screen, minicom) sets its own mode anyway.
  termios t{};
  if (::tcgetattr(pty_slave_.get(), &t) == 0) {
    ::cfmakeraw(&t);
    ::tcsetattr(pty_slave_.get(), TCSANOW, &t);
  }
}

void ConsoleRelay::give_to(uid_t uid, gid_t gid) {
  if (listener_) return listener_->give_to(uid, gid);
  if (::fchown(pty_slave_.get(), uid, gid) != 0)
    throw UserError(shown(ConsoleDestination{kind_, {}}) + ": cannot give " + path_ +
                    " to --user/--group: " + std::strerror(errno));
}

void ConsoleRelay::start(EventLoop& loop) {
  loop_ = &loop;
  output_watch_ = loop.watch(relay_.get(), [this] { on_device_output(); });
  if (pty_master_) peer_watch_ = loop.watch(pty_master_.get(), [this] { on_peer_input(); });
  if (listener_) {
    listener_->publish();
    listen_watch_ = loop.watch(listener_->fd(), [this] { on_connection(); });
  }
}

void ConsoleRelay::stop() {
  listen_watch_ = {};
  peer_watch_ = {};
  output_watch_ = {};
}

void ConsoleRelay::dropped_output(size_t n, const char* why) {
  counters_.output_dropped += n;
  if (const uint64_t k = output_drop_log_.next())
    KVMMIO_LOG_INFO("console %s: %zu output bytes dropped: %s (drop #%llu; counted in --stats)",
                    path_.c_str(), n, why, static_cast<unsigned long long>(k));
}

// The guest wrote: pass it on, or drop it. Never waits.
void ConsoleRelay::on_device_output() {
  char buf[kChunk];
  const ssize_t r = ::read(relay_.get(), buf, sizeof buf);
  if (r < 0 && (errno == EINTR || would_block(errno))) return;
  if (r <= 0) {  // the devices' end cannot close while the relay exists
    output_watch_ = {};
    return;
  }
  const auto n = static_cast<size_t>(r);
  const int to = peer();
  if (to < 0) {
    counters_.output_dropped += n;
    if (!std::exchange(told_no_client_, true))
      KVMMIO_LOG_INFO("console %s: no client connected: the guest's output is dropped until one connects "
                      "(counted in --stats)",
                      path_.c_str());
    return;
  }
  // MSG_NOSIGNAL: a client that left is an error return, not SIGPIPE.
  const ssize_t w = pty_master_ ? ::write(to, buf, n) : ::send(to, buf, n, MSG_NOSIGNAL);
  if (w > 0) counters_.output_bytes += static_cast<uint64_t>(w);
  if (w < 0 && !would_block(errno) && errno != EINTR) {
    dropped_output(n, std::strerror(errno));
    if (!pty_master_) drop_client("write failed");
    return;
  }
  const size_t taken = w > 0 ? static_cast<size_t>(w) : 0;
  if (taken < n) dropped_output(n - taken, "the reader's buffer is full");
}

// The pty's user or the client typed: pass it to the guest's side.
void ConsoleRelay::on_peer_input() {
  char buf[kChunk];
  const int from = peer();
  const ssize_t r = ::read(from, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || would_block(errno))) return;
  if (r <= 0) {
    if (!pty_master_) return drop_client(r == 0 ? "disconnected" : std::strerror(errno));
    // The relay holds the slave open, so this is not expected; stop
    // rather than spin on an fd that stays readable.
    KVMMIO_LOG_WARN("console %s: %s; no more console input", path_.c_str(),
                    r == 0 ? "end of input" : std::strerror(errno));
    peer_watch_ = {};
    return;
  }
  const auto n = static_cast<size_t>(r);
  const ssize_t w = ::send(relay_.get(), buf, n, MSG_NOSIGNAL);
  const size_t taken = w > 0 ? static_cast<size_t>(w) : 0;
  counters_.input_bytes += taken;
  if (taken < n) {
    counters_.input_dropped += n - taken;
    if (const uint64_t k = input_drop_log_.next())
      KVMMIO_LOG_INFO("console %s: the guest is not reading its input; %zu bytes dropped (#%llu)",
                      path_.c_str(), n - taken, static_cast<unsigned long long>(k));
  }
}

void ConsoleRelay::on_connection() {
  UniqueFd c = listener_->accept(counters_.foreign_connections);
  if (!c) return;
  if (client_) {
    ++counters_.refused_connections;
    static constexpr char kBusy[] = "kvmmio: this console has a client already\r\n";
    const ssize_t ignored = ::send(c.get(), kBusy, sizeof kBusy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
    if (const uint64_t k = refused_log_.next())
      KVMMIO_LOG_INFO("console %s: a second client refused (#%llu)", path_.c_str(),
                      static_cast<unsigned long long>(k));
    return;
  }
  client_ = std::move(c);
  told_no_client_ = false;
  ++counters_.connections;
  peer_watch_ = loop_->watch(client_.get(), [this] { on_peer_input(); });
  if (const uint64_t k = client_log_.next())
    KVMMIO_LOG_INFO("console %s: a client connected (#%llu)", path_.c_str(), static_cast<unsigned long long>(k));
}

void ConsoleRelay::drop_client(const char* why) {
  peer_watch_ = {};  // from its own callback: allowed
  client_.reset();
  // Counted with the connections: a client that comes and goes in a loop
  // fills no log.
  if (client_log_.count() <= GuestErrorLog::kBurst || client_log_.count() % GuestErrorLog::kEvery == 0)
    KVMMIO_LOG_INFO("console %s: the client left (%s)", path_.c_str(), why);
}

}  // namespace kvmmio::vmm
