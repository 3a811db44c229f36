// SPDX-License-Identifier: BSD-2-Clause
// VirtioNet over a real tap, driven through the virtio-mmio transport
// exactly as Linux's virtio_mmio + virtio_net drivers drive it (the test
// driver of tests/virtio). Every payload is checked byte for byte.
//
// Backends: the userspace one here (notify trapped, or polled through
// ioeventfd-like eventfds), and on arm64 (where /dev/vhost-net exists: the
// nested L1 in CI) vhost-net, whose interrupts must reach the interrupt
// eventfd without the VMM: the transport's injected count stays 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "../virtio/driver_ring.h"
#include "../virtio/fake_notify_fds.h"
#include "../virtio/harness.h"
#include "../virtio/mmio_driver.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/net/vhost_net.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/net/virtio_net_spec.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "link_control.h"
#include "open_fds.h"
#include "packet_socket.h"
#include "../virtio/wait_limit.h"

namespace kvmmio::net {
namespace {

using virtio::test::Buffer;
using virtio::test::DriverRing;
using virtio::test::eventually;
using virtio::test::MmioDriver;

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kBase = 0x0a000000;
constexpr uint64_t kRxRing = kRam + 0x10000;
constexpr uint64_t kTxRing = kRam + 0x20000;
constexpr uint64_t kCtrlRing = kRam + 0x30000;
constexpr uint64_t kBuffers = kRam + 0x100000;
constexpr uint32_t kQueueSize = 64;
constexpr size_t kHdr = sizeof(spec::NetHdrV1);
constexpr uint64_t bit(unsigned n) { return 1ull << n; }

enum class Mode { kUserTrap, kUserPolled, kVhost };
const char* name(Mode m) {
  return m == Mode::kUserTrap ? "UserspaceTrap" : m == Mode::kUserPolled ? "UserspacePolled" : "Vhost";
}

// One virtio-net device behind a transport, with a driver, in test memory.
struct NetMachine {
  NetMachine(Mode mode, const std::string& tap, uint16_t pairs = 1) : mode(mode) {
    memory.add_ram(kRam, 8 << 20);
    NetOptions o;
    o.tap = tap;
    o.queue_pairs = pairs;
    o.vhost = mode == Mode::kVhost ? VhostMode::kOn : VhostMode::kOff;
    o.transport.notify = mode == Mode::kUserTrap ? virtio::NotifyMode::kTrap : virtio::NotifyMode::kIoEventFd;
    device = std::make_unique<VirtioNet>(o, memory, loop);
    transport = std::make_unique<virtio::MmioTransport>(
        *device,
        virtio::TransportEnv{.memory = memory, .irq = irq, .base = kBase,
                             .notify_fds = mode == Mode::kUserTrap ? nullptr : &notify_fds,
                             .loop = &loop, .name = "net-test"},
        o.transport);
    driver = std::make_unique<MmioDriver>(*transport);
  }
  ~NetMachine() { transport.reset(); }

  // Probe and negotiate `wanted`, set up RX0/TX0 (and the control queue).
  uint64_t bring_up(uint64_t wanted) {
    EXPECT_TRUE(driver->probe());
    EXPECT_EQ(driver->device_id(), 1u);
    auto f = driver->initialize(wanted);
    EXPECT_TRUE(f);
    auto rx_layout = driver->setup_queue(0, kRxRing, kQueueSize);
    auto tx_layout = driver->setup_queue(1, kTxRing, kQueueSize);
    EXPECT_TRUE(rx_layout && tx_layout);
    rx = std::make_unique<DriverRing>(memory, *rx_layout);
    tx = std::make_unique<DriverRing>(memory, *tx_layout);
    if (f && (*f & bit(spec::kFCtrlVq))) {
      auto ctrl_layout = driver->setup_queue(2 * device->options().queue_pairs, kCtrlRing, 16);
      EXPECT_TRUE(ctrl_layout);
      ctrl = std::make_unique<DriverRing>(memory, *ctrl_layout);
    }
    driver->driver_ok();
    EXPECT_EQ(driver->status() & virtio::status::kDeviceNeedsReset, 0u);
    return f.value_or(0);
  }

