// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: a hostile vhost-user backend against the front end
// (kvmmio/vhost/vhost_user.h). The input is everything the backend sends:
// it is written to the backend's end of a socketpair, whose writing side
// is then shut, so the front end reads those bytes and then the end of the
// connection, and never waits out its timeout. The front end runs the
// whole set-up a device makes (start with MQ and CONFIG asked for, the
// features, the queue count, the config space, the memory table, a vring,
// its base), each call succeeding or throwing BackendError. The checks,
// besides ASan and UBSan:
//  - nothing but BackendError (or the documented std::logic_error for a
//    protocol feature not negotiated) escapes;
//  - after a BackendError the connection is broken, and the next call
//    throws BackendError without sending;
//  - a config space read returns exactly the bytes asked for, a vring
//    base fits 16 bits.
// Run by scripts/fuzz.sh with -rss_limit_mb and -timeout, as the others.
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "kvmmio/base/unique_fd.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/vhost/vhost_user.h"
#include "kvmmio/vhost/vhost_user_protocol.h"

namespace {

using kvmmio::vhost::BackendError;
using kvmmio::vhost::VhostUserFrontend;
namespace user = kvmmio::vhost::user;

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz invariant: %s\n", what);
  std::abort();
}

// One step: true when it went through; false when the backend's bytes
// failed it (the connection must then be broken).
template <typename Step>
bool step(VhostUserFrontend& front, Step&& s) {
  try {
    s();
    return true;
  } catch (const BackendError&) {
    if (front.usable()) violated("a BackendError left the connection usable");
    return false;
  } catch (const std::logic_error&) {
    return true;  // a protocol feature the backend did not agree to
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static kvmmio::GuestMemory* memory = [] {
    auto* m = new kvmmio::GuestMemory;
    m->add_ram(0x4000'0000, 1 << 20);
    return m;
  }();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return 0;
  kvmmio::UniqueFd backend(fds[1]);
  // The socket buffer takes the input (libFuzzer's -max_len keeps it small).
  if (size > 0 && ::send(backend.get(), data, size, MSG_NOSIGNAL) != static_cast<ssize_t>(size)) {
    ::close(fds[0]);
    return 0;
  }
  ::shutdown(backend.get(), SHUT_WR);
  VhostUserFrontend front(kvmmio::UniqueFd(fds[0]), "fuzz", std::chrono::milliseconds(1000));
  kvmmio::UniqueFd kick(::eventfd(0, EFD_CLOEXEC)), call(::eventfd(0, EFD_CLOEXEC));

  bool ok = step(front, [&] {
    front.start((1ull << user::protocol_feature::kMq) | (1ull << user::protocol_feature::kConfig));
  });
  if (ok) ok = step(front, [&] { front.set_features(front.features() & 0xffffffffull); });
  if (ok) ok = step(front, [&] { front.queue_num(); });
  if (ok) {
    std::array<uint8_t, 24> config{};
    ok = step(front, [&] { front.get_config(8, config); });
  }
  if (ok) ok = step(front, [&] { front.set_mem_table(*memory); });
  if (ok) {
    kvmmio::vhost::Vring v;
    v.index = 0;
    v.size = 64;
    v.desc_gpa = 0x4000'0000;
    v.avail_gpa = 0x4000'1000;
    v.used_gpa = 0x4000'2000;
    v.kick_fd = kick.get();
    v.call_fd = call.get();
    ok = step(front, [&] { front.setup_vring(*memory, v); });
  }
  if (ok) ok = step(front, [&] { (void)front.vring_base(0); });
  if (!ok) {
    // Broken: refused at once, nothing sent.
    try {
      front.set_vring_enable(0, false);
      violated("a call on a broken connection went through");
    } catch (const BackendError&) {
    }
  }
  return 0;
}
