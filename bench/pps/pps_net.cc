// SPDX-License-Identifier: BSD-2-Clause
#include "bench/pps/pps_net.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kvmmio/base/error.h"
#include "vmm/process/parse.h"

namespace kvmmio::pps {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// How long a receiver waits, once the sender's count is in, for its socket
// to stay empty; and how long any control message may take.
constexpr double kQuietSeconds = 0.5;
constexpr double kControlSeconds = 30;
constexpr int kReceiveBuffer = 4 << 20;  // asked for; the kernel caps it at rmem_max

// The control connection, a line at a time.
class Control {
 public:
  explicit Control(UniqueFd fd) : fd_(std::move(fd)) {}
  int fd() const { return fd_.get(); }

  void send_line(const std::string& line) {
    const std::string out = line + "\n";
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::send(fd_.get(), out.data() + done, out.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw_errno("control connection: send");
      done += static_cast<size_t>(n);
    }
  }

  // A whole line if one has arrived; never blocks.
  bool poll_line(std::string& line) {
    if (take(line)) return true;
    char buf[512];
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) throw std::runtime_error("control connection closed by the other end");
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
      throw_errno("control connection: recv");
    }
    buf_.append(buf, static_cast<size_t>(n));
    return take(line);
  }

  std::string read_line(double timeout_seconds) {
    const auto start = Clock::now();
    std::string line;
    while (!poll_line(line)) {
      const double left = timeout_seconds - since(start);
      if (left <= 0) throw std::runtime_error("no answer on the control connection");
      pollfd p{fd_.get(), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    }
    return line;
  }

  // "WORD k=v,..." with WORD as expected: the key-value items.
  std::vector<KeyValue> expect(const std::string& word, std::string& line, double timeout_seconds) {
    line = read_line(timeout_seconds);
    if (line.rfind(word, 0) != 0) throw std::runtime_error("expected '" + word + "', got '" + line + "'");
    if (line.size() == word.size()) return {};
    if (line[word.size()] != ' ') throw std::runtime_error("malformed control line '" + line + "'");
    return parse_key_values(std::string_view(line).substr(word.size() + 1), line);
  }

 private:
  bool take(std::string& line) {
    const size_t nl = buf_.find('\n');
    if (nl == std::string::npos) {
      if (buf_.size() > 4096) throw std::runtime_error("control line too long");
      return false;
    }
    line = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    return true;
  }

  UniqueFd fd_;
  std::string buf_;
};

std::string_view value_of(const std::vector<KeyValue>& kv, std::string_view key, const std::string& line) {
  for (const auto& [k, v] : kv)
    if (k == key) return v;
  throw std::runtime_error("control line '" + line + "' has no " + std::string(key) + "=");
}
uint64_t uint_of(const std::vector<KeyValue>& kv, std::string_view key, const std::string& line, uint64_t min,
                 uint64_t max) {
  return parse_uint(value_of(kv, key, line), line, min, max);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", std::max(s, 1e-6));
  return buf;
}

void set_port(sockaddr_storage& a, int port) {
  if (a.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6&>(a).sin6_port = htons(static_cast<uint16_t>(port));
  else
    reinterpret_cast<sockaddr_in&>(a).sin_port = htons(static_cast<uint16_t>(port));
}

struct Address {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
};
Address peer_of(int fd) {
  Address a;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a.addr), &a.len) != 0) throw_errno("getpeername");
  return a;
}
Address local_of(int fd) {
  Address a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a.addr), &a.len) != 0) throw_errno("getsockname");
  return a;
}

UniqueFd udp_socket(int family) {
  UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP));
  if (!fd) throw_errno("UDP socket");
  if (family == AF_INET6) {
    int zero = 0;
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  }
  return fd;
}

// A UDP socket to receive on: on the address `near` (the control
// connection's local end), an ephemeral port.
UniqueFd udp_receiver(Address near) {
  UniqueFd fd = udp_socket(near.addr.ss_family);
  int size = kReceiveBuffer;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  set_port(near.addr, 0);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&near.addr), near.len) != 0) throw_errno("UDP bind");
  return fd;
}

