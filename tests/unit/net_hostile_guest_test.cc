// SPDX-License-Identifier: BSD-2-Clause
// virtio-net's userspace backend against a hostile guest, over the
// socketpair stand-in of a tap (tests/virtio/socket_net.h): what the guest
// can make the VMM hold, and that the limits are counted guest errors.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "../virtio/harness.h"
#include "../virtio/socket_net.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/split_queue.h"

namespace kvmmio::net {
namespace {

using virtio::test::eventually;
using virtio::test::LoopGate;
using virtio::test::SocketNet;
namespace desc_flag = virtio::desc_flag;

constexpr size_t kHdr = sizeof(spec::NetHdrV1);
constexpr uint64_t bit(unsigned n) { return 1ull << n; }

size_t heap_in_use() { return mallinfo2().uordblks; }

// A frame as the tap hands it over: a zeroed 12-byte header, then `len`
// bytes of Ethernet frame.
std::vector<uint8_t> tap_frame(size_t len, uint8_t seed = 1) {
  std::vector<uint8_t> f(kHdr + len);
  for (size_t i = 0; i < len; ++i) f[kHdr + i] = static_cast<uint8_t>(seed + i * 13);
  return f;
}

// The pattern (MRG_RXBUF): every RX chain is 255 device-readable
// descriptors and one writable byte, and every avail entry names the same
// head, so each chain the device pops places one byte of a ~64 KiB frame;
// the guest keeps posting while the frame stays incomplete. A backend that
// kept a copy of every chain it filled (4 KiB of segments each) grew by
// ~257 MiB per queue pair before the frame completed. The bound: at most
// the queue size of buffers per frame; then the frame is dropped, its
// buffers returned, and that is a counted guest error.
TEST(NetHostileGuest, RxBuffersHeldForOneFrameAreBoundedByTheQueueSize) {
  SocketNet m({});
  const auto f = m.bring_up(SocketNet::kModern | bit(spec::kFMrgRxbuf), /*rx_size=*/256);
  ASSERT_TRUE(f);
  ASSERT_TRUE(*f & bit(spec::kFMrgRxbuf));
  constexpr uint16_t kRing = 256;
  const uint64_t scratch = SocketNet::kBuffers;
  for (uint16_t i = 0; i < kRing - 1; ++i)
    m.rx->write_desc(i, scratch + i, 1, desc_flag::kNext, static_cast<uint16_t>(i + 1));
  m.rx->write_desc(kRing - 1, scratch + 0x1000, 1, desc_flag::kWrite, 0);

  // The largest frame the tap can hand over: 65566 bytes with the header.
  m.tap_delivers(tap_frame(65536 + 18));
  m.loop.flush();  // read; no buffers yet: receive pauses
  ASSERT_EQ(m.device->counters().rx_stalls.load(), 1u);

  const size_t heap_before = heap_in_use();
  uint16_t avail = 0;
  // 128 entries per notify, all naming head 0, until the device gives the
  // buffers back (or 64 rounds: 8192 one-byte buffers, which a backend
  // without the bound would hold, with 32 MiB of chain copies).
  for (int round = 0; round < 64 && m.rx->used_idx() == 0; ++round) {
    for (int i = 0; i < 128; ++i) m.rx->set_avail_entry(avail++ % kRing, 0);
    m.rx->set_avail_idx(avail);
    m.notify(0);
    m.loop.flush();
  }
  const size_t heap_after = heap_in_use();
  // Host memory for the held buffers: 8 bytes each plus one chain, all
  // reserved or grown before; nothing near the 1 MiB that 256 chain
  // copies alone would take.
  EXPECT_LT(heap_after, heap_before + 64 * 1024)
      << "the backend's heap grew by " << (heap_after - heap_before) << " bytes";

  EXPECT_EQ(m.rx->used_idx(), kRing) << "the frame took exactly the queue size of buffers, then was dropped";
  EXPECT_EQ(m.device->counters().rx_dropped.load(), 1u);
  EXPECT_EQ(m.device->counters().rx_packets.load(), 0u);
  EXPECT_EQ(m.device->guest_errors(), 1u);
  EXPECT_FALSE(m.needs_reset());
  for (uint16_t i = 0; i < kRing; ++i) {
    const auto used = m.rx->take_used();
    ASSERT_TRUE(used);
    EXPECT_EQ(used->id, 0u);
    EXPECT_EQ(used->len, 0u) << "a dropped frame's buffers come back empty";
  }

  // The device still works: a frame that fits is delivered.
  for (uint16_t i = 0; i < 4; ++i) {
    const virtio::test::Buffer b[] = {{SocketNet::kBuffers + 0x10000 + i * 2048u, 2048, true}};
    m.rx->add(b);
  }
  m.rx->publish();
  m.notify(0);
  m.tap_delivers(tap_frame(1000, 7));
  m.loop.flush();
  EXPECT_EQ(m.device->counters().rx_packets.load(), 1u);
}

// A legitimate MRG_RXBUF frame spread over many small buffers still works
// up to the bound: num_buffers is exact.
TEST(NetHostileGuest, AFrameSpreadOverManySmallBuffersCarriesAnExactNumBuffers) {
  SocketNet m({});
  ASSERT_TRUE(m.bring_up(SocketNet::kModern | bit(spec::kFMrgRxbuf), /*rx_size=*/256));
  for (uint16_t i = 0; i < 256; ++i) {
    const virtio::test::Buffer b[] = {{SocketNet::kBuffers + i * 256u, 256, true}};
    m.rx->add(b);
  }
  m.rx->publish();
  m.notify(0);
  // 200 buffers of 256 bytes: the header and 51188 bytes of frame.
  const auto frame = tap_frame(200 * 256 - kHdr, 3);
  m.tap_delivers(frame);
  m.loop.flush();
  ASSERT_EQ(m.device->counters().rx_packets.load(), 1u);
  spec::NetHdrV1 hdr{};
  ASSERT_TRUE(m.memory.read(SocketNet::kBuffers, &hdr, sizeof hdr));
  EXPECT_EQ(hdr.num_buffers, 200u);
  EXPECT_EQ(m.rx->used_idx(), 200u);
  EXPECT_EQ(m.device->guest_errors(), 0u);
}

// Makes `count` TX chains available, each a header and a 60-byte frame.
void post_tx(SocketNet& m, unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    const uint64_t buf = SocketNet::kBuffers + 0x200000 + i * 128u;
    std::vector<uint8_t> bytes(kHdr + 60, static_cast<uint8_t>(i));
    ASSERT_TRUE(m.memory.write(buf, bytes.data(), bytes.size()));
    const virtio::test::Buffer b[] = {{buf, static_cast<uint32_t>(bytes.size()), false}};
    m.tx->add(b);
  }
}

// Another device's callback on the same loop: records what `probe` said
// when it ran.
struct Bystander {
  Bystander(EventLoop& loop, std::function<uint64_t()> probe)
      : watch(loop.watch_eventfd(event.fd(), [this, probe](uint64_t) { seen = probe(); })) {}
  EventFd event;
  std::atomic<uint64_t> seen{UINT64_MAX};
  EventLoop::Registration watch;
};

// A guest that fills its TX ring and notifies: the loop serves one budget
// of it, then every other ready fd (here another device's), then the
// rest. The loop is parked while both become ready, so the order is
// epoll's, not a race.
TEST(NetHostileGuest, TxStopsAtItsBudgetAndLetsTheRestOfTheLoopRun) {
  SocketNet m({.polled = true});
  ASSERT_TRUE(m.bring_up(SocketNet::kModern));
  post_tx(m, 128);
  Bystander other(m.loop, [&] { return m.device->counters().tx_packets.load(); });
  LoopGate gate(m.loop);
  gate.close();
  m.tx->publish();
  m.notify(1);
  other.event.signal();
  gate.open();
  m.loop.flush();
  EXPECT_EQ(other.seen.load(), VirtioNet::kTxChainsPerDispatch)
      << "the other device ran after exactly one TX budget";
  ASSERT_TRUE(eventually([&] { return m.device->counters().tx_packets.load() == 128; }));
  EXPECT_GE(m.device->counters().budget_yields.load(), 1u);
  EXPECT_EQ(m.device->counters().tap_errors.load(), 0u);
  unsigned frames = 0;
  while (m.tap_received()) ++frames;
  EXPECT_EQ(frames, 128u) << "every frame left, in budgets";
}

// A trapped notify runs on the vCPU's thread: it does one budget there and
// leaves the rest to the event loop, so the vCPU goes back to the guest.
TEST(NetHostileGuest, ATrappedNotifyDoesOneBudgetAndLeavesTheRestToTheLoop) {
  SocketNet m({.polled = false});
  ASSERT_TRUE(m.bring_up(SocketNet::kModern));
  post_tx(m, 128);
  m.tx->publish();
  LoopGate gate(m.loop);
  gate.close();
  m.notify(1);  // an MMIO exit: this thread is the vCPU
  EXPECT_EQ(m.device->counters().tx_packets.load(), VirtioNet::kTxChainsPerDispatch);
  EXPECT_EQ(m.driver->read(virtio::reg::kInterruptStatus) & 1u, 1u)
      << "the buffers sent so far are used, with their interrupt";
  gate.open();
  ASSERT_TRUE(eventually([&] { return m.device->counters().tx_packets.load() == 128; }));
}

// The control queue: a guest that fills it with commands gets one budget
// per turn of the loop.
TEST(NetHostileGuest, ControlQueueStopsAtItsBudget) {
  SocketNet m({.polled = true, .pairs = 2});
  const auto f = m.bring_up(SocketNet::kModern | bit(spec::kFCtrlVq) | bit(spec::kFMq), 256, 256,
                            /*ctrl_size=*/256);
  ASSERT_TRUE(f);
  ASSERT_TRUE(m.ctrl);
  const uint64_t cmd = SocketNet::kBuffers + 0x300000;
  const uint8_t set_pairs[] = {spec::kCtrlClassMq, spec::kCtrlMqVqPairsSet, 1, 0};
  ASSERT_TRUE(m.memory.write(cmd, set_pairs, sizeof set_pairs));
  m.ctrl->write_desc(0, cmd, sizeof set_pairs, desc_flag::kNext, 1);
  m.ctrl->write_desc(1, cmd + 64, 1, desc_flag::kWrite, 0);
  for (uint16_t i = 0; i < 256; ++i) m.ctrl->set_avail_entry(i, 0);  // one command, 256 times
  Bystander other(m.loop, [&] { return m.device->counters().ctrl_commands.load(); });
  LoopGate gate(m.loop);
  gate.close();
  m.ctrl->set_avail_idx(256);
  m.notify(4);
  other.event.signal();
  gate.open();
  m.loop.flush();
  EXPECT_EQ(other.seen.load(), VirtioNet::kCtrlCommandsPerDispatch);
  ASSERT_TRUE(eventually([&] { return m.device->counters().ctrl_commands.load() == 256; }));
  EXPECT_GE(m.device->counters().budget_yields.load(), 1u);
}

// RX: a tap that keeps delivering gets one budget of frames per turn; the
// rest of the loop runs in between.
TEST(NetHostileGuest, RxStopsAtItsBudgetAndLetsTheRestOfTheLoopRun) {
  SocketNet m({.polled = true});
  ASSERT_TRUE(m.bring_up(SocketNet::kModern, /*rx_size=*/256));
  for (uint16_t i = 0; i < 256; ++i) {
    const virtio::test::Buffer b[] = {{SocketNet::kBuffers + i * 2048u, 2048, true}};
    m.rx->add(b);
  }
  m.rx->publish();
  m.notify(0);
  m.loop.flush();
  Bystander other(m.loop, [&] { return m.device->counters().rx_packets.load(); });
  LoopGate gate(m.loop);
  gate.close();
  for (int i = 0; i < 128; ++i) m.tap_delivers(tap_frame(100, static_cast<uint8_t>(i)));
  other.event.signal();
  gate.open();
  m.loop.flush();
  EXPECT_EQ(other.seen.load(), VirtioNet::kRxFramesPerDispatch);
  ASSERT_TRUE(eventually([&] { return m.device->counters().rx_packets.load() == 128; }));
}

// 5.1.6.1: a legacy driver without MRG_RXBUF (and without VERSION_1, which
// a legacy device cannot offer) uses the 10-byte header; the tap is told
// so, and the backend neither expects 12 bytes nor writes num_buffers into
// the frame.
TEST(NetSpec, ALegacyGuestWithoutMergeableBuffersUsesTenByteHeaders) {
  SocketNet m({.version = virtio::kVersionLegacy});
  const auto f = m.bring_up(bit(spec::kFMac) | bit(spec::kFStatus));
  ASSERT_TRUE(f);
  EXPECT_EQ(*f & bit(spec::kFMrgRxbuf), 0u);
  EXPECT_EQ(m.device->tap().vnet_hdr_size(), 10);
  // TX: 10-byte header, then the frame, as the tap expects it.
  std::vector<uint8_t> out(10 + 60);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i < 10 ? 0 : i);
  const uint64_t tx_buf = SocketNet::kBuffers + 0x200000;
  ASSERT_TRUE(m.memory.write(tx_buf, out.data(), out.size()));
  const virtio::test::Buffer t[] = {{tx_buf, static_cast<uint32_t>(out.size()), false}};
  m.tx->add(t);
  m.tx->publish();
  m.notify(1);
  const auto sent = m.tap_received();
  ASSERT_TRUE(sent);
  EXPECT_EQ(*sent, out);
  EXPECT_EQ(m.device->counters().tx_bytes.load(), 60u);
  // RX: the frame lands right after a 10-byte header, nothing written over it.
  const virtio::test::Buffer r[] = {{SocketNet::kBuffers, 2048, true}};
  m.rx->add(r);
  m.rx->publish();
  m.notify(0);
  std::vector<uint8_t> in(10 + 100);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i < 10 ? 0 : 0xa0 + i);
  m.tap_delivers(in);
  m.loop.flush();
  const auto used = m.rx->take_used();
  ASSERT_TRUE(used);
  ASSERT_EQ(used->len, in.size());
  std::vector<uint8_t> got(in.size());
  ASSERT_TRUE(m.memory.read(SocketNet::kBuffers, got.data(), got.size()));
  EXPECT_EQ(got, in);
  EXPECT_EQ(m.device->counters().rx_bytes.load(), 100u);
}

