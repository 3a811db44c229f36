// SPDX-License-Identifier: BSD-2-Clause
// BlockMachine: a VirtioBlock behind the virtio-mmio transport on real memfd
// guest RAM (no KVM), an image file in a temporary directory, and a driver
// that builds request chains as Linux's virtio_blk does (header, data,
// status: one descriptor each) or any way a hostile guest likes. With
// several request queues (BlockDeviceOptions::queues, or DiskOptions's),
// every queue gets a ring of its own; the helpers take a queue index,
// queue 0 when none is given.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../virtio/driver_ring.h"
#include "../virtio/harness.h"
#include "../virtio/mmio_driver.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/block/disk_image.h"
#include "kvmmio/block/virtio_blk.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::block::test {

using virtio::test::Buffer;

// A temporary directory, removed with what is in it.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/kvmmio-blk-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
    path = tmpl;
  }
  ~TempDir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
  // A file of `size` bytes filled with a pattern (byte i is i * 7 + 3).
  std::string image(const std::string& name, uint64_t size) const {
    const std::string p = path + "/" + name;
    std::vector<uint8_t> bytes(size);
    for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
    const int fd = ::open(p.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(size))
      throw std::runtime_error("cannot write " + p);
    ::close(fd);
    return p;
  }
  std::string path;
};

inline std::vector<uint8_t> file_bytes(const std::string& path, uint64_t offset, size_t len) {
  std::vector<uint8_t> out(len);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::pread(fd, out.data(), len, static_cast<off_t>(offset)) != static_cast<ssize_t>(len))
    throw std::runtime_error("cannot read " + path);
  ::close(fd);
  return out;
}

// Holds an engine's thread in a hook (e.g. BlockDeviceOptions::before_io)
// until release(): I/O made slow for as long as a test needs, no longer.
// Declare it before the machine and keep a releaser() after it, so a
// failed assertion lets the thread go before the machine joins it.
struct Latch {
  void hold() {
    std::unique_lock lock(mutex);
    ++arrived;
    changed.notify_all();
    changed.wait(lock, [this] { return released; });
  }
  bool wait_arrived(unsigned n = 1) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(30), [&] { return arrived >= n; });
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
  struct Releaser {
    Latch& latch;
    ~Releaser() { latch.release(); }
  };
  [[nodiscard]] Releaser releaser() { return Releaser{*this}; }

  std::mutex mutex;
  std::condition_variable changed;
  unsigned arrived = 0;
  bool released = false;
};

// Options whose engines hold every request on `latch` just before its I/O.
inline BlockDeviceOptions hold_io(Latch& latch) {
  BlockDeviceOptions o;
  o.before_io = [&latch](const BlockRequest&) { latch.hold(); };
  return o;
}

struct BlockMachine {
  static constexpr uint64_t kRam = 0x40000000;
  static constexpr uint64_t kRamSize = 8 << 20;
  static constexpr uint64_t kBase = 0x0a000000;
  static constexpr uint64_t kRing = kRam + 0x10000;   // queue q's ring at kRing + q * kRingStride
  static constexpr uint64_t kRingStride = 0x4000;      // a 256-entry ring, Linux's layout
  static constexpr uint64_t kHeaders = kRam + 0x100000;  // 16 bytes per request slot
  static constexpr uint64_t kStatus = kRam + 0x180000;   // 1 byte per request slot
  static constexpr uint64_t kData = kRam + 0x200000;     // the rest

