// SPDX-License-Identifier: BSD-2-Clause
// vsock_probe: moves a checked byte pattern over one AF_VSOCK stream
// connection, both ways, for the arm64 platform's vsock case
// (tests/arm64/scenarios/vmm-boot.sh, L1 the host; the L2 hook the guest).
// socat is not in the initramfs images; this is all the case needs.
//
//   vsock_probe listen PORT BYTES [TIMEOUT_S]
//     accepts one connection on PORT (any CID), receives BYTES and checks
//     them against the pattern, then sends BYTES of it back
//   vsock_probe cid
//     prints this machine's own CID (IOCTL_VM_SOCKETS_GET_LOCAL_CID on
//     /dev/vsock: a guest's is what its driver read from the device)
//   vsock_probe connect CID PORT BYTES [TIMEOUT_S]
//     connects to CID:PORT (retrying until TIMEOUT_S while nobody listens
//     yet), sends BYTES of the pattern, then receives BYTES and checks them
//
// One line on stdout, "vsock_probe: ok sent N received N peer CID C" or
// "vsock_probe: FAIL what", exit status 0 or 1 (2: usage). TIMEOUT_S
// (default 60) bounds the whole run: no wait is unbounded.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/poll_deadline.h"

namespace {

PollDeadline g_deadline;  // every wait of the run

[[noreturn]] void fail(const std::string& what) {
  std::printf("vsock_probe: FAIL %s\n", what.c_str());
  std::exit(1);
}
[[noreturn]] void fail_errno(const std::string& what) { fail(what + ": " + std::strerror(errno)); }

// The pattern: byte i of the stream. Not periodic at any power of two
// below 2^16, so a lost, repeated or reordered packet shows.
uint8_t pattern(uint64_t i) { return static_cast<uint8_t>(i ^ (i >> 8) ^ (i >> 16) ^ (i * 7 / 251)); }

void wait_for(int fd, short events, const char* what) {
  if (g_deadline.wait(fd, events) != 0) errno == ETIMEDOUT ? fail(std::string("timed out ") + what) : fail_errno("poll");
}

void send_pattern(int fd, uint64_t bytes) {
  std::vector<uint8_t> buf(64 * 1024);
  for (uint64_t sent = 0; sent < bytes;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), bytes - sent));
    for (size_t i = 0; i < n; ++i) buf[i] = pattern(sent + i);
    size_t off = 0;
    while (off < n) {
      wait_for(fd, POLLOUT, "sending");
      const ssize_t w = ::send(fd, buf.data() + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (w <= 0) fail_errno("send after " + std::to_string(sent + off) + " bytes");
      off += static_cast<size_t>(w);
    }
    sent += n;
  }
}

void receive_pattern(int fd, uint64_t bytes) {
  std::vector<uint8_t> buf(64 * 1024);
  for (uint64_t got = 0; got < bytes;) {
    wait_for(fd, POLLIN, "receiving");
    const ssize_t r = ::recv(fd, buf.data(), static_cast<size_t>(std::min<uint64_t>(buf.size(), bytes - got)),
                             MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r < 0) fail_errno("recv after " + std::to_string(got) + " bytes");
    if (r == 0) fail("the peer closed after " + std::to_string(got) + " of " + std::to_string(bytes) + " bytes");
    for (ssize_t i = 0; i < r; ++i)
      if (buf[i] != pattern(got + i)) fail("byte " + std::to_string(got + i) + " differs from the pattern");
    got += static_cast<uint64_t>(r);
  }
}

uint64_t number(const char* text, const char* what) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || end == text || *end) {
    std::fprintf(stderr, "vsock_probe: %s '%s' is not a number\n", what, text);
    std::exit(2);
  }
  return v;
}

int usage() {
  std::fprintf(stderr,
               "usage: vsock_probe cid\n"
               "       vsock_probe listen PORT BYTES [TIMEOUT_S]\n"
               "       vsock_probe connect CID PORT BYTES [TIMEOUT_S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "cid") == 0) {
    const int fd = ::open("/dev/vsock", O_RDONLY | O_CLOEXEC);
    unsigned int cid = 0;
    if (fd < 0 || ::ioctl(fd, IOCTL_VM_SOCKETS_GET_LOCAL_CID, &cid) != 0) fail_errno("/dev/vsock");
    std::printf("%u\n", cid);
    return 0;
  }
  const bool listen = argc >= 4 && std::strcmp(argv[1], "listen") == 0;
  const bool connect = argc >= 5 && std::strcmp(argv[1], "connect") == 0;
  if ((!listen && !connect) || argc > (listen ? 5 : 6)) return usage();
  const int base = listen ? 2 : 3;
  const uint32_t cid = connect ? static_cast<uint32_t>(number(argv[2], "CID")) : VMADDR_CID_ANY;
  const uint32_t port = static_cast<uint32_t>(number(argv[base], "PORT"));
  const uint64_t bytes = number(argv[base + 1], "BYTES");
  const uint64_t timeout_s = argc > base + 2 ? number(argv[base + 2], "TIMEOUT_S") : 60;
  g_deadline = PollDeadline(std::chrono::seconds(timeout_s));

  sockaddr_vm addr{};
  addr.svm_family = AF_VSOCK;
  addr.svm_cid = cid;
  addr.svm_port = port;
  int fd = -1;
  uint32_t peer = cid;
  if (listen) {
    const int ls = ::socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0) fail_errno("socket(AF_VSOCK) (is the vsock module loaded?)");
    if (::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail_errno("bind");
    if (::listen(ls, 1) != 0) fail_errno("listen");
    wait_for(ls, POLLIN, "waiting for a connection");
    sockaddr_vm from{};
    socklen_t len = sizeof from;
    fd = ::accept4(ls, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);
    if (fd < 0) fail_errno("accept");
    peer = from.svm_cid;
    ::close(ls);
    receive_pattern(fd, bytes);
    send_pattern(fd, bytes);
    // Close only once the peer has all of it and closed its side: a
    // close here could otherwise overtake the last packets.
    wait_for(fd, POLLIN, "waiting for the peer to close");
    char c;
    if (::recv(fd, &c, 1, 0) != 0) fail("the peer sent more than " + std::to_string(bytes) + " bytes");
  } else {
    // Nobody may listen yet (the other side is still starting): retry.
    for (;;) {
      fd = ::socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) fail_errno("socket(AF_VSOCK) (is the vsock module loaded?)");
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
      const int err = errno;
      ::close(fd);
      if (g_deadline.ms_left() == 0) {
        errno = err;
        fail_errno("connect to " + std::to_string(cid) + ":" + std::to_string(port));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    send_pattern(fd, bytes);
    receive_pattern(fd, bytes);
  }
  // Both sides got everything: a graceful close.
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  std::printf("vsock_probe: ok sent %llu received %llu peer CID %u\n", static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(bytes), peer);
  return 0;
}
