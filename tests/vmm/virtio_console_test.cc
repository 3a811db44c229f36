// SPDX-License-Identifier: BSD-2-Clause
// VirtioConsole behind the virtio-mmio transport, driven as Linux's
// virtio_mmio + virtio_console drivers drive it (tests/virtio's MmioDriver
// and DriverRing, real memfd guest RAM), on both register layouts:
// negotiation, guest output reaching an fd byte for byte (also when the fd
// is full for a while, or gone), host input filling the guest's receive
// buffers in order and waiting when there are none, the ConsoleInput
// plumbing feeding it, and hostile chains ending in DEVICE_NEEDS_RESET.
#include "kvmmio/console/virtio_console.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../virtio/driver_ring.h"
#include "../virtio/fake_notify_fds.h"
#include "../virtio/harness.h"
#include "../virtio/mmio_driver.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "vmm/console/console.h"

namespace kvmmio::console {
namespace {

using namespace std::chrono_literals;
using virtio::test::Buffer;
using virtio::test::DriverRing;
using virtio::test::eventually;
using virtio::test::MmioDriver;
namespace feature = virtio::feature;
namespace status = virtio::status;

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRamSize = 4 << 20;
constexpr uint64_t kBase = 0x0a000000;
constexpr uint64_t kRxRing = kRam + 0x10000;
constexpr uint64_t kTxRing = kRam + 0x20000;
constexpr uint64_t kRxBuffers = kRam + 0x100000;
constexpr uint64_t kTxBuffers = kRam + 0x200000;
constexpr uint32_t kQueueSize = 64;

// What Linux's virtio_console asks for: its device bits (SIZE, MULTIPORT,
// EMERG_WRITE) and the ring/transport bits the virtio core takes.
constexpr uint64_t kLinuxWants = 0x7 | feature::bit(feature::kRingIndirectDesc) |
                                 feature::bit(feature::kRingEventIdx) |
                                 feature::bit(feature::kVersion1) | feature::bit(feature::kRingReset);

struct Pipe {
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    rd = UniqueFd(fds[0]);
    wr = UniqueFd(fds[1]);
  }
  // Everything readable within `wait`.
  std::string drain(std::chrono::milliseconds wait = 200ms) {
    std::string got;
    pollfd p{rd.get(), POLLIN, 0};
    while (::poll(&p, 1, static_cast<int>(wait.count())) > 0) {
      char buf[65536];
      const ssize_t n = ::read(rd.get(), buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  UniqueFd rd, wr;
};

std::string pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('!' + (i * 7 + seed) % 90);
  return s;
}

struct Options {
  uint32_t version = virtio::kVersionModern;
  bool ioeventfds = false;  // notifies through (fake) ioeventfds polled by the loop
};

// One virtio console behind a transport, with a Linux-like driver.
struct ConsoleMachine {
  ConsoleMachine(Options o, int output_fd) : opts(o) {
    memory.add_ram(kRam, kRamSize);
    device = std::make_unique<VirtioConsole>(memory, loop, output_fd);
    virtio::TransportOptions t;
    t.version = o.version;
    t.notify = o.ioeventfds ? virtio::NotifyMode::kIoEventFd : virtio::NotifyMode::kTrap;
    t.regs = virtio::RegsMode::kTrap;  // no mirror mapped: every register access is the transport's
    transport = std::make_unique<virtio::MmioTransport>(
        *device,
        virtio::TransportEnv{.memory = memory, .irq = irq, .base = kBase,
                             .notify_fds = o.ioeventfds ? &notify_fds : nullptr, .loop = &loop,
                             .name = "console-test"},
        t);
    driver = std::make_unique<MmioDriver>(*transport);
  }
  ~ConsoleMachine() { transport.reset(); }

  // virtcons_probe(): negotiate, set up receiveq and transmitq, fill the
  // receiveq with `rx_buffers` buffers of `rx_size` bytes (before or after
  // DRIVER_OK: Linux has done both over the years), DRIVER_OK.
  uint64_t bring_up(unsigned rx_buffers = 8, uint32_t rx_size = 64, bool fill_after_ok = false) {
    EXPECT_TRUE(driver->probe());
    EXPECT_EQ(driver->device_id(), 3u);
    const auto f = driver->initialize(kLinuxWants);
    EXPECT_TRUE(f);
    const auto rxl = driver->setup_queue(VirtioConsole::kReceiveQueue, kRxRing, kQueueSize);
    const auto txl = driver->setup_queue(VirtioConsole::kTransmitQueue, kTxRing, kQueueSize);
    EXPECT_TRUE(rxl && txl);
    if (!rxl || !txl) return 0;
    rx = std::make_unique<DriverRing>(memory, *rxl);
    tx = std::make_unique<DriverRing>(memory, *txl);
    if (!fill_after_ok) post_rx(rx_buffers, rx_size, false);
    driver->driver_ok();
    if (fill_after_ok) post_rx(rx_buffers, rx_size, true);
    EXPECT_EQ(driver->status() & status::kDeviceNeedsReset, 0u);
    return f.value_or(0);
  }

  void notify(uint32_t queue) {
    if (opts.ioeventfds) ASSERT_TRUE(notify_fds.guest_notify(queue));
    else driver->notify(queue);
  }

  void post_rx(unsigned count, uint32_t size, bool notify = true) {
    for (unsigned i = 0; i < count; ++i) {
      const Buffer b[] = {{kRxBuffers + rx_next * 4096, size, true}};
      rx->add(b);
      rx_next = (rx_next + 1) % 64;
    }
    rx->publish();
    if (notify) this->notify(VirtioConsole::kReceiveQueue);
  }

  // put_chars(): one readable buffer (or several, as a chain), notify.
  void send(const std::vector<std::string>& pieces, uint64_t at = kTxBuffers) {
    std::vector<Buffer> chain;
    for (const std::string& p : pieces) {
      ASSERT_TRUE(memory.write(at, p.data(), p.size()));
      chain.push_back({at, static_cast<uint32_t>(p.size()), false});
      at += (p.size() + 4095) / 4096 * 4096;
    }
    tx->add(chain);
    tx->publish();
    notify(VirtioConsole::kTransmitQueue);
  }

  std::string rx_bytes(const virtio::test::UsedElem& e) {
    std::string s(e.len, '\0');
    memory.read(kRxBuffers + e.id % 64 * 4096, s.data(), s.size());
    return s;
  }

  bool needs_reset() { return driver->status() & status::kDeviceNeedsReset; }

  Options opts;
  GuestMemory memory;
  EventFd irq;
  EventLoop loop;
  virtio::test::FakeNotifyFds notify_fds;
  std::unique_ptr<VirtioConsole> device;
  std::unique_ptr<virtio::MmioTransport> transport;
  std::unique_ptr<MmioDriver> driver;
  std::unique_ptr<DriverRing> rx, tx;
  unsigned rx_next = 0;
};

class VirtioConsoleTest : public testing::TestWithParam<uint32_t> {
 protected:
  Options opts(bool ioeventfds = false) { return {GetParam(), ioeventfds}; }
};

TEST_P(VirtioConsoleTest, NegotiatesWithLinuxAsDevice3WithTwoQueues) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  const uint64_t f = m.bring_up();
  EXPECT_EQ(m.driver->version(), GetParam());
  // No console feature is offered (one port, no size, no emergency write);
  // the modern layout insists on VERSION_1, the legacy one cannot offer it.
  EXPECT_EQ(f & 0x7, 0u);
  EXPECT_EQ(feature::has(f, feature::kVersion1), GetParam() == virtio::kVersionModern);
  EXPECT_TRUE(feature::has(f, feature::kRingEventIdx));
  EXPECT_EQ(m.driver->status() & status::kDriverOk, status::kDriverOk);
  EXPECT_EQ(m.device->counters().activations, 1u);
  for (uint32_t q : {0u, 1u, 2u}) {
    m.driver->write(virtio::reg::kQueueSel, q);
    EXPECT_EQ(m.driver->read(virtio::reg::kQueueNumMax), q < 2 ? VirtioConsole::kQueueSize : 0u) << q;
  }
  // The config layout exists (12 bytes); the port count says one port.
  EXPECT_EQ(m.driver->read_config(4, 4), 1u);
}

TEST_P(VirtioConsoleTest, GuestOutputReachesTheOutputFdIntact) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  m.bring_up();
  std::string want;
  for (int i = 0; i < 20; ++i) {
    const std::string line = "line " + std::to_string(i) + ": " + pattern(1 + 37 * i, i) + "\n";
    m.send({line});
    want += line;
  }
  // A chain of three buffers, as a writev would give.
  m.send({"three ", "buffers ", "in one chain\n"});
  want += "three buffers in one chain\n";
  EXPECT_EQ(out.drain(), want);
  // Every buffer came back, with nothing written into it (2.7.8).
  int used = 0;
  while (auto e = m.tx->take_used()) {
    EXPECT_EQ(e->len, 0u);
    ++used;
  }
  EXPECT_EQ(used, 21);
  EXPECT_EQ(m.device->counters().tx_bytes, want.size());
  EXPECT_GT(m.irq.take().value_or(0), 0u) << "no used-buffer interrupt for transmitted buffers";
  EXPECT_EQ(m.transport->counters().guest_errors, 0u);
}

TEST_P(VirtioConsoleTest, OutputWaitsForAFullFdWithoutBlockingAndResumes) {
  Pipe out;
  ASSERT_GT(::fcntl(out.wr.get(), F_SETPIPE_SZ, 4096), 0);
  ConsoleMachine m(opts(true), out.wr.get());
  m.bring_up();
  // 24 KiB through a 4 KiB pipe nobody reads yet: the notify returns (the
  // loop thread is not stuck in write()), most buffers stay with the device.
  std::string want;
  for (int i = 0; i < 3; ++i) {
    const std::string chunk = pattern(8192, i);
    m.send({chunk}, kTxBuffers + i * 0x4000);
    want += chunk;
  }
  ASSERT_TRUE(eventually([&] { return m.device->counters().tx_stalls >= 1; }));
  m.loop.flush();
  EXPECT_LT(m.tx->used_idx(), 3) << "buffers returned before their bytes were written";
  // The loop thread still serves other work while the output waits.
  EventFd probe;
  std::atomic<bool> served{false};
  auto w = m.loop.watch_eventfd(probe.fd(), [&](uint64_t) { served = true; });
  probe.signal();
  EXPECT_TRUE(eventually([&] { return served.load(); }));
  // The reader drains: the device finishes on its own (the fd's watch).
  std::string got;
  ASSERT_TRUE(eventually([&] {
    got += out.drain(10ms);
    return got.size() >= want.size();
  }));
  EXPECT_EQ(got, want);
  EXPECT_TRUE(eventually([&] { return m.tx->used_idx() == 3; }));
}

// Output amplification (the hostile guest's): 64 descriptors that all cover the same
// 4 MiB of guest RAM make one 256 MiB chain, and 64 avail entries naming it
// make 16 GiB per notify. The loop serves one budget (64 KiB) of it, then
// another device's ready fd, then more: never the whole chain at once. The
// loop is parked while both become ready, so the order is epoll's.
TEST_P(VirtioConsoleTest, AnAmplifyingChainGetsOneBudgetPerTurnOfTheLoop) {
  UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(null);
  ConsoleMachine m(opts(/*ioeventfds=*/true), null.get());
  m.bring_up();
  for (uint16_t i = 0; i < kQueueSize; ++i)
    m.tx->write_desc(i, kRam, kRamSize, i + 1u < kQueueSize ? 1 : 0, static_cast<uint16_t>(i + 1));
  for (uint16_t i = 0; i < kQueueSize; ++i) m.tx->set_avail_entry(i, 0);
  EventFd other;
  std::atomic<uint64_t> seen{UINT64_MAX};
  auto w = m.loop.watch_eventfd(other.fd(), [&](uint64_t) { seen = m.device->counters().tx_bytes.load(); });
  virtio::test::LoopGate gate(m.loop);
  gate.close();
  m.tx->set_avail_idx(kQueueSize);
  m.notify(VirtioConsole::kTransmitQueue);
  other.signal();
  gate.open();
  m.loop.flush();
  EXPECT_EQ(seen.load(), VirtioConsole::kTxBytesPerDispatch)
      << "the other device ran after exactly one output budget";
  // And the output goes on, a budget per turn.
  const uint64_t before = m.device->counters().tx_bytes;
  m.loop.flush();
  EXPECT_GT(m.device->counters().tx_bytes.load(), before);
  EXPECT_GE(m.device->counters().budget_yields.load(), 1u);
  EXPECT_EQ(m.tx->used_idx(), 0u) << "the 256 MiB chain is still being written";
}

// A trapped notify runs on the vCPU's thread: one budget there, the rest
// on the loop, so the vCPU goes back to the guest at once.
TEST_P(VirtioConsoleTest, ATrappedNotifyWritesOneBudgetAndLeavesTheRestToTheLoop) {
  UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  ConsoleMachine m(opts(/*ioeventfds=*/false), null.get());
  m.bring_up();
  for (uint16_t i = 0; i < kQueueSize; ++i)
    m.tx->write_desc(i, kRam, kRamSize, i + 1u < kQueueSize ? 1 : 0, static_cast<uint16_t>(i + 1));
  m.tx->set_avail_entry(0, 0);
  virtio::test::LoopGate gate(m.loop);
  gate.close();
  m.tx->set_avail_idx(1);
  m.notify(VirtioConsole::kTransmitQueue);  // an MMIO exit: this thread is the vCPU
  EXPECT_EQ(m.device->counters().tx_bytes.load(), VirtioConsole::kTxBytesPerDispatch);
  gate.open();
  m.loop.flush();
  EXPECT_GT(m.device->counters().tx_bytes.load(), VirtioConsole::kTxBytesPerDispatch);
}

// Input: one receive() fills at most a budget of buffers, then asks the
// caller to come back (the space callback) instead of looping on a guest
// that keeps posting.
TEST_P(VirtioConsoleTest, InputTakesOneBudgetOfBuffersPerCallAndAsksToBeCalledAgain) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  m.bring_up(/*rx_buffers=*/kQueueSize, /*rx_size=*/1);
  std::atomic<int> calls{0};
  m.device->set_rx_space_callback([&] { ++calls; });
  const std::string input = pattern(100, 3);
  const size_t taken = m.device->receive({reinterpret_cast<const uint8_t*>(input.data()), input.size()});
  EXPECT_EQ(taken, VirtioConsole::kRxChainsPerDispatch);
  EXPECT_EQ(calls.load(), 1) << "the caller is asked to come back for the rest";
  EXPECT_EQ(m.device->counters().budget_yields.load(), 1u);
  m.device->set_rx_space_callback({});
}

