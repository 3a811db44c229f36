// SPDX-License-Identifier: BSD-2-Clause
// VhostNet against the kernel's real vhost-net and a real tap, with rings
// built in guest memory as a virtio-net driver builds them (no VM needed:
// vhost moves data between this process's memory and the tap). Only where
// /dev/vhost-net exists: the nested arm64 L1 in CI (KVMMIO_REQUIRE_VHOST=1
// there turns a missing device into a failure).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kvmmio/base/event_fd.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/net/vhost_net.h"
#include "../virtio/driver_ring.h"
#include "open_fds.h"
#include "packet_socket.h"
#include "../virtio/wait_limit.h"

namespace kvmmio::net {
namespace {

constexpr uint64_t kRam = 0x40000000;
constexpr uint16_t kQueueSize = 16;
constexpr uint64_t kBufferBase = kRam + 0x100000;
constexpr uint32_t kBufferSize = 4096;
constexpr size_t kHdr = sizeof(spec::NetHdrV1);  // 12: VERSION_1

class VhostNetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!VhostNet::available()) {
      const char* req = std::getenv("KVMMIO_REQUIRE_VHOST");
      if (req && std::string(req) == "1") FAIL() << "/dev/vhost-net missing but KVMMIO_REQUIRE_VHOST=1";
      GTEST_SKIP() << "no /dev/vhost-net on this machine (modprobe vhost_net)";
    }
  }

  static GuestMemory make_memory() {
    GuestMemory m;
    m.add_ram(kRam, 2 << 20);
    return m;
  }

  // The whole set-up order of docs/virtio-net.md ("Backends"), for one queue pair.
  void start(VhostNet& vhost, Tap& tap, uint16_t rx_next = 0, uint16_t tx_next = 0, int tx_err = -1) {
    vhost.set_features(1ull << spec::kFVersion1);
    vhost.set_mem_table(memory);
    vhost.setup_vring(memory, {VhostNet::kRxVring, kQueueSize, rx_next, rx.layout().desc,
                               rx.layout().avail, rx.layout().used, rx_kick.fd(), rx_call.fd(), -1});
    vhost.setup_vring(memory, {VhostNet::kTxVring, kQueueSize, tx_next, tx.layout().desc,
                               tx.layout().avail, tx.layout().used, tx_kick.fd(), tx_call.fd(), tx_err});
    vhost.set_backend(VhostNet::kRxVring, tap.fd(0));
    vhost.set_backend(VhostNet::kTxVring, tap.fd(0));
  }

  // Puts header + frame in TX buffer `slot` and kicks.
  void transmit(uint16_t slot, const std::vector<uint8_t>& frame) {
    const uint64_t buf = kBufferBase + slot * kBufferSize;
    std::vector<uint8_t> bytes(kHdr + frame.size(), 0);
    std::copy(frame.begin(), frame.end(), bytes.begin() + kHdr);
    ASSERT_TRUE(memory.write(buf, bytes.data(), bytes.size()));
    const virtio::test::Buffer b[] = {{buf, static_cast<uint32_t>(bytes.size()), false}};
    ASSERT_EQ(tx.add(b), slot % kQueueSize);
    tx.publish();
    tx_kick.signal();
  }

  GuestMemory memory = make_memory();  // before the rings, which live in it
  // Driver-side rings; heads are handed out from 0 in order, so the n-th
  // buffer added is descriptor n.
  virtio::test::DriverRing rx{memory, {kQueueSize, kRam + 0x0000, kRam + 0x1000, kRam + 0x2000}};
  virtio::test::DriverRing tx{memory, {kQueueSize, kRam + 0x4000, kRam + 0x5000, kRam + 0x6000}};
  EventFd rx_kick, rx_call, tx_kick, tx_call;
};

TEST_F(VhostNetTest, OffersVersion1AndTakesTheSetUp) {
  VhostNet vhost;
  EXPECT_TRUE(vhost.features() & (1ull << spec::kFVersion1));
  EXPECT_THROW(vhost.set_features(1ull << 63), std::invalid_argument);
}

