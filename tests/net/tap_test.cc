// SPDX-License-Identifier: BSD-2-Clause
// Tap on this machine's real /dev/net/tun: creation, attachment errors,
// vnet header and offload settings, link state, and frames crossing it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <linux/if_tun.h>
#include <net/if.h>
#include <grp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kvmmio/base/error.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "link_control.h"
#include "packet_socket.h"
#include "../virtio/wait_limit.h"

namespace kvmmio::net {
namespace {

TEST(Tap, CreatesAnInterfaceWithTheVnetHeaderSize) {
  Tap tap("kvmt0");
  EXPECT_NE(::if_nametoindex("kvmt0"), 0u);
  EXPECT_EQ(tap.queues(), 1u);
  tap.set_vnet_hdr_size(12);
  int size = 0;
  ASSERT_EQ(::ioctl(tap.fd(0), TUNGETVNETHDRSZ, &size), 0);
  EXPECT_EQ(size, 12);
  tap.set_offload(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6);
  tap.set_offload(0);
  EXPECT_FALSE(tap.link_up());
  tap.set_link(true);
  EXPECT_TRUE(tap.link_up());
  tap.set_link(false);
  EXPECT_FALSE(tap.link_up());
}

TEST(Tap, InterfaceGoesAwayWithItsFds) {
  { Tap tap("kvmt1"); }
  EXPECT_EQ(::if_nametoindex("kvmt1"), 0u);
}

TEST(Tap, MultiQueueOpensOneFdPerQueue) {
  Tap tap("kvmt2", 2);
  ASSERT_EQ(tap.queues(), 2u);
  EXPECT_NE(tap.fd(0), tap.fd(1));
}

TEST(Tap, BadNamesAndBusyInterfacesGiveClearErrors) {
  EXPECT_THROW(Tap("a-name-longer-than-ifnamsiz"), UserError);
  EXPECT_THROW(Tap(""), UserError);
  Tap first("kvmt3");
  try {
    Tap second("kvmt3");  // single-queue, already attached
    FAIL() << "attached a busy tap twice";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ip link del kvmt3"), std::string::npos) << e.what();
  }
}

// Running unprivileged from the start (docs/security.md): the
// administrator made the tap for user 65534 and brought it up; that user
// attaches to it, sets what the guest negotiated, and finds it up, with no
// capability. Changing the link is what needs one: a clear error.
// The administrator's other part, /dev/net/tun usable by the user (udev
// makes it 0666 on most systems; devtmpfs leaves it 0600): done in a mount
// namespace of this child only, a bind mount of a 0666 node over it.
void give_everyone_dev_net_tun() {
  struct stat st {};
  if (::stat("/dev/net/tun", &st) != 0) _exit(70);
  char dir[] = "/tmp/kvmmio-tun-XXXXXX";
  if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      !::mkdtemp(dir))
    _exit(71);
  const std::string node = std::string(dir) + "/tun";
  if (::mknod(node.c_str(), S_IFCHR | 0666, st.st_rdev) != 0 || ::chmod(node.c_str(), 0666) != 0 ||
      ::mount(node.c_str(), "/dev/net/tun", nullptr, MS_BIND, nullptr) != 0)
    _exit(72);
  // The mount holds the node; /tmp is shared with the host: leave nothing.
  if (::unlink(node.c_str()) != 0 || ::rmdir(dir) != 0) _exit(73);
}

[[noreturn]] void use_tap_as_nobody(const char* name) {
  give_everyone_dev_net_tun();
  if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
      ::setresuid(65534, 65534, 65534) != 0)
    _exit(60);
  try {
    Tap tap(name);
    tap.set_vnet_hdr_size(10);
    tap.set_offload(TUN_F_CSUM);
    if (!tap.link_up()) _exit(61);
    tap.set_link(true);  // already up: nothing to do, no privilege needed
    try {
      tap.set_link(false);
      _exit(62);
    } catch (const UserError& e) {
      if (std::string(e.what()).find("ip link set ") == std::string::npos) _exit(63);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    _exit(64);
  }
  _exit(0);
}

TEST(TapDeathTest, AnUnprivilegedUserAttachesToATapMadeForIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::LinkCleanup cleanup("kvmt9");
  test::create_persistent_tap("kvmt9", 65534);
  Tap(std::string("kvmt9")).set_link(true);  // the administrator, as root
  EXPECT_EXIT(use_tap_as_nobody("kvmt9"), testing::ExitedWithCode(0), "");
}

TEST(Tap, FramesWrittenToTheFdArriveOnTheInterfaceIntact) {
  Tap tap("kvmt4");
  tap.set_vnet_hdr_size(sizeof(spec::NetHdrV1));
  tap.set_link(true);
  test::PacketSocket sock(tap.ifindex());
  for (uint8_t seed = 0; seed < 5; ++seed) {
    const auto frame = test::test_frame(seed, 100 + seed);
    std::vector<uint8_t> with_hdr(sizeof(spec::NetHdrV1) + frame.size(), 0);  // no offloads
    std::copy(frame.begin(), frame.end(), with_hdr.begin() + sizeof(spec::NetHdrV1));
    ASSERT_EQ(::write(tap.fd(0), with_hdr.data(), with_hdr.size()),
              static_cast<ssize_t>(with_hdr.size()));
    auto got = sock.receive(test::kWaitLimitMs);
    ASSERT_TRUE(got) << "frame " << int(seed) << " did not arrive";
    EXPECT_EQ(*got, frame);
  }
}

TEST(Tap, FramesSentOnTheInterfaceAreReadFromTheFdWithAVnetHeader) {
  Tap tap("kvmt5");
  tap.set_vnet_hdr_size(sizeof(spec::NetHdrV1));
  tap.set_link(true);
  test::PacketSocket sock(tap.ifindex());
  const auto frame = test::test_frame(42, 200);
  sock.send(frame);
  std::vector<uint8_t> buf(4096);
  for (int tries = 0; tries < 50; ++tries) {  // skip the kernel's own traffic
    pollfd p{tap.fd(0), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, test::kWaitLimitMs), 1) << "nothing to read from the tap";
    const ssize_t n = ::read(tap.fd(0), buf.data(), buf.size());
    ASSERT_GT(n, static_cast<ssize_t>(sizeof(spec::NetHdrV1)));
    std::vector<uint8_t> got(buf.begin() + sizeof(spec::NetHdrV1), buf.begin() + n);
    if (got.size() >= 14 && got[12] == 0x88 && got[13] == 0xb5) {
      EXPECT_EQ(got, frame);
      return;
    }
  }
  FAIL() << "the test frame never came out of the tap";
}

}  // namespace
}  // namespace kvmmio::net