// The stop path against the worst guest: output amplified to 16 GiB per
// notify, no receive buffers ever posted. Console input (Ctrl-A x) is on
// the machine's control loop, not the device loop; it still reaches the
// device (whose lock the flooding loop takes one budget at a time) and is
// still read when the guest reads nothing.
TEST_P(VirtioConsoleTest, CtrlAXStopsWhileTheGuestFloodsOutputAndReadsNoInput) {
  UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  ConsoleMachine m(opts(/*ioeventfds=*/true), null.get());
  m.bring_up(/*rx_buffers=*/0);
  for (uint16_t i = 0; i < kQueueSize; ++i)
    m.tx->write_desc(i, kRam, kRamSize, i + 1u < kQueueSize ? 1 : 0, static_cast<uint16_t>(i + 1));
  for (uint16_t i = 0; i < kQueueSize; ++i) m.tx->set_avail_entry(i, 0);
  m.tx->set_avail_idx(kQueueSize);
  m.notify(VirtioConsole::kTransmitQueue);
  EventLoop control;
  Pipe in;
  std::atomic<int> quits{0};
  vmm::ConsoleInput input(control, in.rd.get(), *m.device, /*escapes=*/true, [&] { ++quits; });
  const std::string typed(2 * vmm::ConsoleInput::kMaxPending, 'k');
  ASSERT_EQ(::write(in.wr.get(), typed.data(), typed.size()), static_cast<ssize_t>(typed.size()));
  ASSERT_EQ(::write(in.wr.get(), "\x01x", 2), 2);
  EXPECT_TRUE(eventually([&] { return quits.load() == 1; }));
  EXPECT_LT(m.device->counters().tx_bytes.load(), uint64_t{16} << 30) << "the flood was still going on";
}