// `flows` UDP sockets connected to `far` at `port`, each from its own
// ephemeral source port.
std::vector<UniqueFd> udp_senders(Address far, int port, unsigned flows) {
  set_port(far.addr, port);
  std::vector<UniqueFd> fds;
  for (unsigned i = 0; i < flows; ++i) {
    UniqueFd fd = udp_socket(far.addr.ss_family);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&far.addr), far.len) != 0) throw_errno("UDP connect");
    fds.push_back(std::move(fd));
  }
  return fds;
}

struct Run {
  uint32_t id = 0;
  size_t payload = 0;
  double seconds = 0;
  uint64_t rate = 0;
  unsigned batch = 0;
  unsigned flows = 1;
};

struct Sent {
  uint64_t count = 0;
  double seconds = 0;
};

// `batch` datagram buffers of `payload` bytes, as sendmmsg and recvmmsg
// take them; for recvmmsg, each with room for its source address.
struct Batch {
  Batch(unsigned batch, size_t payload, uint8_t fill)
      : payload(payload), buf(size_t{batch} * payload, fill), iov(batch), msgs(batch), from(batch) {
    for (unsigned i = 0; i < batch; ++i) {
      iov[i] = {buf.data() + size_t{i} * payload, payload};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
  }
  uint8_t* at(size_t i) { return buf.data() + i * payload; }
  void want_sources() {
    for (size_t i = 0; i < msgs.size(); ++i) {
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
    }
  }
  // The source port of datagram i, after recvmmsg.
  int source_port(size_t i) const {
    return from[i].ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6&>(from[i]).sin6_port)
                                         : ntohs(reinterpret_cast<const sockaddr_in&>(from[i]).sin_port);
  }
  size_t payload;
  std::vector<uint8_t> buf;
  std::vector<iovec> iov;
  std::vector<mmsghdr> msgs;
  std::vector<sockaddr_storage> from;
};

// The source ports datagrams came from: how many flows the receiver saw.
// Bounded: past kMaxSources distinct ports it stops adding (a stray
// sender on the port cannot grow it).
class Sources {
 public:
  static constexpr size_t kMaxSources = 1024;
  void add(int port) {
    if (ports_.size() < kMaxSources && std::find(ports_.begin(), ports_.end(), port) == ports_.end())
      ports_.push_back(port);
  }
  uint64_t count() const { return ports_.size(); }

 private:
  std::vector<int> ports_;
};

// Sends numbered datagrams for r.seconds, in sendmmsg batches over the
// flows' sockets in turn, paced to r.rate when one is given. A datagram
// counts as sent when the kernel took it; one dropped later on the way (a
// full qdisc or tap queue) is lost.
Sent send_datagrams(const std::vector<UniqueFd>& fds, const Run& r) {
  Batch b(r.batch, r.payload, 'p');
  uint64_t seq = 0;
  size_t flow = 0;  // the socket of the next batch: round robin
  const auto start = Clock::now();
  for (;;) {
    const double elapsed = since(start);
    if (elapsed >= r.seconds || seq >= kMaxSeq) break;
    uint64_t n = std::min<uint64_t>(r.batch, kMaxSeq - seq);
    if (r.rate) {
      const uint64_t due = static_cast<uint64_t>(elapsed * double(r.rate)) + 1;
      if (seq >= due) {
        std::this_thread::sleep_for(std::chrono::duration<double>(
            std::min(1e-3, double(seq + 1 - due) / double(r.rate))));
        continue;
      }
      n = std::min(n, due - seq);
    }
    for (uint64_t i = 0; i < n; ++i) write_header(b.at(i), r.id, seq + i);
    const int fd = fds[flow].get();
    flow = (flow + 1) % fds.size();
    const int sent = ::sendmmsg(fd, b.msgs.data(), static_cast<unsigned>(n), 0);
    if (sent < 0) {
      // ENOBUFS: the device queue is full, back off a little; ECONNREFUSED:
      // an ICMP port-unreachable from an earlier datagram; both not sent.
      if (errno == ENOBUFS) std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS || errno == ECONNREFUSED) continue;
      throw_errno("sendmmsg");
    }
    seq += static_cast<uint64_t>(sent);
  }
  return {seq, since(start)};
}

