// SPDX-License-Identifier: BSD-2-Clause
// Tap on this machine's real /dev/net/tun: creation, attachment errors,
// vnet header and offload settings, link state, and frames crossing it.
#include <gtest/gtest.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvmmio/base/error.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "packet_socket.h"

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
    auto got = sock.receive(2000);
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
    ASSERT_EQ(::poll(&p, 1, 2000), 1) << "nothing to read from the tap";
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
