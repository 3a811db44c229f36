// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: a hostile guest against kvmmio's real devices, all on
// one MMIO bus as the VMM puts them: the PL011, a VirtioNet with the
// userspace backend, whose tap is the socketpair stand-in
// (Tap::socketpair(): the target holds the wire end, delivers frames into
// it and drains what the guest sends), and a VirtioConsole writing to a
// small pipe nobody reads unless the input says so, a VirtioRng whose
// rate bound reads a clock only the input moves, and a VirtioVsock without
// its vhost-vsock backend (none on a fuzzing host): its configuration
// space, bring-ups whose activation fails as when vhost cannot start, and
// its event queue; the PL031 RTC on a clock only the input moves, and the
// PL061 GPIO with the power key. The virtio devices sit behind their
// MmioTransport with trapped notifies on a real EventLoop.
//
// The input drives bus accesses of any address, width and direction
// (claimed or not), guest RAM and the rings of the three devices, bring-ups
// with any features in either register layout, frames from the tap, host
// console input into either console device, the entropy device's clock,
// the RTC's clock and alarm, the power key, the host's reset of every
// device (a reboot in place), and loop flushes. The checks: ASan and UBSan; Status and InterruptStatus
// hold only defined bits; virtio-rng never serves more than its burst plus
// its rate over the time the input let pass; virtio-vsock's configuration
// space reads its CID whatever the guest wrote there, and every write is a
// counted guest error; the PL031's and PL061's interrupt lines are high
// exactly when their masked status is non-zero, and the RTC's alarm is
// never asked for in the past; and, run by scripts/fuzz.sh
// with -rss_limit_mb and -timeout, no input may make kvmmio's memory or
// time per input grow without bound.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "../tests/virtio/mmio_driver.h"
#include "fuzz_input.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/console/pl011.h"
#include "kvmmio/console/virtio_console.h"
#include "kvmmio/gpio/pl061.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/mmio_bus.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/net/tap.h"
#include "kvmmio/net/virtio_net.h"
#include "kvmmio/rng/virtio_rng.h"
#include "kvmmio/rtc/pl031.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "kvmmio/vsock/virtio_vsock.h"

