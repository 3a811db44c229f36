// virtio-net's userspace backend against a hostile guest, over the
// socketpair stand-in of a tap (tests/virtio/socket_net.h): what the guest
// can make the VMM hold, and that the limits are counted guest errors.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <vector>

#include "../virtio/socket_net.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/split_queue.h"

namespace kvmmio::net {
namespace {

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

}  // namespace
}  // namespace kvmmio::net
