// SPDX-License-Identifier: BSD-2-Clause
// TransportHarness: a transport in front of an EchoDevice over real guest
// memory (memfd RAM, no KVM), with the interrupt as a plain eventfd and,
// optionally, fake ioeventfds polled by a real EventLoop. Unit tests drive
// it with MmioDriver and DriverRing exactly as a Linux guest would.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "echo_device.h"
#include "fake_notify_fds.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/token_bucket.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "mmio_driver.h"
#include "wait_limit.h"

namespace kvmmio::virtio::test {

struct TransportHarness {
  static constexpr uint64_t kRam = 0x40000000;
  static constexpr uint64_t kRamSize = 4 << 20;
  static constexpr uint64_t kBase = 0x0a000000;
  static constexpr uint64_t kRing0 = kRam + 0x10000;
  static constexpr uint64_t kRing1 = kRam + 0x20000;
  static constexpr uint64_t kBuffers = kRam + 0x100000;

  struct Config {
    // regs=trap: nothing maps a mirror here, so every register access is
    // the transport's (tests of the mirror ask for it).
    TransportOptions options{.version = kVersionModern, .notify = NotifyMode::kTrap, .regs = RegsMode::kTrap};
    EchoDevice::Options device{};
    bool ioeventfds = false;  // wire FakeNotifyFds + EventLoop
    bool ioeventfds_fail = false;  // ... which refuse every queue (as KVM may)
    bool loop = false;        // an EventLoop even without notify fds (irq=relay)
    RegisterMirror::CacheClean mirror_clean = {};  // regs=mirror: watch the cleans
    TokenBucket::TimeSource clock = {};  // the activation bound's time (ManualClock)
  };

  explicit TransportHarness(Config config) {
    memory.add_ram(kRam, kRamSize);
    device = std::make_unique<EchoDevice>(memory, config.device);
    if (config.ioeventfds || config.loop || config.options.irq == IrqMode::kRelay)
      loop = std::make_unique<EventLoop>();
    notify_fds.set_failing(config.ioeventfds_fail);
    transport = std::make_unique<MmioTransport>(
        *device,
        TransportEnv{.memory = memory,
                     .irq = irq,
                     .base = kBase,
                     .notify_fds = config.ioeventfds ? &notify_fds : nullptr,
                     .loop = loop.get(),
                     .name = "test-virtio",
                     .mirror_clean = config.mirror_clean,
                     .clock = config.clock},
        config.options);
    device->set_interrupt(&transport->interrupt());
    driver = std::make_unique<MmioDriver>(*transport);
  }
  ~TransportHarness() {
    transport.reset();  // before the loop and the device it uses
  }

  // Interrupts raised since the last call (the irqfd's counter).
  uint64_t interrupts() { return irq.take().value_or(0); }
  const TransportCounters& counters() const { return transport->counters(); }
  uint32_t reg(uint32_t offset) { return driver->read(offset); }

  // Probe, negotiate everything offered, set up queue 0 (and 1), DRIVER_OK.
  void bring_up(bool both_queues = true) {
    if (!driver->probe()) throw std::runtime_error("probe failed");
    if (!driver->initialize(~uint64_t{0})) throw std::runtime_error("negotiation failed");
    if (!driver->setup_queue(0, kRing0)) throw std::runtime_error("queue 0 set-up failed");
    if (both_queues && !driver->setup_queue(1, kRing1, 64)) throw std::runtime_error("queue 1 set-up failed");
    driver->driver_ok();
  }

  GuestMemory memory;
  EventFd irq;
  FakeNotifyFds notify_fds;
  std::unique_ptr<EventLoop> loop;
  std::unique_ptr<EchoDevice> device;
  std::unique_ptr<MmioTransport> transport;
  std::unique_ptr<MmioDriver> driver;
};

// Parks an EventLoop inside one of its callbacks until opened, so a test
// can make several fds ready while the loop looks away and know that it
// will find them together, in the order they became ready (epoll's ready
// list): then "what had run when X's callback ran" is deterministic.
class LoopGate {
 public:
  explicit LoopGate(EventLoop& loop)
      : watch_(loop.watch_eventfd(event_.fd(), [this](uint64_t) { park(); })) {}
  ~LoopGate() { open(); }

  // Returns once the loop is parked.
  void close() {
    std::unique_lock lock(mutex_);
    open_ = false;
    parked_ = false;
    event_.signal();
    changed_.wait(lock, [this] { return parked_; });
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }

 private:
  void park() {
    std::unique_lock lock(mutex_);
    parked_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true, parked_ = false;
  EventFd event_;
  EventLoop::Registration watch_;  // last: dropped first
};

// A clock the test moves by hand, for TokenBucket::TimeSource: a rate is
// then checked at exact times, however slowly the host runs the test.
class ManualClock {
 public:
  using Clock = TokenBucket::Clock;
  TokenBucket::TimeSource source() {
    return [this] { return now_; };
  }
  void advance(std::chrono::duration<double> by) { now_ += std::chrono::duration_cast<Clock::duration>(by); }

 private:
  Clock::time_point now_ = Clock::time_point{} + std::chrono::hours(1);
};

// Polls `condition` until true or timeout (for work done on the event loop).
template <typename F>
bool eventually(F condition, std::chrono::milliseconds timeout = ::kvmmio::test::kWaitLimit) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a poll with the deadline above
  }
  return true;
}

}  // namespace kvmmio::virtio::test