namespace kvmmio {
namespace {

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRamSize = 1 << 20;
constexpr uint64_t kUart = 0x09000000;
constexpr uint64_t kRtc = 0x09010000;
constexpr uint64_t kGpio = 0x09030000;
constexpr unsigned kPowerKeyPin = 3;
constexpr uint64_t kNet = 0x0a000000;
constexpr uint64_t kConsole = 0x0a000200;
constexpr uint64_t kRng = 0x0a000400;
constexpr uint64_t kVsock = 0x0a000600;
constexpr uint32_t kVsockCid = 0x12345678;
// Ring memory per queue (net RX, TX, ctrl; console RX, TX; rng): 16 KiB
// each, room for 256 entries in Linux's layout.
constexpr uint64_t kRings = kRam + 0x10000;
constexpr uint64_t kRingStride = 0x4000;
constexpr unsigned kNetQueues = 3, kQueues = 6, kRngRing = 5;
// The entropy device's bound, small enough for inputs to reach it.
constexpr uint64_t kRngRate = 1 << 20, kRngBurst = 4096;
constexpr uint64_t kBuffers = kRam + 0x40000;

int g_report_fd = 2;

[[noreturn]] void violated(const char* what) {
  dprintf(g_report_fd, "fuzz invariant violated: %s\n", what);
  std::abort();
}

using fuzz::Input;

enum Op : uint8_t {
  kBusAccess,       // any address near a device (or none), width 1-8, read or write
  kRegisterWrite,   // 32-bit write to a virtio register of either device
  kWriteRam,        // bytes into guest RAM
  kWriteDescriptor, // a descriptor of one of the six rings
  kExposeHead,      // an avail entry of one ring, then move its idx
  kNotify,          // QueueNotify of one device
  kBringUpNet,      // Linux's virtio_net probe with fuzzed features
  kBringUpConsole,  // Linux's virtio_console probe
  kTapFrame,        // the tap delivers a frame into the net device
  kDrainWire,       // read what the guest sent out of the tap
  kHostInput,       // host console input into the PL011 or virtio-console
  kDrainOutput,     // the console output's reader reads
  kFlush,           // the event loop serves what is ready
  kBringUpRng,      // Linux's virtio_rng probe
  kRngClock,        // the rng's clock moves on (up to 65 ms)
  kBringUpVsock,    // Linux's virtio_vsock probe (activation fails: no vhost)
  kVsockConfig,     // an access of any width to the vsock's configuration window
  kRtcClock,        // the RTC's clock moves on (up to 18 h), its alarm served when due
  kPowerKey,        // the host presses or releases the power key (PL061 pin 3)
  kHostReset,       // a reboot in place: every device reset by the host
  kOpCount,
};

struct Machine {
  explicit Machine(uint8_t setup) {
    memory.add_ram(kRam, kRamSize);
    uart = std::make_unique<console::Pl011>([this](uint8_t) { ++uart_tx; }, [](bool) {});
    bus.claim(kUart, 0x1000, *uart, "uart");
    rtc = std::make_unique<rtc::Pl031>(
        [this](bool level) { rtc_rises += level && !rtc_line; rtc_line = level; },
        [this](std::optional<int64_t> at) {
          if (at && *at < rtc_seconds) violated("the PL031 asked for an alarm in the past");
          rtc_alarm = at;
        },
        [this] { return rtc_seconds; });
    bus.claim(kRtc, rtc::Pl031::kSize, *rtc, "rtc");
    gpio = std::make_unique<gpio::Pl061>([this](bool level) { gpio_rises += level && !gpio_line; gpio_line = level; });
    bus.claim(kGpio, gpio::Pl061::kSize, *gpio, "gpio");

    net::NetOptions o;
    o.tap = "fuzz";
    o.vhost = net::VhostMode::kOff;
    o.queue_pairs = 2;
    o.transport.version = setup & 1 ? virtio::kVersionLegacy : virtio::kVersionModern;
    o.transport.notify = virtio::NotifyMode::kTrap;
    o.mtu = setup & 4 ? 1500 : 0;
    net = std::make_unique<net::VirtioNet>(o, memory, loop, net::Tap::socketpair("fuzz", 2, wire));
    net_transport = std::make_unique<virtio::MmioTransport>(
        *net, virtio::TransportEnv{.memory = memory, .irq = net_irq, .base = kNet, .loop = &loop, .name = "fuzz-net"},
        o.transport);
    bus.claim(kNet, virtio::MmioTransport::window_size(), *net_transport, "net");

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) violated("pipe2");
    out_rd = UniqueFd(fds[0]);
    out_wr = UniqueFd(fds[1]);
    ::fcntl(out_wr.get(), F_SETPIPE_SZ, 4096);
    con = std::make_unique<console::VirtioConsole>(memory, loop, out_wr.get());
    virtio::TransportOptions c;
    c.version = setup & 2 ? virtio::kVersionLegacy : virtio::kVersionModern;
    c.notify = virtio::NotifyMode::kTrap;
    c.regs = virtio::RegsMode::kTrap;  // the net transport has the mirror (the default), this one not
    con_transport = std::make_unique<virtio::MmioTransport>(
        *con, virtio::TransportEnv{.memory = memory, .irq = con_irq, .base = kConsole, .loop = &loop, .name = "fuzz-console"},
        c);
    bus.claim(kConsole, virtio::MmioTransport::window_size(), *con_transport, "console");

    rng_dev = std::make_unique<rng::VirtioRng>(
        memory, loop,
        rng::RngOptions{.bytes_per_second = kRngRate,
                        .burst_bytes = kRngBurst,
                        .clock = [this] { return kClockStart + std::chrono::microseconds(rng_clock_us.load()); }});
    virtio::TransportOptions r;
    r.version = setup & 8 ? virtio::kVersionLegacy : virtio::kVersionModern;
    r.notify = virtio::NotifyMode::kTrap;
    r.regs = virtio::RegsMode::kTrap;
    rng_transport = std::make_unique<virtio::MmioTransport>(
        *rng_dev, virtio::TransportEnv{.memory = memory, .irq = rng_irq, .base = kRng, .loop = &loop, .name = "fuzz-rng"},
        r);
    bus.claim(kRng, virtio::MmioTransport::window_size(), *rng_transport, "rng");