TEST_P(VirtioConsoleTest, OutputToAClosedReaderIsDroppedAndTheGuestGoesOn) {
  Pipe out;
  out.rd = UniqueFd();  // nobody will ever read
  ConsoleMachine m(opts(), out.wr.get());
  m.bring_up();
  m.send({"lost\n"});
  m.send({"also lost\n"});
  EXPECT_EQ(m.tx->used_idx(), 2);
  EXPECT_EQ(m.device->counters().output_dropped, 15u);
  EXPECT_FALSE(m.needs_reset());
}

TEST_P(VirtioConsoleTest, InputFillsGuestBuffersInOrderAndWaitsWhenThereAreNone) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  std::atomic<int> space{0};
  m.device->set_rx_space_callback([&] { ++space; });
  m.bring_up(2, 8);  // two 8-byte buffers
  const std::string input = "0123456789abcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(m.device->receive({reinterpret_cast<const uint8_t*>(input.data()), input.size()}), 16u);
  EXPECT_EQ(m.device->counters().rx_waits, 1u);
  EXPECT_GT(m.irq.take().value_or(0), 0u);
  std::string got;
  while (auto e = m.rx->take_used()) got += m.rx_bytes(*e);
  EXPECT_EQ(got, input.substr(0, 16));
  // No buffers: nothing taken, nothing lost (the caller keeps it).
  EXPECT_EQ(m.device->receive({reinterpret_cast<const uint8_t*>(input.data()) + 16, 4}), 0u);
  EXPECT_EQ(space, 0);
  // The guest posts buffers: the device asks for the rest.
  m.post_rx(4, 64);
  EXPECT_EQ(space, 1);
  EXPECT_EQ(m.device->receive({reinterpret_cast<const uint8_t*>(input.data()) + 16, input.size() - 16}),
            input.size() - 16);
  while (auto e = m.rx->take_used()) got += m.rx_bytes(*e);
  EXPECT_EQ(got, input);
  EXPECT_EQ(m.device->counters().rx_bytes, input.size());
}