  // The guest's QueueNotify: an MMIO exit, or the ioeventfd store.
  void notify(uint32_t queue) {
    if (mode == Mode::kUserTrap) driver->notify(queue);
    else ASSERT_TRUE(notify_fds.guest_notify(queue));
  }

  void send(const std::vector<uint8_t>& frame, uint64_t buf) {
    std::vector<uint8_t> bytes(kHdr + frame.size(), 0);
    std::copy(frame.begin(), frame.end(), bytes.begin() + kHdr);
    ASSERT_TRUE(memory.write(buf, bytes.data(), bytes.size()));
    const Buffer b[] = {{buf, static_cast<uint32_t>(bytes.size()), false}};
    tx->add(b);
    tx->publish();
    notify(1);
  }

  void post_rx(unsigned count, uint32_t size, uint64_t base) {
    for (unsigned i = 0; i < count; ++i) {
      const Buffer b[] = {{base + i * size, size, true}};
      rx->add(b);
    }
    rx->publish();
    notify(0);
  }

  Mode mode;
  GuestMemory memory;
  EventFd irq;
  EventLoop loop;
  virtio::test::FakeNotifyFds notify_fds;
  std::unique_ptr<VirtioNet> device;
  std::unique_ptr<virtio::MmioTransport> transport;
  std::unique_ptr<MmioDriver> driver;
  std::unique_ptr<DriverRing> rx, tx, ctrl;
};

// The test frames (EtherType 0x88b5) among the RX buffers used so far, in
// order. Buffer `head` is at kBuffers + head * size: post_rx() once.
void take_received(NetMachine& m, uint32_t size, std::vector<std::vector<uint8_t>>& into) {
  while (auto used = m.rx->take_used()) {
    if (used->len < kHdr + 14) continue;
    std::vector<uint8_t> got(used->len - kHdr);
    m.memory.read(kBuffers + used->id * size + kHdr, got.data(), got.size());
    if (got[12] == 0x88 && got[13] == 0xb5) into.push_back(std::move(got));
  }
}
bool receive_frames(NetMachine& m, uint32_t size, size_t count, std::vector<std::vector<uint8_t>>& into) {
  return eventually([&] {
    take_received(m, size, into);
    return into.size() >= count;
  });
}

// Sends a TX chain whose buffer is outside guest RAM; true once the device
// reports DEVICE_NEEDS_RESET for it.
bool break_tx_ring(NetMachine& m) {
  const Buffer bad[] = {{kRam + (64 << 20), 100, false}};
  m.tx->add(bad);
  m.tx->publish();
  m.notify(1);
  return eventually([&] { return (m.driver->status() & virtio::status::kDeviceNeedsReset) != 0; });
}

// One frame each way, checked byte for byte: from the guest out of the tap,
// then from the tap into the RX buffers post_rx(n, 2048, kBuffers) posted.
// The packet socket is opened here: one opened before the link went down
// reports ENETDOWN once.
void expect_traffic_both_ways(NetMachine& m, uint8_t seed, uint64_t tx_buf) {
  test::PacketSocket sock(m.device->tap().ifindex());
  const auto out = test::test_frame(seed, 700);
  m.send(out, tx_buf);
  auto sent = sock.receive(test::kWaitLimitMs);
  ASSERT_TRUE(sent) << "the guest's frame never left the tap";
  EXPECT_EQ(*sent, out);
  const auto in = test::test_frame(static_cast<uint8_t>(seed + 1), 900);
  sock.send(in);
  std::vector<std::vector<uint8_t>> got;
  ASSERT_TRUE(receive_frames(m, 2048, 1, got)) << "the tap's frame never reached the guest";
  EXPECT_EQ(got[0], in);
}

class VirtioNetTest : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override {
    if (GetParam() == Mode::kVhost && !VhostNet::available()) {
      const char* req = std::getenv("KVMMIO_REQUIRE_VHOST");
      if (req && std::string(req) == "1") FAIL() << "/dev/vhost-net missing but KVMMIO_REQUIRE_VHOST=1";
      GTEST_SKIP() << "no /dev/vhost-net on this machine (modprobe vhost_net)";
    }
  }
  std::string tap(const char* what) { return std::string("kvn") + what + std::to_string(int(GetParam())); }
  static constexpr uint64_t kBasic = bit(spec::kFVersion1) | bit(spec::kFMac) | bit(spec::kFStatus);
};

TEST_P(VirtioNetTest, ConfigSpaceCarriesMacAndLinkStatus) {
  NetMachine m(GetParam(), tap("c"));
  m.bring_up(kBasic);
  const auto mac = default_mac(tap("c"));
  for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(m.driver->read_config(i, 1), mac[i]);
  EXPECT_EQ(m.driver->read_config(6, 2), spec::kStatusLinkUp);
}

TEST_P(VirtioNetTest, GuestFramesLeaveThroughTheTapIntact) {
  NetMachine m(GetParam(), tap("t"));
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  for (int i = 0; i < 10; ++i) {
    const auto frame = test::test_frame(static_cast<uint8_t>(i), 60 + 143 * i);
    m.send(frame, kBuffers + i * 4096);
    auto got = sock.receive(test::kWaitLimitMs);
    ASSERT_TRUE(got) << "frame " << i << " never left the tap";
    EXPECT_EQ(*got, frame);
  }
  ASSERT_TRUE(eventually([&] { return m.tx->used_idx() == 10; }));
}

TEST_P(VirtioNetTest, TapFramesLandInGuestBuffersWithTheirHeader) {
  NetMachine m(GetParam(), tap("r"));
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  m.post_rx(16, 2048, kBuffers);
  const auto frame = test::test_frame(3, 1000);
  sock.send(frame);
  for (int tries = 0; tries < 40; ++tries) {
    ASSERT_TRUE(m.irq.wait_readable(5000)) << "no interrupt for a received frame";
    m.irq.take();
    m.driver->interrupt();
    while (auto used = m.rx->take_used()) {
      ASSERT_LT(used->id, 16u);
      ASSERT_GE(used->len, kHdr);
      std::vector<uint8_t> got(used->len - kHdr);
      m.memory.read(kBuffers + used->id * 2048 + kHdr, got.data(), got.size());
      if (got.size() > 14 && got[12] == 0x88 && got[13] == 0xb5) {
        EXPECT_EQ(got, frame);
        // kvmmio's backend sets num_buffers to 1 (5.1.6.4). vhost-net
        // writes it only with MRG_RXBUF; without it drivers ignore the field.
        if (GetParam() != Mode::kVhost) {
          spec::NetHdrV1 hdr{};
          m.memory.read(kBuffers + used->id * 2048, &hdr, sizeof(hdr));
          EXPECT_EQ(hdr.num_buffers, 1u);
        }
        return;
      }
    }
  }
  FAIL() << "the frame never reached the guest";
}

TEST_P(VirtioNetTest, MergeableBuffersCarryALargeFrameAcrossSeveral) {
  NetMachine m(GetParam(), tap("m"));
  const uint64_t f = m.bring_up(kBasic | bit(spec::kFMrgRxbuf));
  ASSERT_TRUE(f & bit(spec::kFMrgRxbuf));
  test::PacketSocket sock(m.device->tap().ifindex());
  m.post_rx(48, 256, kBuffers);
  const auto frame = test::test_frame(9, 1400);
  sock.send(frame);
  for (int tries = 0; tries < 40; ++tries) {
    ASSERT_TRUE(m.irq.wait_readable(5000));
    m.irq.take();
    while (auto first = m.rx->take_used()) {
      spec::NetHdrV1 hdr{};
      m.memory.read(kBuffers + first->id * 256, &hdr, sizeof(hdr));
      std::vector<uint8_t> got(first->len - kHdr);
      m.memory.read(kBuffers + first->id * 256 + kHdr, got.data(), got.size());
      for (unsigned b = 1; b < hdr.num_buffers; ++b) {
        auto more = m.rx->take_used();
        ASSERT_TRUE(more) << "num_buffers " << hdr.num_buffers << " but only " << b << " used";
        std::vector<uint8_t> part(more->len);
        m.memory.read(kBuffers + more->id * 256, part.data(), part.size());
        got.insert(got.end(), part.begin(), part.end());
      }
      if (got.size() > 14 && got[12] == 0x88 && got[13] == 0xb5) {
        EXPECT_EQ(hdr.num_buffers, (kHdr + frame.size() + 255) / 256);
        EXPECT_EQ(got, frame);
        return;
      }
    }
  }
  FAIL() << "the frame never reached the guest";
}

// QueueReady = 0 on the RX queue while the device runs: from then on
// nothing may touch that ring (2.6.1, 4.2.2), though buffers are still
// posted in it and frames keep coming; vhost's vring is stopped too. Made
// ready again elsewhere, the queue carries traffic. vhost's kernel worker
// is not ours to flush, so the negative is checked after a positive sign:
// the tap hands frames out in order, so once the frame sent last is in the
// new ring, the ones sent while the queue was stopped have been taken
// (kept for the new ring, or dropped), and none may be in the old one.
TEST_P(VirtioNetTest, AnRxQueueStoppedWhileRunningIsNotTouchedUntilReadyAgain) {
  NetMachine m(GetParam(), tap("x"));
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  m.post_rx(16, 2048, kBuffers);
  std::vector<std::vector<uint8_t>> got;
  sock.send(test::test_frame(1, 300));
  ASSERT_TRUE(receive_frames(m, 2048, 1, got));
  ASSERT_TRUE(m.driver->del_queue(0));
  // The index from here on, not from before the stop: until then the ring
  // is live, and the host's own frames on a new interface (IPv6 neighbour
  // discovery, MLD reports) may still arrive in it.
  const uint16_t used_before = m.rx->used_idx();
  const std::unique_ptr<DriverRing> stopped = std::move(m.rx);  // its used index stays readable
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < 3; ++i) {
    sent.push_back(test::test_frame(static_cast<uint8_t>(2 + i), 300));
    sock.send(sent.back());
  }
  m.loop.flush();  // the userspace backend has seen the tap readable
  constexpr uint64_t kRxRing2 = kRam + 0x40000;
  const auto layout = m.driver->setup_queue(0, kRxRing2, kQueueSize);
  ASSERT_TRUE(layout);
  m.rx = std::make_unique<DriverRing>(m.memory, *layout);
  m.post_rx(16, 2048, kBuffers);
  sent.push_back(test::test_frame(9, 400));
  sock.send(sent.back());
  got.clear();
  ASSERT_TRUE(eventually([&] {
    take_received(m, 2048, got);
    return !got.empty() && got.back() == sent.back();
  })) << "no traffic on the queue made ready again";
  // What arrived is some of what was sent, in the order sent.
  auto next = sent.begin();
  for (const auto& frame : got) {
    next = std::find(next, sent.end(), frame);
    ASSERT_NE(next, sent.end()) << "a frame out of order, twice, or not sent";
    ++next;
  }
  EXPECT_EQ(stopped->used_idx(), used_before) << "a queue that is not ready was written to";
  EXPECT_EQ(m.driver->status() & virtio::status::kDeviceNeedsReset, 0u);
}