    // setup bit 4: a vhost-vsock that offers SEQPACKET; bit 5: legacy layout.
    vsock_dev = std::make_unique<vsock::VirtioVsock>(
        vsock::VsockOptions{.cid = kVsockCid}, memory, loop,
        setup & 16 ? virtio::feature::bit(vsock::spec::kFSeqpacket) : 0);
    virtio::TransportOptions v;
    v.version = setup & 32 ? virtio::kVersionLegacy : virtio::kVersionModern;
    v.notify = virtio::NotifyMode::kTrap;
    v.regs = virtio::RegsMode::kTrap;
    vsock_transport = std::make_unique<virtio::MmioTransport>(
        *vsock_dev,
        virtio::TransportEnv{.memory = memory, .irq = vsock_irq, .base = kVsock, .loop = &loop, .name = "fuzz-vsock"},
        v);
    bus.claim(kVsock, virtio::MmioTransport::window_size(), *vsock_transport, "vsock");
    net_driver = std::make_unique<virtio::test::MmioDriver>(*net_transport);
    con_driver = std::make_unique<virtio::test::MmioDriver>(*con_transport);
    rng_driver = std::make_unique<virtio::test::MmioDriver>(*rng_transport);
    vsock_driver = std::make_unique<virtio::test::MmioDriver>(*vsock_transport);
  }
  ~Machine() {
    net_transport.reset();  // devices reset, watches gone, before the loop
    con_transport.reset();
    rng_transport.reset();
    vsock_transport.reset();
  }

  // What Machine::reset_devices() does for a reboot in place.
  void host_reset() {
    uart->reset();
    gpio->reset();
    rtc->reset();
    for (auto* t : {net_transport.get(), con_transport.get(), rng_transport.get(), vsock_transport.get()}) t->reset();
  }

  uint32_t read32(uint64_t addr) {
    uint8_t b[4] = {};
    bus.read(addr, {b, 4});
    uint32_t v;
    std::memcpy(&v, b, 4);
    return v;
  }

  void check() {
    // The lines are levels, reported on change: high exactly while a
    // masked interrupt is pending.
    if (rtc_line != (read32(kRtc + rtc::Pl031::kMIS) != 0)) violated("the PL031's line disagrees with RTCMIS");
    if (gpio_line != (read32(kGpio + gpio::Pl061::kMIS) != 0)) violated("the PL061's line disagrees with GPIOMIS");
    for (auto* t : {net_transport.get(), con_transport.get(), rng_transport.get(), vsock_transport.get()}) {
      if (t->device_status() & ~0xcfu) violated("Status holds undefined bits");
    }
    for (auto* d : {net_driver.get(), con_driver.get(), rng_driver.get(), vsock_driver.get()})
      if (d->read(virtio::reg::kInterruptStatus) & ~virtio::interrupt::kAll)
        violated("InterruptStatus holds undefined bits");
    // The bucket starts full: the burst, then the rate over the input's time.
    if (rng_dev->counters().bytes_served > kRngBurst + kRngRate * rng_clock_us.load() / 1000000 + 1)
      violated("virtio-rng served more than its rate bound allows");
    // The guest's CID, le64, whatever the guest wrote (transport register
    // reads, as the guest's 32-bit reads are; config writes are the
    // device's guest errors).
    uint8_t cid[8];
    vsock_transport->mmio_read(0x100, {cid, 4});
    vsock_transport->mmio_read(0x104, {cid + 4, 4});
    uint64_t value = 0;
    std::memcpy(&value, cid, sizeof value);
    if (value != kVsockCid) violated("virtio-vsock's configuration space does not read its CID");
    if (vsock_dev->guest_errors() < vsock_dev->counters().config_writes)
      violated("a vsock config write was not counted as a guest error");
  }