TEST_P(VirtioConsoleTest, InputBeforeTheDriverIsReadyWaitsForIt) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  std::atomic<int> space{0};
  m.device->set_rx_space_callback([&] { ++space; });
  const std::string early = "typed during boot";
  EXPECT_EQ(m.device->receive({reinterpret_cast<const uint8_t*>(early.data()), early.size()}), 0u);
  // Buffers posted after DRIVER_OK, each with its notify, as newer Linux does.
  m.bring_up(4, 64, /*fill_after_ok=*/true);
  EXPECT_GE(space, 1);
  EXPECT_EQ(m.device->receive({reinterpret_cast<const uint8_t*>(early.data()), early.size()}),
            early.size());
  auto e = m.rx->take_used();
  ASSERT_TRUE(e);
  EXPECT_EQ(m.rx_bytes(*e), early);
}

// The VMM's path: bytes written to "stdin" reach the guest through
// ConsoleInput (the same object the PL011 is fed by), with queue notifies
// through ioeventfds on the event loop.
TEST_P(VirtioConsoleTest, ConsoleInputFeedsTheReceiveQueueWithoutDrops) {
  Pipe out, in;
  ConsoleMachine m(opts(true), out.wr.get());
  m.bring_up(2, 16);
  vmm::ConsoleInput console(m.loop, in.rd.get(), *m.device, /*escapes=*/true, [] {});
  // Ctrl-A Ctrl-A is one Ctrl-A for the guest; 300 bytes for 2x16 bytes of
  // buffers: the rest waits in kvmmio until the guest posts more.
  std::string typed = "hello \x01\x01 world\n" + pattern(283, 3);
  std::string want = "hello \x01 world\n" + pattern(283, 3);
  ASSERT_EQ(::write(in.wr.get(), typed.data(), typed.size()), static_cast<ssize_t>(typed.size()));
  std::string got;
  auto take = [&] {
    while (auto e = m.rx->take_used()) got += m.rx_bytes(*e);
  };
  ASSERT_TRUE(eventually([&] { return m.rx->used_idx() == 2; }));
  take();
  EXPECT_EQ(got, want.substr(0, 32));
  for (int round = 0; round < 20 && got.size() < want.size(); ++round) {
    m.post_rx(4, 16);
    const uint16_t before = m.rx->used_idx();
    eventually([&] { return m.rx->used_idx() != before; }, 1s);
    take();
  }
  EXPECT_EQ(got, want);
}