TEST(NetSpec, TheHeaderIsTwelveBytesWithMergeableBuffersOrVersion1) {
  {
    SocketNet m({.version = virtio::kVersionLegacy});
    ASSERT_TRUE(m.bring_up(bit(spec::kFMac) | bit(spec::kFMrgRxbuf)));
    EXPECT_EQ(m.device->tap().vnet_hdr_size(), 12);
  }
  {
    SocketNet m({});
    ASSERT_TRUE(m.bring_up(SocketNet::kModern));
    EXPECT_EQ(m.device->tap().vnet_hdr_size(), 12);
  }
}

// 5.1.3.1 feature dependencies hold for a legacy driver too: with no
// FEATURES_OK to refuse, DRIVER_OK ends in DEVICE_NEEDS_RESET, counted as
// a guest error, and the device does not start.
TEST(NetSpec, ALegacyGuestCannotNegotiateAFeatureWithoutItsDependency) {
  struct Case {
    const char* what;
    uint16_t pairs;
    uint64_t features;
  } const cases[] = {
      {"MQ without CTRL_VQ", 2, bit(spec::kFMac) | bit(spec::kFMq)},
      {"HOST_TSO4 without CSUM", 1, bit(spec::kFMac) | bit(spec::kFHostTso4)},
      {"GUEST_TSO6 without GUEST_CSUM", 1, bit(spec::kFMac) | bit(spec::kFGuestTso6)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    SocketNet m({.version = virtio::kVersionLegacy, .pairs = c.pairs});
    ASSERT_TRUE(m.bring_up(c.features));
    EXPECT_TRUE(m.needs_reset());
    EXPECT_EQ(m.device->counters().activations.load(), 0u);
    EXPECT_EQ(m.transport->counters().guest_errors.load(), 1u);
    EXPECT_EQ(m.driver->interrupt() & virtio::interrupt::kConfigChange, virtio::interrupt::kConfigChange);
  }
  // The same features with their dependencies start.
  SocketNet m({.version = virtio::kVersionLegacy, .pairs = 2});
  ASSERT_TRUE(m.bring_up(bit(spec::kFMac) | bit(spec::kFMq) | bit(spec::kFCtrlVq) | bit(spec::kFCsum) |
                         bit(spec::kFHostTso4)));
  EXPECT_FALSE(m.needs_reset());
  EXPECT_EQ(m.device->counters().activations.load(), 1u);
}

// A frame half placed in an RX queue the driver then stops: its buffers
// belong to the stopped ring, so the frame is dropped with them; the ring
// made ready in its place gets used entries for its own buffers only.
TEST(NetSpec, AFrameHalfPlacedInAStoppedQueueIsDroppedNotCarriedOver) {
  SocketNet m({});
  ASSERT_TRUE(m.bring_up(SocketNet::kModern | bit(spec::kFMrgRxbuf), /*rx_size=*/16));
  for (uint16_t i = 0; i < 2; ++i) {
    const virtio::test::Buffer b[] = {{SocketNet::kBuffers + i * 256u, 256, true}};
    m.rx->add(b);
  }
  m.rx->publish();
  m.notify(0);
  m.tap_delivers(tap_frame(1000, 5));  // needs 4 buffers: 2 filled, then it waits
  m.loop.flush();
  ASSERT_EQ(m.device->counters().rx_stalls.load(), 1u);
  ASSERT_TRUE(m.driver->del_queue(0));
  EXPECT_EQ(m.device->counters().rx_dropped.load(), 1u);
  const auto layout = m.driver->setup_queue(0, SocketNet::kRxRing + 0x8000, 16);
  ASSERT_TRUE(layout);
  m.rx = std::make_unique<virtio::test::DriverRing>(m.memory, *layout);
  for (uint16_t i = 0; i < 8; ++i) {
    const virtio::test::Buffer b[] = {{SocketNet::kBuffers + 0x10000 + i * 2048u, 2048, true}};
    m.rx->add(b);
  }
  m.rx->publish();
  m.notify(0);
  m.tap_delivers(tap_frame(500, 6));
  m.loop.flush();
  const auto used = m.rx->take_used();
  ASSERT_TRUE(used);
  EXPECT_EQ(used->len, kHdr + 500);
  EXPECT_FALSE(m.rx->take_used()) << "entries of the old ring's buffers were pushed into the new one";
  spec::NetHdrV1 hdr{};
  ASSERT_TRUE(m.memory.read(SocketNet::kBuffers + 0x10000 + used->id * 2048u, &hdr, sizeof hdr));
  EXPECT_EQ(hdr.num_buffers, 1u);
  EXPECT_EQ(m.device->counters().rx_packets.load(), 1u);
}

}  // namespace
}  // namespace kvmmio::net