// Receives into `t` and `sources` until the sender's count has arrived on
// `ctl` and the socket has then been quiet for kQuietSeconds. Returns the
// count.
Sent receive_datagrams(int fd, Control& ctl, SeqTracker& t, Sources& sources, const Run& r) {
  Batch b(r.batch, r.payload, 0);
  b.want_sources();
  const auto start = Clock::now();
  auto last = start;
  bool have_count = false;
  Sent sent;
  for (;;) {
    for (;;) {
      const int n = ::recvmmsg(fd, b.msgs.data(), r.batch, MSG_DONTWAIT, nullptr);
      if (n < 0) {
        if (errno == EINTR || errno == ECONNREFUSED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        throw_errno("recvmmsg");
      }
      for (int i = 0; i < n; ++i) {
        t.add(b.at(size_t(i)), std::min<size_t>(b.msgs[i].msg_len, r.payload));
        sources.add(b.source_port(size_t(i)));
        b.msgs[i].msg_hdr.msg_namelen = sizeof(b.from[size_t(i)]);
      }
      if (n > 0) last = Clock::now();
      if (n < static_cast<int>(r.batch)) break;
    }
    std::string line;
    if (!have_count && ctl.poll_line(line)) {
      if (line.rfind("sent ", 0) != 0) throw std::runtime_error("expected 'sent', got '" + line + "'");
      const auto kv = parse_key_values(std::string_view(line).substr(5), line);
      sent.count = uint_of(kv, "count", line, 0, kMaxSeq);
      sent.seconds = parse_positive_decimal(value_of(kv, "seconds", line), line, 1e6);
      have_count = true;
      last = Clock::now();
    }
    double wait = 0.2;
    if (have_count) {
      wait = kQuietSeconds - since(last);
      if (wait <= 0) break;
    } else if (since(start) > r.seconds + kControlSeconds) {
      throw std::runtime_error("the sender never sent its count");
    }
    pollfd p[2] = {{fd, POLLIN, 0}, {ctl.fd(), static_cast<short>(have_count ? 0 : POLLIN), 0}};
    ::poll(p, 2, static_cast<int>(wait * 1000) + 1);
  }
  return sent;
}

uint32_t new_run_id() { return static_cast<uint32_t>(std::random_device{}()); }

}  // namespace

UniqueFd listen_control(int port) {
  UniqueFd fd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw_errno("socket");
  int one = 1, zero = 0;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(static_cast<uint16_t>(port));
  addr.sin6_addr = in6addr_any;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw_errno("bind TCP port " + std::to_string(port));
  if (::listen(fd.get(), 4) != 0) throw_errno("listen");
  return fd;
}

int local_port(int fd) {
  const Address a = local_of(fd);
  return a.addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6&>(a.addr).sin6_port)
                                      : ntohs(reinterpret_cast<const sockaddr_in&>(a.addr).sin_port);
}

void serve_one(int listener) {
  UniqueFd conn_fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
  if (!conn_fd) throw_errno("accept");
  Control ctl(std::move(conn_fd));
  std::string line;
  const auto kv = ctl.expect("run", line, kControlSeconds);
  Run r;
  r.id = static_cast<uint32_t>(uint_of(kv, "id", line, 0, UINT32_MAX));
  r.payload = uint_of(kv, "payload", line, kHeaderBytes, kMaxPayload);
  r.seconds = parse_positive_decimal(value_of(kv, "seconds", line), line, 3600);
  r.rate = uint_of(kv, "rate", line, 0, 100'000'000);
  r.batch = static_cast<unsigned>(uint_of(kv, "batch", line, 1, 1024));
  r.flows = static_cast<unsigned>(uint_of(kv, "flows", line, 1, kMaxFlows));
  const std::string_view sender = value_of(kv, "sender", line);
  if (sender == "server") {
    const int port = static_cast<int>(uint_of(kv, "port", line, 1, 65535));
    const std::vector<UniqueFd> udp = udp_senders(peer_of(ctl.fd()), port, r.flows);
    ctl.send_line("ready");
    const Sent s = send_datagrams(udp, r);
    ctl.send_line("sent count=" + std::to_string(s.count) + ",seconds=" + seconds_text(s.seconds));
    return;
  }
  if (sender != "client") throw std::runtime_error("control line '" + line + "': sender= is client or server");
  UniqueFd udp = udp_receiver(local_of(ctl.fd()));
  ctl.send_line("ready port=" + std::to_string(local_port(udp.get())));
  SeqTracker t(r.id);
  Sources sources;
  const Sent s = receive_datagrams(udp.get(), ctl, t, sources, r);
  const SeqTracker::Loss l = t.account(s.count);
  ctl.send_line("counts received=" + std::to_string(l.received) + ",lost=" + std::to_string(l.lost) +
                ",duplicates=" + std::to_string(t.duplicates()) + ",reordered=" + std::to_string(t.reordered()) +
                ",stray=" + std::to_string(t.stray() + l.beyond) + ",sources=" + std::to_string(sources.count()));
}