// Hostile chains: a guest error (counted in the device or the transport)
// and DEVICE_NEEDS_RESET with a configuration interrupt; nothing crashes,
// nothing reaches the output, and a reset brings the device back.
TEST_P(VirtioConsoleTest, TransmitChainWithWritableBufferNeedsReset) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  m.bring_up();
  m.irq.take();
  ASSERT_TRUE(m.memory.write(kTxBuffers, "secret", 6));
  const Buffer chain[] = {{kTxBuffers, 6, false}, {kTxBuffers + 4096, 16, true}};
  m.tx->add(chain);
  m.tx->publish();
  m.notify(VirtioConsole::kTransmitQueue);
  EXPECT_TRUE(m.needs_reset());
  EXPECT_EQ(m.device->guest_errors(), 1u);
  EXPECT_EQ(m.driver->interrupt() & virtio::interrupt::kConfigChange, virtio::interrupt::kConfigChange);
  EXPECT_EQ(out.drain(50ms), "");
  // Further notifies touch nothing until the driver resets.
  m.send({"ignored"});
  EXPECT_EQ(out.drain(50ms), "");
  // Reset and a fresh bring-up: the device works again.
  m.bring_up();
  EXPECT_FALSE(m.needs_reset());
  m.send({"back\n"});
  EXPECT_EQ(out.drain(), "back\n");
}