// poll_us reaches the kernel per vring (VHOST_GET_VRING_BUSYLOOP_TIMEOUT
// reads back what the set-up gave), and frames still flow with it.
TEST_F(VhostNetTest, BusyPollingIsSetPerVringAndFramesStillFlow) {
  Tap tap("kvmvh9");
  tap.set_vnet_hdr_size(kHdr);
  tap.set_link(true);
  test::PacketSocket sock(tap.ifindex());
  VhostNet vhost;
  vhost.set_features(1ull << spec::kFVersion1);
  vhost.set_mem_table(memory);
  vhost.setup_vring(memory, {VhostNet::kRxVring, kQueueSize, 0, rx.layout().desc, rx.layout().avail,
                             rx.layout().used, rx_kick.fd(), rx_call.fd(), -1, 50});
  vhost.setup_vring(memory, {VhostNet::kTxVring, kQueueSize, 0, tx.layout().desc, tx.layout().avail,
                             tx.layout().used, tx_kick.fd(), tx_call.fd(), -1, 200});
  vhost.set_backend(VhostNet::kRxVring, tap.fd(0));
  vhost.set_backend(VhostNet::kTxVring, tap.fd(0));
  EXPECT_EQ(vhost.busyloop_timeout(VhostNet::kRxVring), 50u);
  EXPECT_EQ(vhost.busyloop_timeout(VhostNet::kTxVring), 200u);
  const auto frame = test::test_frame(7, 200);
  transmit(0, frame);
  auto got = sock.receive(test::kWaitLimitMs);
  ASSERT_TRUE(got) << "the frame never left the tap";
  EXPECT_EQ(*got, frame);
}

TEST_F(VhostNetTest, TransmittedFramesReachTheTapIntactWithoutTheVmm) {
  Tap tap("kvmvh0");
  tap.set_vnet_hdr_size(kHdr);
  tap.set_link(true);
  test::PacketSocket sock(tap.ifindex());
  VhostNet vhost;
  start(vhost, tap);
  for (uint16_t i = 0; i < 8; ++i) {
    const auto frame = test::test_frame(static_cast<uint8_t>(i), 60 + 97 * i);
    transmit(i, frame);
    auto got = sock.receive(test::kWaitLimitMs);
    ASSERT_TRUE(got) << "frame " << i << " never left the tap";
    EXPECT_EQ(*got, frame) << "frame " << i << " corrupted";
  }
  // vhost returned every buffer and signalled the call eventfd.
  ASSERT_TRUE(tx_call.wait_readable(5000));
  EXPECT_GE(tx_call.take().value_or(0), 1u);
  int used = 0;
  for (int tries = 0; tries < 100 && used < 8; ++tries) {
    while (auto u = tx.take_used()) {
      EXPECT_EQ(u->id, static_cast<uint32_t>(used));
      ++used;
    }
    if (used < 8) tx_call.wait_readable(50);
  }
  EXPECT_EQ(used, 8);
}

TEST_F(VhostNetTest, FramesFromTheTapLandInPostedGuestBuffers) {
  Tap tap("kvmvh1");
  tap.set_vnet_hdr_size(kHdr);
  tap.set_link(true);
  test::PacketSocket sock(tap.ifindex());
  VhostNet vhost;
  start(vhost, tap);
  for (uint16_t i = 0; i < kQueueSize; ++i) {
    const virtio::test::Buffer b[] = {{kBufferBase + (32 + i) * kBufferSize, kBufferSize, true}};
    rx.add(b);
  }
  rx.publish();
  rx_kick.signal();

  const auto frame = test::test_frame(7, 300);
  sock.send(frame);
  // The kernel may also send its own frames (IPv6 solicitations) out of the
  // tap: look through what arrives for the test frame.
  for (int tries = 0; tries < 50; ++tries) {
    ASSERT_TRUE(rx_call.wait_readable(5000)) << "vhost never signalled a received frame";
    rx_call.take();
    while (auto u = rx.take_used()) {
      ASSERT_LT(u->id, kQueueSize);
      ASSERT_LE(u->len, kBufferSize);
      ASSERT_GE(u->len, kHdr);
      std::vector<uint8_t> got(u->len - kHdr);
      ASSERT_TRUE(memory.read(kBufferBase + (32 + u->id) * kBufferSize + kHdr, got.data(), got.size()));
      if (got.size() >= 14 && got[12] == 0x88 && got[13] == 0xb5) {
        EXPECT_EQ(got, frame);
        return;
      }
    }
  }
  FAIL() << "the test frame never reached a guest buffer";
}