// The userspace backend's own RX flow control (vhost does this in the kernel).
class UserspaceNetTest : public VirtioNetTest {};

TEST_P(UserspaceNetTest, FramesWaitForBuffersInsteadOfBeingLost) {
  NetMachine m(GetParam(), tap("s"));
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  const auto frame = test::test_frame(5, 500);
  sock.send(frame);  // no RX buffers yet
  ASSERT_TRUE(eventually([&] { return m.device->counters().rx_stalls.load() >= 1; }));
  m.post_rx(16, 2048, kBuffers);
  ASSERT_TRUE(eventually([&] { return m.rx->used_idx() >= 1; }));
  bool found = false;
  while (auto used = m.rx->take_used()) {
    std::vector<uint8_t> got(used->len - kHdr);
    m.memory.read(kBuffers + used->id * 2048 + kHdr, got.data(), got.size());
    if (got == frame) found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(m.device->counters().rx_dropped.load(), 0u);
}

// A guest that stops refilling RX while frames keep coming: the backend
// stops watching the (readable) tap instead of spinning on it, and every
// frame arrives, intact and in order, once buffers are posted again.
TEST_P(UserspaceNetTest, RxWithoutBuffersNeitherSpinsNorLosesFrames) {
  NetMachine m(GetParam(), tap("p"));
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < 5; ++i) {
    sent.push_back(test::test_frame(static_cast<uint8_t>(40 + i), 200 + 50 * i));
    sock.send(sent.back());
  }
  ASSERT_TRUE(eventually([&] { return m.device->counters().rx_stalls.load() >= 1; }));
  const uint64_t dispatches = m.loop.dispatches();
  for (int i = 5; i < 8; ++i) {
    sent.push_back(test::test_frame(static_cast<uint8_t>(40 + i), 1000 + i));
    sock.send(sent.back());
  }
  // Each flush runs every watch whose fd is ready now: a loop still
  // watching the (readable) tap would run its callback at least once per
  // flush, so ten flushes tell, however slow the host.
  for (int i = 0; i < 10; ++i) m.loop.flush();
  EXPECT_LE(m.loop.dispatches() - dispatches, 5u) << "the event loop spins on an undeliverable tap";
  EXPECT_EQ(m.device->counters().rx_stalls.load(), 1u);
  m.post_rx(32, 2048, kBuffers);
  std::vector<std::vector<uint8_t>> got;
  ASSERT_TRUE(receive_frames(m, 2048, sent.size(), got)) << got.size() << " of " << sent.size() << " frames";
  EXPECT_EQ(got, sent);
  EXPECT_EQ(m.device->counters().rx_dropped.load(), 0u);
}