TEST_P(VirtioConsoleTest, ReceiveChainWithReadableBufferNeedsReset) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  m.bring_up(0);
  const Buffer chain[] = {{kRxBuffers, 8, false}};
  m.rx->add(chain);
  m.rx->publish();
  m.notify(VirtioConsole::kReceiveQueue);
  const std::string input = "abc";
  EXPECT_EQ(m.device->receive({reinterpret_cast<const uint8_t*>(input.data()), input.size()}), 0u);
  EXPECT_TRUE(m.needs_reset());
  EXPECT_EQ(m.device->guest_errors(), 1u);
  char guest[8] = {};
  m.memory.read(kRxBuffers, guest, sizeof guest);
  EXPECT_EQ(std::string(guest, 3), std::string(3, '\0')) << "input written into a read-only buffer";
  EXPECT_EQ(m.rx->used_idx(), 0);
}

TEST_P(VirtioConsoleTest, BuffersOutsideRamNeedResetAndAreNeverTouched) {
  Pipe out;
  ConsoleMachine m(opts(), out.wr.get());
  m.bring_up(0);
  // TX: a buffer that runs off the end of RAM.
  const Buffer bad_tx[] = {{kRam + kRamSize - 8, 64, false}};
  m.tx->add(bad_tx);
  m.tx->publish();
  m.notify(VirtioConsole::kTransmitQueue);
  EXPECT_TRUE(m.needs_reset());
  EXPECT_EQ(m.transport->counters().guest_errors, 1u);
  EXPECT_EQ(out.drain(50ms), "");

  // RX: a receive buffer far outside RAM, on a fresh device instance.
  m.bring_up(0);
  ASSERT_FALSE(m.needs_reset());
  const Buffer bad_rx[] = {{0x10000000, 64, true}};
  m.rx->add(bad_rx);
  m.rx->publish();
  m.notify(VirtioConsole::kReceiveQueue);
  const std::string input = "xyz";
  EXPECT_EQ(m.device->receive({reinterpret_cast<const uint8_t*>(input.data()), input.size()}), 0u);
  EXPECT_TRUE(m.needs_reset());
  EXPECT_EQ(m.transport->counters().guest_errors, 2u);
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, VirtioConsoleTest,
                         testing::Values(virtio::kVersionModern, virtio::kVersionLegacy),
                         [](const testing::TestParamInfo<uint32_t>& i) {
                           return i.param == virtio::kVersionModern ? std::string("Modern")
                                                                    : std::string("Legacy");
                         });

}  // namespace
}  // namespace kvmmio::console