Result run_client(const Options& o) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  const std::string service = std::to_string(o.port);
  if (::getaddrinfo(o.host.c_str(), service.c_str(), &hints, &res) != 0 || !res)
    throw UserError("cannot resolve " + o.host);
  UniqueFd fd(::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw_errno("socket");
  const int rc = ::connect(fd.get(), res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  if (rc != 0) throw_errno("connect to " + o.host + " port " + service);
  Control ctl(std::move(fd));

  Run r{new_run_id(), o.payload, o.seconds, o.rate, o.batch, o.flows};
  Result out;
  out.payload = o.payload;
  out.rate = o.rate;
  out.flows = o.flows;
  const std::string run = "run id=" + std::to_string(r.id) + ",payload=" + std::to_string(r.payload) +
                          ",seconds=" + seconds_text(r.seconds) + ",rate=" + std::to_string(r.rate) +
                          ",batch=" + std::to_string(r.batch) + ",flows=" + std::to_string(r.flows);
  std::string line;
  if (o.reverse) {
    out.sender = "server";
    UniqueFd udp = udp_receiver(local_of(ctl.fd()));
    ctl.send_line(run + ",sender=server,port=" + std::to_string(local_port(udp.get())));
    ctl.expect("ready", line, kControlSeconds);
    SeqTracker t(r.id);
    Sources sources;
    const Sent s = receive_datagrams(udp.get(), ctl, t, sources, r);
    out.loss = t.account(s.count);
    out.sources = sources.count();
    out.duplicates = t.duplicates();
    out.reordered = t.reordered();
    out.stray = t.stray();
    out.seconds = s.seconds;
    return out;
  }
  out.sender = "client";
  ctl.send_line(run + ",sender=client,port=0");
  const auto ready = ctl.expect("ready", line, kControlSeconds);
  const std::vector<UniqueFd> udp =
      udp_senders(peer_of(ctl.fd()), static_cast<int>(uint_of(ready, "port", line, 1, 65535)), r.flows);
  const Sent s = send_datagrams(udp, r);
  ctl.send_line("sent count=" + std::to_string(s.count) + ",seconds=" + seconds_text(s.seconds));
  const auto counts = ctl.expect("counts", line, o.seconds + kControlSeconds);
  out.loss.sent = s.count;
  out.loss.received = uint_of(counts, "received", line, 0, s.count);
  out.loss.lost = uint_of(counts, "lost", line, 0, s.count);
  if (out.loss.received + out.loss.lost != s.count)
    throw std::runtime_error("the server's counts '" + line + "' do not add up to " + std::to_string(s.count));
  out.duplicates = uint_of(counts, "duplicates", line, 0, UINT64_MAX);
  out.reordered = uint_of(counts, "reordered", line, 0, UINT64_MAX);
  out.stray = uint_of(counts, "stray", line, 0, UINT64_MAX);
  out.sources = uint_of(counts, "sources", line, 0, Sources::kMaxSources);
  out.seconds = s.seconds;
  return out;
}

}  // namespace kvmmio::pps