// `ip link set TAP down` under a running guest: the guest's link goes down
// (config status, configuration interrupt), frames it sends anyway are
// dropped with their buffers returned, and up again brings traffic back.
TEST_P(VirtioNetTest, TapDownIsTheGuestsLinkDownAndUpBringsTrafficBack) {
  NetMachine m(GetParam(), tap("d"));
  m.bring_up(kBasic);
  const auto& c = m.device->counters();
  m.post_rx(32, 2048, kBuffers);
  m.device->tap().set_link(false);
  ASSERT_TRUE(eventually([&] { return m.driver->read_config(6, 2) == 0; })) << "the guest's link is still up";
  EXPECT_EQ(c.tap_down.load(), 1u);
  EXPECT_GE(m.transport->counters().config_interrupts.load(), 1u);
  EXPECT_TRUE(m.driver->interrupt() & virtio::interrupt::kConfigChange);
  m.send(test::test_frame(1), kBuffers + 0x40000);
  ASSERT_TRUE(eventually([&] { return m.tx->used_idx() == 1; })) << "a frame sent into a down tap was never returned";
  if (GetParam() != Mode::kVhost) {
    EXPECT_GE(c.tap_errors.load(), 1u);  // vhost drops such frames in the kernel
  }

  m.device->tap().set_link(true);
  ASSERT_TRUE(eventually([&] { return m.driver->read_config(6, 2) == spec::kStatusLinkUp; }));
  EXPECT_EQ(c.tap_up.load(), 1u);
  expect_traffic_both_ways(m, 2, kBuffers + 0x41000);
  EXPECT_EQ(m.transport->counters().guest_errors.load(), 0u);
}