  // The rng's time source: read on the loop thread too.
  static constexpr TokenBucket::Clock::time_point kClockStart = TokenBucket::Clock::time_point{} + std::chrono::hours(1);
  std::atomic<uint64_t> rng_clock_us{0};
  // The RTC's clock (seconds since the epoch) and the alarm it asked for.
  int64_t rtc_seconds = 1'700'000'000;
  std::optional<int64_t> rtc_alarm;
  bool rtc_line = false, gpio_line = false;
  uint64_t rtc_rises = 0, gpio_rises = 0;

  GuestMemory memory;
  MmioBus bus;
  EventLoop loop;
  EventFd net_irq, con_irq, rng_irq, vsock_irq;
  std::vector<UniqueFd> wire;
  UniqueFd out_rd, out_wr;
  uint64_t uart_tx = 0;
  uint32_t ring_size[kQueues] = {256, 256, 256, 256, 256, 256};  // as last set up
  std::unique_ptr<console::Pl011> uart;
  std::unique_ptr<rtc::Pl031> rtc;
  std::unique_ptr<gpio::Pl061> gpio;
  std::unique_ptr<net::VirtioNet> net;
  std::unique_ptr<virtio::MmioTransport> net_transport;
  std::unique_ptr<console::VirtioConsole> con;
  std::unique_ptr<virtio::MmioTransport> con_transport;
  std::unique_ptr<rng::VirtioRng> rng_dev;
  std::unique_ptr<virtio::MmioTransport> rng_transport;
  std::unique_ptr<vsock::VirtioVsock> vsock_dev;
  std::unique_ptr<virtio::MmioTransport> vsock_transport;
  std::unique_ptr<virtio::test::MmioDriver> net_driver, con_driver, rng_driver, vsock_driver;
};

uint64_t ring_base(unsigned ring) { return kRings + kRingStride * (ring % kQueues); }

void run(const uint8_t* data, size_t size) {
  Input in(data, size);
  Machine m(in.u8());
  std::vector<uint8_t> buf(70 * 1024);
  for (int steps = 0; !in.done() && steps < 2048; ++steps) {
    switch (in.u8() % kOpCount) {
      case kBusAccess: {
        static constexpr uint64_t kNear[] = {kUart, kNet, kConsole, 0x0b000000, kRng, kVsock, kRtc, kGpio};
        const uint64_t near = kNear[in.u8() % std::size(kNear)];
        const uint64_t addr = near + in.u16() % 0x1100;
        const size_t width = size_t{1} << (in.u8() % 4);
        uint8_t bytes[8];
        const uint64_t value = in.u64();
        std::memcpy(bytes, &value, sizeof bytes);
        if (in.u8() & 1) m.bus.write(addr, {bytes, width});
        else m.bus.read(addr, {bytes, width});
        break;
      }
      case kRegisterWrite: {
        const uint8_t which = in.u8();
        auto& d = (which & 12) == 12 ? *m.vsock_driver
                  : which & 1        ? *m.con_driver
                  : which & 2        ? *m.rng_driver
                                     : *m.net_driver;
        const uint32_t offset = (in.u8() % 0x40) * 4;
        d.write(offset, in.u32());
        break;
      }
      case kWriteRam: {
        const uint64_t gpa = kRam + in.u32() % kRamSize;
        uint8_t bytes[16];
        const size_t len = in.u8() % sizeof bytes;
        for (size_t i = 0; i < len; ++i) bytes[i] = in.u8();
        m.memory.write(gpa, bytes, len);
        break;
      }
      case kWriteDescriptor: {
        const uint64_t table = ring_base(in.u8());
        const uint16_t index = in.u8();
        const uint8_t where = in.u8();
        // Mostly buffers in RAM, repeated or overlapping; sometimes anywhere.
        const uint64_t addr = where < 230 ? kBuffers + in.u16() * 8u : in.u64();
        const uint32_t len = where & 1 ? in.u32() % (kRamSize + 1) : in.u16();
        const uint64_t at = table + 16ull * index;
        m.memory.store(at, addr);
        m.memory.store(at + 8, len);
        m.memory.store<uint16_t>(at + 12, in.u8() & 7);
        m.memory.store<uint16_t>(at + 14, in.u8());
        break;
      }
      case kExposeHead: {
        // The avail ring in Linux's layout for the size the ring was set
        // up with (256 before any bring-up).
        const unsigned ring = in.u8() % kQueues;
        const uint32_t size = m.ring_size[ring];
        const uint64_t avail = ring_base(ring) + 16ull * size;
        const uint16_t idx = m.memory.load<uint16_t>(avail + 2).value_or(0);
        const uint8_t count = 1 + in.u8() % 64;
        const uint16_t head = in.u8();
        for (uint8_t i = 0; i < count; ++i)
          m.memory.store<uint16_t>(avail + 4 + 2 * ((idx + i) % size), head);
        m.memory.store<uint16_t>(avail + 2, static_cast<uint16_t>(idx + count));
        break;
      }
      case kNotify: {
        const uint8_t which = in.u8();
        if ((which & 12) == 12) m.vsock_driver->notify(in.u8() % 4);  // 3: no such queue
        else if (which & 1) m.con_driver->notify(in.u8() % 3);
        else if (which & 2) m.rng_driver->notify(in.u8() % 2);
        else m.net_driver->notify(in.u8() % (kNetQueues + 2));
        break;
      }
      case kBringUpNet: {
        auto& d = *m.net_driver;
        const uint64_t features = in.u64() | (d.version() == virtio::kVersionModern ? virtio::feature::bit(virtio::feature::kVersion1) : 0);
        if (d.probe() && d.initialize(features)) {
          for (unsigned q = 0; q < kNetQueues; ++q) {
            const uint32_t sizes[] = {256, 64, 16, 1};
            m.ring_size[q] = sizes[in.u8() % 4];
            d.setup_queue(q == 2 ? 4 : q, ring_base(q), m.ring_size[q]);
          }
          d.driver_ok();
        }
        break;
      }
      case kBringUpConsole: {
        auto& d = *m.con_driver;
        if (d.probe() && d.initialize(in.u64() | virtio::feature::bit(virtio::feature::kVersion1))) {
          m.ring_size[3] = 128;
          m.ring_size[4] = 1u << (in.u8() % 8);
          d.setup_queue(0, ring_base(3), m.ring_size[3]);
          d.setup_queue(1, ring_base(4), m.ring_size[4]);
          d.driver_ok();
        }
        break;
      }
      case kTapFrame: {
        const size_t len = in.u8() & 1 ? in.u16() + 4 * 1024u : in.u8();
        const uint8_t seed = in.u8();
        for (size_t i = 0; i < len && i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(seed + i);
        (void)::send(m.wire[in.u8() & 1].get(), buf.data(), std::min(len, buf.size()), MSG_DONTWAIT);
        break;
      }
      case kDrainWire:
        for (auto& w : m.wire)
          while (::recv(w.get(), buf.data(), buf.size(), MSG_DONTWAIT) > 0) {}
        break;
      case kHostInput: {
        uint8_t bytes[64];
        const size_t len = in.u8() % sizeof bytes;
        for (size_t i = 0; i < len; ++i) bytes[i] = in.u8();
        if (in.u8() & 1) m.con->receive({bytes, len});
        else m.uart->receive({bytes, len});
        break;
      }
      case kDrainOutput:
        while (::read(m.out_rd.get(), buf.data(), buf.size()) > 0) {}
        break;
      case kFlush: m.loop.flush(); break;
      case kBringUpRng: {
        auto& d = *m.rng_driver;
        if (d.probe() && d.initialize(in.u64() | virtio::feature::bit(virtio::feature::kVersion1))) {
          m.ring_size[kRngRing] = 1u << (in.u8() % 7);  // 1 to 64, the device's maximum
          d.setup_queue(rng::VirtioRng::kRequestQueue, ring_base(kRngRing), m.ring_size[kRngRing]);
          d.driver_ok();
        }
        break;
      }
      case kRngClock: m.rng_clock_us += in.u16(); break;
      case kBringUpVsock: {
        auto& d = *m.vsock_driver;
        if (d.probe() && d.initialize(in.u64() | virtio::feature::bit(virtio::feature::kVersion1))) {
          // rx, tx and event, on the net's ring memory (the device never
          // processes the data queues itself; the event queue it holds).
          for (uint32_t q = 0; q < vsock::spec::kNumQueues; ++q)
            d.setup_queue(q, ring_base(q), 1u << (in.u8() % 5));
          d.driver_ok();
        }
        break;
      }
      case kVsockConfig: {
        const uint64_t offset = 0x100 + in.u8() % 16;  // the 8-byte field and past it
        const size_t width = size_t{1} << (in.u8() % 4);
        uint8_t bytes[8];
        const uint64_t value = in.u64();
        std::memcpy(bytes, &value, sizeof bytes);
        if (in.u8() & 1) m.vsock_transport->mmio_write(offset, {bytes, width});
        else m.vsock_transport->mmio_read(offset, {bytes, width});
        break;
      }
      case kRtcClock: {
        m.rtc_seconds += in.u16();
        if (m.rtc_alarm && *m.rtc_alarm <= m.rtc_seconds) {
          m.rtc_alarm.reset();  // one-shot: the device asks again if it wants another
          m.rtc->alarm_due();
        }
        break;
      }
      case kPowerKey: m.gpio->set_input(kPowerKeyPin, in.u8() & 1); break;
      case kHostReset: m.host_reset(); break;
    }
    m.check();
  }
  m.loop.flush();
  if (std::getenv("KVMMIO_FUZZ_TRACE")) {
    const auto& n = m.net->counters();
    const auto& c = m.con->counters();
    const auto& r = m.rng_dev->counters();
    dprintf(g_report_fd,
            "net: status 0x%x tx %llu rx %llu dropped %llu yields %llu guest errors %llu+%llu; "
            "console: status 0x%x tx_bytes %llu stalls %llu yields %llu; uart tx %llu; unclaimed %llu; "
            "rng: status 0x%x bytes %llu requests %llu throttled %llu refused %llu; "
            "vsock: status 0x%x config writes %llu event notifies %llu guest errors %llu+%llu; "
            "rtc: line rose %llu times; gpio: line rose %llu times\n",
            m.net_transport->device_status(), (unsigned long long)n.tx_packets.load(),
            (unsigned long long)n.rx_packets.load(), (unsigned long long)n.rx_dropped.load(),
            (unsigned long long)n.budget_yields.load(), (unsigned long long)m.net_transport->counters().guest_errors.load(),
            (unsigned long long)m.net->guest_errors(), m.con_transport->device_status(),
            (unsigned long long)c.tx_bytes.load(), (unsigned long long)c.tx_stalls.load(),
            (unsigned long long)c.budget_yields.load(), (unsigned long long)m.uart_tx,
            (unsigned long long)m.bus.unclaimed_accesses(), m.rng_transport->device_status(),
            (unsigned long long)r.bytes_served.load(), (unsigned long long)r.requests.load(),
            (unsigned long long)r.throttled.load(), (unsigned long long)r.refused.load(),
            m.vsock_transport->device_status(), (unsigned long long)m.vsock_dev->counters().config_writes.load(),
            (unsigned long long)m.vsock_dev->counters().event_notifies.load(),
            (unsigned long long)m.vsock_transport->counters().guest_errors.load(),
            (unsigned long long)m.vsock_dev->guest_errors(), (unsigned long long)m.rtc_rises,
            (unsigned long long)m.gpio_rises);
  }
}

}  // namespace
}  // namespace kvmmio

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kvmmio::g_report_fd = ::dup(2);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvmmio::run(data, size);
  return 0;
}
