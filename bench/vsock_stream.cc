// SPDX-License-Identifier: BSD-2-Clause
// vsock_stream: AF_VSOCK stream throughput between a host and a guest (or
// a host and itself, CID 1, through vsock_loopback), the figure iperf3
// cannot give (Debian's iperf3 has no AF_VSOCK).
//
//   vsock_stream server [--port P] [--timeout S] [--json]
//   vsock_stream client CID [--port P] [--seconds S] [--timeout S] [--json]
//
// The server accepts one connection, receives until the client closes its
// side, closes, prints what it received and exits: the receiver's bytes
// and seconds (first byte to end of stream) are the measurement. The
// client connects (retrying while nobody listens yet), sends for S seconds
// (default 5) in 64 KiB writes, closes its sending side and waits for the
// server's close. TIMEOUT (default 60) bounds every wait of either end: no
// run hangs. Exit status 0, 1 on a failed run, 2 on bad usage.
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/poll_deadline.h"
#include "kvmmio/base/error.h"
#include "vmm/process/parse.h"
#include "kvmmio/base/unique_fd.h"

using kvmmio::UniqueFd;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  bool server = false;
  uint32_t cid = 0;
  uint32_t port = 5600;
  unsigned seconds = 5;
  unsigned timeout = 60;
  bool json = false;
};

const char kUsage[] =
    "usage: vsock_stream server [--port P] [--timeout S] [--json]\n"
    "       vsock_stream client CID [--port P] [--seconds S] [--timeout S] [--json]\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "vsock_stream: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "vsock_stream: %s\n", what.c_str());
  std::exit(1);
}
[[noreturn]] void fail_errno(const std::string& what) { fail(what + ": " + std::strerror(errno)); }

uint64_t number(const std::string& text, const char* what, uint64_t lo, uint64_t hi) {
  try {
    return kvmmio::parse_uint(text, std::string(what) + " " + text, lo, hi);
  } catch (const kvmmio::UserError& e) {
    usage_error(e.what());
  }
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) usage_error("want server or client");
  const std::string mode = argv[1];
  int i = 2;
  if (mode == "server") {
    o.server = true;
  } else if (mode == "client") {
    if (argc < 3) usage_error("client wants the server's CID");
    o.cid = static_cast<uint32_t>(number(argv[2], "CID", 1, 0xfffffffeu));
    i = 3;
  } else {
    usage_error("'" + mode + "' is not server or client");
  }
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " wants a value");
      return argv[++i];
    };
    if (a == "--port") o.port = static_cast<uint32_t>(number(value(), "--port", 1, 0xfffffffeu));
    else if (a == "--seconds" && !o.server) o.seconds = static_cast<unsigned>(number(value(), "--seconds", 1, 600));
    else if (a == "--timeout") o.timeout = static_cast<unsigned>(number(value(), "--timeout", 1, 3600));
    else if (a == "--json") o.json = true;
    else usage_error("unknown option '" + a + "'");
  }
  return o;
}

// Every wait ends by the deadline (PollDeadline), a failed one the run.
class Deadline {
 public:
  explicit Deadline(unsigned seconds) : deadline_(std::chrono::seconds(seconds)) {}
  int ms_left() const { return deadline_.ms_left(); }
  void wait(int fd, short events, const char* what) const {
    if (deadline_.wait(fd, events) != 0)
      errno == ETIMEDOUT ? fail(std::string("timed out ") + what) : fail_errno("poll");
  }

 private:
  PollDeadline deadline_;
};

UniqueFd vsock_socket() {
  UniqueFd fd(::socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) fail_errno("socket(AF_VSOCK) (is a vsock transport loaded: vhost_vsock, vsock_loopback, or a guest's driver?)");
  return fd;
}

sockaddr_vm address(uint32_t cid, uint32_t port) {
  sockaddr_vm a{};
  a.svm_family = AF_VSOCK;
  a.svm_cid = cid;
  a.svm_port = port;
  return a;
}

void print(const Options& o, const char* side, uint64_t bytes, double seconds, uint32_t peer) {
  const double bps = seconds > 0 ? static_cast<double>(bytes) * 8 / seconds : 0;
  if (o.json)
    std::printf("{\"side\":\"%s\",\"bytes\":%llu,\"seconds\":%.6f,\"bps\":%.0f,\"peer_cid\":%u}\n", side,
                static_cast<unsigned long long>(bytes), seconds, bps, peer);
  else
    std::printf("vsock_stream %s: %llu bytes in %.3f s, %.3f Gbit/s, peer CID %u\n", side,
                static_cast<unsigned long long>(bytes), seconds, bps / 1e9, peer);
}

int serve(const Options& o) {
  const Deadline deadline(o.timeout);
  const UniqueFd listener = vsock_socket();
  const sockaddr_vm any = address(VMADDR_CID_ANY, o.port);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0)
    fail_errno("bind to port " + std::to_string(o.port));
  if (::listen(listener.get(), 1) != 0) fail_errno("listen");
  deadline.wait(listener.get(), POLLIN, "waiting for a connection");
  sockaddr_vm from{};
  socklen_t len = sizeof from;
  const UniqueFd conn(::accept4(listener.get(), reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!conn) fail_errno("accept");
  std::vector<char> buf(256 * 1024);
  uint64_t bytes = 0;
  Clock::time_point first{};
  for (;;) {
    deadline.wait(conn.get(), POLLIN, "receiving");
    const ssize_t r = ::recv(conn.get(), buf.data(), buf.size(), 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r < 0) fail_errno("recv after " + std::to_string(bytes) + " bytes");
    if (r == 0) break;
    if (bytes == 0) first = Clock::now();
    bytes += static_cast<uint64_t>(r);
  }
  const double seconds = bytes ? std::chrono::duration<double>(Clock::now() - first).count() : 0;
  print(o, "server", bytes, seconds, from.svm_cid);
  return bytes ? 0 : 1;
}

int send_for(const Options& o) {
  const Deadline deadline(o.timeout + o.seconds);
  const sockaddr_vm to = address(o.cid, o.port);
  UniqueFd fd;
  // Nobody may listen yet (the other side is still starting): retry.
  for (;;) {
    fd = vsock_socket();
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0) break;
    if (errno == EINPROGRESS) {
      deadline.wait(fd.get(), POLLOUT, "connecting");
      int err = 0;
      socklen_t len = sizeof err;
      if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) break;
      errno = err;
    }
    const int err = errno;
    if (deadline.ms_left() == 0) {
      errno = err;
      fail_errno("connect to " + std::to_string(o.cid) + ":" + std::to_string(o.port));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const std::vector<char> buf(64 * 1024, 'k');
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop = start + std::chrono::seconds(o.seconds);
  uint64_t bytes = 0;
  while (Clock::now() < stop) {
    deadline.wait(fd.get(), POLLOUT, "sending");
    const ssize_t w = ::send(fd.get(), buf.data(), buf.size(), MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (w <= 0) fail_errno("send after " + std::to_string(bytes) + " bytes");
    bytes += static_cast<uint64_t>(w);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // End of stream, then the server's close: it has all of it.
  ::shutdown(fd.get(), SHUT_WR);
  char c;
  for (;;) {
    deadline.wait(fd.get(), POLLIN, "waiting for the server to close");
    const ssize_t r = ::recv(fd.get(), &c, 1, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r != 0) fail("the server sent data or failed before closing");
    break;
  }
  print(o, "client", bytes, seconds, o.cid);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  return o.server ? serve(o) : send_for(o);
}