// `ip link del TAP` under a running guest: the fds die (EBADFD, polled as
// an error forever); the guest's link goes down, nothing spins, and when a
// tap of that name is created again kvmmio attaches to it and traffic flows.
TEST_P(VirtioNetTest, RemovedTapIsAttachedAgainWhenItsNameReturns) {
  const std::string name = tap("x");
  test::LinkCleanup cleanup(name);  // the re-created tap is persistent
  NetMachine m(GetParam(), name);
  m.bring_up(kBasic);
  const auto& c = m.device->counters();
  m.post_rx(32, 2048, kBuffers);
  test::delete_link(m.device->tap().ifindex());
  ASSERT_TRUE(eventually([&] { return c.tap_removed.load() == 1; }));
  EXPECT_EQ(m.driver->read_config(6, 2), 0u);
  EXPECT_EQ(c.tap_down.load(), 1u);
  m.send(test::test_frame(4), kBuffers + 0x40000);
  if (GetParam() == Mode::kVhost) {
    // vhost's batched TX into the dead tap fails as a vring error, and the
    // kernel keeps the buffer (vhost_tx_batch): not the guest's fault.
    ASSERT_TRUE(eventually([&] { return c.vhost_errors.load() >= 1; }));
  } else {
    ASSERT_TRUE(eventually([&] { return m.tx->used_idx() == 1; })) << "a frame sent into a removed tap was never returned";
    EXPECT_GE(c.tap_errors.load(), 1u);
  }
  EXPECT_EQ(m.driver->status() & virtio::status::kDeviceNeedsReset, 0u) << "a removed tap is not a guest error";
  // A dead fd polls as an error, which makes any watch on it ready: each
  // flush would run it once more (see RxWithoutBuffersNeitherSpinsNorLosesFrames).
  const uint64_t dispatches = m.loop.dispatches();
  for (int i = 0; i < 10; ++i) m.loop.flush();
  EXPECT_LE(m.loop.dispatches() - dispatches, 5u) << "the event loop spins on a dead tap fd";

  test::create_persistent_tap(name);
  ASSERT_TRUE(eventually([&] { return c.tap_reattached.load() == 1; })) << "kvmmio did not attach again";
  ASSERT_TRUE(eventually([&] { return m.driver->read_config(6, 2) == spec::kStatusLinkUp; }));
  EXPECT_TRUE(m.device->tap().link_up());
  expect_traffic_both_ways(m, 5, kBuffers + 0x41000);
}

