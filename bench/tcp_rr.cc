// SPDX-License-Identifier: BSD-2-Clause
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
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvmmio/base/error.h"
#include "vmm/process/parse.h"
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
  auto rounded = [](double v, double scale) { return std::round(v * scale) / scale; };
  if (json)
    std::printf("%s\n", nlohmann::ordered_json{
                            {"transactions", rtt_us.size()},
                            {"seconds", rounded(elapsed, 1000)},
                            {"tps", rounded(tps, 10)},
                            {"size", size},
                            {"rtt_us",
                             {{"p50", rounded(pct(0.5), 10)},
                              {"p90", rounded(pct(0.9), 10)},
                              {"p99", rounded(pct(0.99), 10)}}}}
                             .dump()
                             .c_str());
  else
    std::printf("%zu transactions in %.2f s: %.1f per s; round trip p50 %.1f us, p90 %.1f us, "
                "p99 %.1f us (%zu-byte request and response)\n",
                rtt_us.size(), elapsed, tps, pct(0.5), pct(0.9), pct(0.99), size);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 5301;
  double seconds = 5;
  size_t size = 1;
  bool json = false;
  std::vector<std::string> positional;
  try {
    positional = kvmmio::parse_cli(
        {{"--port", "a TCP port, e.g. --port 5301",
          [&port](const std::string& v) {
            port = static_cast<int>(kvmmio::parse_uint(v, "--port " + v, 1, 65535));
          }},
         {"--seconds", "a duration, e.g. --seconds 5",
          [&seconds](const std::string& v) {
            seconds = kvmmio::parse_positive_decimal(v, "--seconds " + v, 3600);
          }},
         {"--size", "a request size, e.g. --size 1 or --size 64K",
          [&size](const std::string& v) {
            size = kvmmio::parse_size(v, "--size " + v, 0);
            if (size == 0 || size > (1 << 20))
              throw kvmmio::UserError("--size " + v + ": give 1 byte to 1M");
          }},
         {"--json", "", [&json](const std::string&) { json = true; }}},
        std::vector<std::string>(argv + 1, argv + argc), 2);
  } catch (const kvmmio::UserError& e) {
    usage_error(e.what());
  }
  if (positional.empty()) usage_error("missing mode");
  const std::string& mode = positional[0];
  if (mode == "server") {
    if (positional.size() > 1) usage_error("unexpected argument '" + positional[1] + "'");
    return serve(port);
  }
  if (mode != "client") usage_error("mode must be server or client");
  if (positional.size() < 2) usage_error("client needs a HOST");
  return client(positional[1], port, seconds, size, json);
}