TEST_F(VhostNetTest, StopReportsWhereTheKernelStoppedAndRestartResumesThere) {
  Tap tap("kvmvh2");
  tap.set_vnet_hdr_size(kHdr);
  tap.set_link(true);
  test::PacketSocket sock(tap.ifindex());
  uint16_t tx_next = 0;
  for (int cycle = 0; cycle < 3; ++cycle) {
    VhostNet vhost;
    start(vhost, tap, 0, tx_next);
    const auto frame = test::test_frame(static_cast<uint8_t>(100 + cycle));
    transmit(static_cast<uint16_t>(cycle), frame);
    auto got = sock.receive(test::kWaitLimitMs);
    ASSERT_TRUE(got) << "cycle " << cycle;
    EXPECT_EQ(*got, frame);
    vhost.stop_vring(VhostNet::kRxVring);
    tx_next = vhost.stop_vring(VhostNet::kTxVring);
    EXPECT_EQ(tx_next, tx.avail_idx()) << "the kernel consumed every published buffer";
  }
}

TEST_F(VhostNetTest, ResetCyclesLeakNoFds) {
  Tap tap("kvmvh3");
  tap.set_vnet_hdr_size(kHdr);
  const int before = test::open_fds();
  for (int i = 0; i < 20; ++i) {
    VhostNet vhost;
    start(vhost, tap);
    vhost.stop_vring(VhostNet::kRxVring);
    vhost.stop_vring(VhostNet::kTxVring);
  }
  EXPECT_EQ(test::open_fds(), before);
}

// A descriptor the kernel cannot translate (outside the memory table) is a
// vring error: vhost signals the ERR eventfd and uses nothing, the TX
// vring stops at that entry, and the frame never reaches the tap.
TEST_F(VhostNetTest, DescriptorOutsideTheMemoryTableSignalsTheErrorEventfd) {
  Tap tap("kvmvh5");
  tap.set_vnet_hdr_size(kHdr);
  tap.set_link(true);
  EventFd tx_err;
  VhostNet vhost;
  start(vhost, tap, 0, 0, tx_err.fd());
  const virtio::test::Buffer bad[] = {{kRam + (64 << 20), 128, false}};
  tx.add(bad);
  tx.publish();
  tx_kick.signal();
  ASSERT_TRUE(tx_err.wait_readable(5000)) << "vhost did not signal the vring error";
  EXPECT_GE(tx_err.take().value_or(0), 1u);
  EXPECT_EQ(tx.used_idx(), 0u) << "vhost used a descriptor it could not translate";
  // Every kick retries the faulty entry and signals again.
  tx_kick.signal();
  EXPECT_TRUE(tx_err.wait_readable(5000));
  vhost.stop_vring(VhostNet::kRxVring);
  EXPECT_EQ(vhost.stop_vring(VhostNet::kTxVring), 0u) << "vhost went past the faulty entry";
}

TEST_F(VhostNetTest, RingsOutsideGuestRamAreRefused) {
  Tap tap("kvmvh4");
  VhostNet vhost;
  vhost.set_features(1ull << spec::kFVersion1);
  vhost.set_mem_table(memory);
  VhostNet::Vring bad{VhostNet::kTxVring, kQueueSize, 0, kRam + (2 << 20) - 8, tx.layout().avail,
                      tx.layout().used, tx_kick.fd(), tx_call.fd(), -1};
  EXPECT_THROW(vhost.setup_vring(memory, bad), std::invalid_argument);
  bad.desc_gpa = tx.layout().desc;
  bad.used_gpa = 0x1000;  // not RAM at all
  EXPECT_THROW(vhost.setup_vring(memory, bad), std::invalid_argument);
}

}  // namespace
}  // namespace kvmmio::net