// The same while the device is reset (no monitor runs then): DRIVER_OK
// finds the fds detached and attaches them to the new interface.
TEST_P(VirtioNetTest, TapRecreatedDuringAResetIsAttachedAtDriverOk) {
  const std::string name = tap("y");
  test::LinkCleanup cleanup(name);
  NetMachine m(GetParam(), name);
  m.bring_up(kBasic);
  m.driver->reset();
  test::delete_link(m.device->tap().ifindex());
  test::create_persistent_tap(name);
  m.bring_up(kBasic);
  EXPECT_EQ(m.device->counters().tap_reattached.load(), 1u);
  EXPECT_EQ(m.driver->read_config(6, 2), spec::kStatusLinkUp);
  m.post_rx(32, 2048, kBuffers);
  expect_traffic_both_ways(m, 9, kBuffers + 0x41000);
}

// A guest that points a descriptor outside its RAM: the device needs a
// reset (2.1.2) with a configuration interrupt, whoever found the fault
// (the transport's ring checks, or vhost through its vring ERR eventfd),
// and the driver's reset brings it back.
TEST_P(VirtioNetTest, DescriptorOutsideRamNeedsResetAndAResetRecovers) {
  NetMachine m(GetParam(), tap("e"));
  m.bring_up(kBasic);
  ASSERT_TRUE(break_tx_ring(m)) << "a broken ring left the device running";
  const auto& t = m.transport->counters();
  // With vhost, the event-loop thread sets the status bit first and raises
  // the configuration interrupt right after: wait for that too.
  EXPECT_TRUE(eventually([&] {
    return t.config_interrupts.load() >= 1 && (m.driver->interrupt() & virtio::interrupt::kConfigChange);
  })) << "DEVICE_NEEDS_RESET without a configuration interrupt";
  EXPECT_EQ(t.needs_reset.load(), 1u);
  if (GetParam() == Mode::kVhost) {
    EXPECT_GE(m.device->counters().vhost_errors.load(), 1u);
    EXPECT_EQ(m.device->guest_errors(), 1u) << "vhost's vring error is the guest's, counted once";
  } else {
    EXPECT_GE(t.guest_errors.load(), 1u);
  }

  m.driver->reset();
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  const auto frame = test::test_frame(8, 500);
  m.send(frame, kBuffers);
  auto got = sock.receive(test::kWaitLimitMs);
  ASSERT_TRUE(got) << "no traffic after the reset";
  EXPECT_EQ(*got, frame);
}