  explicit BlockMachine(const DiskOptions& options, BlockDeviceOptions device_options = {}) {
    memory.add_ram(kRam, kRamSize);
    if (device_options.serial.empty()) device_options.serial = options.serial;
    if (device_options.engine == EngineChoice::kDefault) device_options.engine = options.engine;
    if (device_options.queues == 1 && options.queues) device_options.queues = *options.queues;
    device = std::make_unique<VirtioBlock>(memory, loop, DiskImage::open(options), std::move(device_options));
    virtio::TransportOptions t;
    t.regs = virtio::RegsMode::kTrap;  // no mirror mapped: the transport answers every register
    t.notify = virtio::NotifyMode::kIoEventFd;  // the ioeventfd path, polled by the loop
    transport = std::make_unique<virtio::MmioTransport>(
        *device,
        virtio::TransportEnv{.memory = memory, .irq = irq, .base = kBase, .notify_fds = &notify_fds,
                             .loop = &loop, .name = "blk-test"},
        t);
    driver = std::make_unique<virtio::test::MmioDriver>(*transport);
  }
  ~BlockMachine() { transport.reset(); }

  // Negotiates every feature offered and sets up `queues` queues (all the
  // device has when 0), as Linux does when it uses that many.
  uint64_t bring_up(uint32_t queue_size = 128, uint32_t queues = 0) {
    if (!driver->probe() || driver->device_id() != VirtioBlock::kDeviceId) throw std::runtime_error("probe");
    const auto f = driver->initialize(~uint64_t{0});
    if (!f) throw std::runtime_error("negotiation");
    rings.clear();
    const uint32_t n = queues ? queues : device->num_queues();
    for (uint32_t q = 0; q < n; ++q) {
      const auto layout = driver->setup_queue(q, kRing + q * kRingStride, queue_size);
      if (!layout) throw std::runtime_error("queue set-up");
      rings.push_back(std::make_unique<virtio::test::DriverRing>(memory, *layout));
    }
    ring = rings.front().get();
    driver->driver_ok();
    return *f;
  }

  // Submits one chain and notifies through the queue's ioeventfd.
  void submit(const std::vector<Buffer>& chain, uint32_t queue = 0) {
    rings.at(queue)->add(chain);
    rings[queue]->publish();
    if (!notify_fds.guest_notify(queue)) throw std::runtime_error("notify");
  }

  // A request as Linux frames it: header, data (if any), status, on
  // `queue`. `slot` picks where its header, status and data go in guest
  // RAM (requests in flight at once need slots of their own, whatever
  // their queues).
  void request(unsigned slot, uint32_t type, uint64_t sector, uint32_t data_len, bool data_writable,
               uint32_t queue = 0) {
    const uint64_t header = kHeaders + slot * 16;
    const spec::RequestHeader h{type, 0, sector};
    memory.write(header, &h, sizeof h);
    const uint8_t poison = 0xee;
    memory.write(kStatus + slot, &poison, 1);
    std::vector<Buffer> chain{{header, 16, false}};
    if (data_len) chain.push_back({data_at(slot), data_len, data_writable});
    chain.push_back({kStatus + slot, 1, true});
    submit(chain, queue);
  }
  static uint64_t data_at(unsigned slot) { return kData + uint64_t{slot} * 0x10000; }

  // Waits for the next used element of `queue`.
  std::optional<virtio::test::UsedElem> used(uint32_t queue = 0) {
    std::optional<virtio::test::UsedElem> e;
    virtio::test::eventually([&] { return (e = rings.at(queue)->take_used()).has_value(); });
    return e;
  }
  uint8_t status(unsigned slot) {
    uint8_t s = 0;
    memory.read(kStatus + slot, &s, 1);
    return s;
  }
  std::vector<uint8_t> guest(uint64_t gpa, size_t len) {
    std::vector<uint8_t> out(len);
    memory.read(gpa, out.data(), len);
    return out;
  }

  GuestMemory memory;
  EventFd irq;
  EventLoop loop;
  virtio::test::FakeNotifyFds notify_fds;
  std::unique_ptr<VirtioBlock> device;
  std::unique_ptr<virtio::MmioTransport> transport;
  std::unique_ptr<virtio::test::MmioDriver> driver;
  std::vector<std::unique_ptr<virtio::test::DriverRing>> rings;  // one per queue set up
  virtio::test::DriverRing* ring = nullptr;                      // queue 0's
};

}  // namespace kvmmio::block::test
