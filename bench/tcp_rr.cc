// tcp_rr: TCP request/response latency, the figure iperf3 cannot give
// (netperf's TCP_RR is not packaged for Debian arm64).
//
//   tcp_rr server [--port P]
//   tcp_rr client HOST [--port P] [--seconds S] [--size BYTES] [--json]
//
// The client sends SIZE bytes, waits for SIZE bytes back, and repeats for S
// seconds on one connection with TCP_NODELAY; it reports transactions per
// second and round-trip latency percentiles. The server echoes, one client
// at a time, until killed.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kvmmio/base/unique_fd.h"

using kvmmio::UniqueFd;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr,
               "tcp_rr: %s\nusage: tcp_rr server [--port P]\n"
               "       tcp_rr client HOST [--port P] [--seconds S] [--size BYTES] [--json]\n",
               msg.c_str());
  std::exit(2);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "tcp_rr: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

bool full_io(int fd, char* buf, size_t len, bool sending) {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = sending ? ::send(fd, buf + done, len - done, MSG_NOSIGNAL)
                              : ::recv(fd, buf + done, len - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int serve(int port) {
  UniqueFd listener(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener) fail("socket");
  int one = 1, zero = 0;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  ::setsockopt(listener.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(static_cast<uint16_t>(port));
  addr.sin6_addr = in6addr_any;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fail("bind");
  if (::listen(listener.get(), 4) != 0) fail("listen");
  std::vector<char> buf(1 << 16);
  for (;;) {
    UniqueFd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) continue;
    set_nodelay(conn.get());
    // Echo whatever arrives; the client keeps requests and replies in step.
    for (;;) {
      const ssize_t n = ::recv(conn.get(), buf.data(), buf.size(), 0);
      if (n <= 0) break;
      if (!full_io(conn.get(), buf.data(), static_cast<size_t>(n), true)) break;
    }
  }
}

int client(const std::string& host, int port, double seconds, size_t size, bool json) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || !res)
    usage_error("cannot resolve " + host);
  UniqueFd fd(::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) fail("socket");
  if (::connect(fd.get(), res->ai_addr, res->ai_addrlen) != 0) fail("connect to " + host);
  ::freeaddrinfo(res);
  set_nodelay(fd.get());

  std::vector<char> buf(size, 'r');
  std::vector<double> rtt_us;
  rtt_us.reserve(1 << 20);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  for (auto now = start; now < end;) {
    if (!full_io(fd.get(), buf.data(), size, true) || !full_io(fd.get(), buf.data(), size, false))
      fail("connection lost");
    const auto after = Clock::now();
    rtt_us.push_back(std::chrono::duration<double, std::micro>(after - now).count());
    now = after;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(rtt_us.begin(), rtt_us.end());
  auto pct = [&](double p) { return rtt_us[std::min(rtt_us.size() - 1, size_t(p * rtt_us.size()))]; };
  const double tps = rtt_us.size() / elapsed;
  if (json)
    std::printf("{\"transactions\":%zu,\"seconds\":%.3f,\"tps\":%.1f,\"size\":%zu,"
                "\"rtt_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f}}\n",
                rtt_us.size(), elapsed, tps, size, pct(0.5), pct(0.9), pct(0.99));
  else
    std::printf("%zu transactions in %.2f s: %.1f per s; round trip p50 %.1f us, p90 %.1f us, "
                "p99 %.1f us (%zu-byte request and response)\n",
                rtt_us.size(), elapsed, tps, pct(0.5), pct(0.9), pct(0.99), size);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage_error("missing mode");
  const std::string mode = argv[1];
  int port = 5301;
  double seconds = 5;
  size_t size = 1;
  bool json = false;
  std::string host;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--port") port = std::stoi(value());
      else if (a == "--seconds") seconds = std::stod(value());
      else if (a == "--size") size = std::stoul(value());
      else if (a == "--json") json = true;
      else if (a[0] != '-' && mode == "client" && host.empty()) host = a;
      else usage_error("unknown argument " + a);
    } catch (const std::logic_error&) {
      usage_error("bad value for " + a);
    }
  }
  if (port <= 0 || port > 65535) usage_error("--port must be 1-65535");
  if (mode == "server") return serve(port);
  if (mode != "client") usage_error("mode must be server or client");
  if (host.empty()) usage_error("client needs a HOST");
  if (seconds <= 0 || size == 0 || size > (1 << 20)) usage_error("--seconds > 0 and --size 1..1048576");
  return client(host, port, seconds, size, json);
}