// A guest that breaks its TX ring after every reset: each time a counted
// guest error (the transport's, or with vhost the device's: vhost's vring
// error) and a DEVICE_NEEDS_RESET, and the log stays rate-limited: at most
// GuestErrorLog::kBurst lines of each kind.
TEST_P(VirtioNetTest, ABrokenRingAfterEveryResetIsCountedAndItsLogRateLimited) {
  NetMachine m(GetParam(), tap("b"));
  constexpr int kCycles = 30;
  testing::internal::CaptureStderr();
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    m.driver->reset();
    m.bring_up(kBasic);
    ASSERT_TRUE(break_tx_ring(m)) << "cycle " << cycle;
  }
  const std::string log = testing::internal::GetCapturedStderr();
  const uint64_t errors = m.transport->counters().guest_errors.load() + m.device->guest_errors();
  EXPECT_EQ(errors, static_cast<uint64_t>(kCycles));
  EXPECT_EQ(m.transport->counters().needs_reset.load(), static_cast<uint64_t>(kCycles));
  size_t lines = 0;
  for (char c : log) lines += c == '\n';
  EXPECT_LE(lines, 2 * GuestErrorLog::kBurst) << log;
}

TEST_P(VirtioNetTest, ResetAndReinitialiseRepeatedlyWithoutLeakingFds) {
  NetMachine m(GetParam(), tap("z"));
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  // A removed event-loop watch closes its fd once a dispatch in flight ends:
  // count after the loop has settled, and look for growth (a leak), not an
  // exact figure (an fd of the set-up that closes late is not a leak; seen
  // in the -O0 coverage build: 19 after, 20 before).
  m.loop.flush();
  const int before = test::open_fds();
  for (int cycle = 0; cycle < 20; ++cycle) {
    m.driver->reset();
    m.bring_up(kBasic);
  }
  EXPECT_TRUE(eventually([&] {
    m.loop.flush();
    return test::open_fds() <= before;
  })) << test::open_fds() << " fds, " << before << " before";
  EXPECT_EQ(m.device->counters().activations.load(), 21u);
  const auto frame = test::test_frame(77);
  m.send(frame, kBuffers);
  auto got = sock.receive(test::kWaitLimitMs);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, frame);
}

TEST_P(VirtioNetTest, ControlQueueSetsQueuePairsAndRefusesTooMany) {
  NetMachine m(GetParam(), tap("q"), 2);
  const uint64_t f = m.bring_up(kBasic | bit(spec::kFCtrlVq) | bit(spec::kFMq));
  ASSERT_TRUE(f & bit(spec::kFMq));
  EXPECT_EQ(m.driver->read_config(8, 2), 2u);  // max_virtqueue_pairs
  auto command = [&](uint16_t pairs) {
    const uint8_t cmd[4] = {spec::kCtrlClassMq, spec::kCtrlMqVqPairsSet, static_cast<uint8_t>(pairs),
                            static_cast<uint8_t>(pairs >> 8)};
    m.memory.write(kBuffers, cmd, sizeof(cmd));
    const uint8_t poison = 0xee;
    m.memory.write(kBuffers + 64, &poison, 1);
    const Buffer chain[] = {{kBuffers, 2, false}, {kBuffers + 2, 2, false}, {kBuffers + 64, 1, true}};
    m.ctrl->add(chain);
    m.ctrl->publish();
    m.notify(2 * 2);
    EXPECT_TRUE(eventually([&] { return m.ctrl->take_used().has_value(); }));
    uint8_t ack = 0;
    m.memory.read(kBuffers + 64, &ack, 1);
    return ack;
  };
  EXPECT_EQ(command(2), spec::kCtrlOk);
  EXPECT_EQ(command(1), spec::kCtrlOk);
  EXPECT_EQ(command(3), spec::kCtrlErr);
  EXPECT_EQ(command(0), spec::kCtrlErr);
}

// 2.7.8: the used length is what the device wrote. A control command
// writes one ack byte, at the start of the writable part, whatever room the
// driver gave it; a chain with no writable byte gets length 0.
TEST_P(VirtioNetTest, ControlQueueUsedLengthCountsOnlyTheAckByte) {
  NetMachine m(GetParam(), tap("l"), 2);
  ASSERT_TRUE(m.bring_up(kBasic | bit(spec::kFCtrlVq) | bit(spec::kFMq)) & bit(spec::kFCtrlVq));
  const uint8_t cmd[4] = {spec::kCtrlClassMq, spec::kCtrlMqVqPairsSet, 1, 0};
  m.memory.write(kBuffers, cmd, sizeof(cmd));
  const uint8_t poison[4] = {0xee, 0xee, 0xee, 0xee};
  m.memory.write(kBuffers + 64, poison, sizeof(poison));
  const Buffer roomy[] = {{kBuffers, 4, false}, {kBuffers + 64, 4, true}};
  m.ctrl->add(roomy);
  m.ctrl->publish();
  m.notify(2 * 2);
  std::optional<virtio::test::UsedElem> used;
  ASSERT_TRUE(eventually([&] { return (used = m.ctrl->take_used()).has_value(); }));
  EXPECT_EQ(used->len, 1u) << "the used length must count the ack byte only";
  uint8_t after[4] = {};
  m.memory.read(kBuffers + 64, after, sizeof(after));
  EXPECT_EQ(after[0], spec::kCtrlOk);
  EXPECT_EQ(after[1], 0xee);
  EXPECT_EQ(after[3], 0xee) << "bytes after the ack were written";

  const Buffer no_ack[] = {{kBuffers, 4, false}};
  m.ctrl->add(no_ack);
  m.ctrl->publish();
  m.notify(2 * 2);
  ASSERT_TRUE(eventually([&] { return (used = m.ctrl->take_used()).has_value(); }));
  EXPECT_EQ(used->len, 0u);
  EXPECT_EQ(m.driver->status() & virtio::status::kDeviceNeedsReset, 0u);
}

TEST_P(VirtioNetTest, InterruptsBypassTheVmmOnlyWithVhost) {
  NetMachine m(GetParam(), tap("i"));
  m.bring_up(kBasic);
  test::PacketSocket sock(m.device->tap().ifindex());
  for (int i = 0; i < 5; ++i) {
    m.send(test::test_frame(static_cast<uint8_t>(i)), kBuffers + i * 4096);
    ASSERT_TRUE(sock.receive(test::kWaitLimitMs));
    // A polled notify is an eventfd write: one the loop has not read yet
    // adds up with the next into one wake-up (as KVM's ioeventfd writes
    // do). Let the loop take each before the next, so each is one.
    m.loop.flush();
  }
  ASSERT_TRUE(eventually([&] { return m.tx->used_idx() == 5; }));
  ASSERT_TRUE(m.irq.wait_readable(5000)) << "no used-buffer interrupt at all";
  const auto& c = m.transport->counters();
  if (GetParam() == Mode::kVhost) {
    EXPECT_EQ(c.interrupts_injected.load(), 0u) << "vhost interrupts went through the VMM";
    EXPECT_EQ(c.notifies_polled.load(), 0u) << "the VMM polled a vhost-owned notify fd";
    EXPECT_EQ(c.notifies_trapped.load(), 0u);
    // The guest still sees the used-buffer bit (docs/virtio-mmio.md).
    EXPECT_TRUE(m.driver->interrupt() & virtio::interrupt::kUsedBuffer);
  } else {
    EXPECT_GE(c.interrupts_injected.load(), 1u);
    EXPECT_GE(GetParam() == Mode::kUserTrap ? c.notifies_trapped.load() : c.notifies_polled.load(), 5u);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, VirtioNetTest,
                         ::testing::Values(Mode::kUserTrap, Mode::kUserPolled
#if defined(__aarch64__)
                                           , Mode::kVhost  // /dev/vhost-net: the arm64 platform
#endif
                                           ),
                         [](const auto& info) { return name(info.param); });

INSTANTIATE_TEST_SUITE_P(Backends, UserspaceNetTest, ::testing::Values(Mode::kUserTrap, Mode::kUserPolled),
                         [](const auto& info) { return name(info.param); });

}  // namespace
}  // namespace kvmmio::net
