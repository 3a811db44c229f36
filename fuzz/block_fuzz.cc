// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: a hostile guest against VirtioBlock behind its
// MmioTransport (trapped notifies, no KVM), on a small image file.
//
// The input drives register writes, guest RAM, descriptors of any shape
// (any addresses, lengths, directions, indirect tables), request headers
// of any type and sector, notifies, waits for the I/O engines (io_uring or
// threads, chosen by the input), and resets with requests in flight (the
// driver's, and the host's for a reboot in place), on
// one request queue or, as the input chooses, 2 to 4 (VIRTIO_BLK_F_MQ: a
// ring, an engine and a bound each; the input picks the queue each
// descriptor, avail entry and notify goes to, and how many queues the
// driver sets up). The checks, besides ASan and UBSan:
//  - the image never grows: no request reaches past its end;
//  - the device never writes guest RAM outside the buffers it was given
//    (a guard area no descriptor may point at keeps its pattern; indirect
//    descriptors are never negotiated, as a table could name the guard);
//  - Status holds only defined bits.
// Run by scripts/fuzz.sh with -rss_limit_mb and -timeout, as the others.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../tests/virtio/driver_ring.h"
#include "../tests/virtio/mmio_driver.h"
#include "fuzz_input.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/base/log.h"
#include "kvmmio/block/disk_image.h"
#include "kvmmio/block/virtio_blk.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::block {
namespace {

constexpr uint64_t kRam = 0x40000000;
constexpr uint64_t kRamSize = 256 << 10;
constexpr uint64_t kRing = kRam + 0x1000;  // queue 0: 256 entries, Linux's layout: < 0x3000
// Queues 1-3: 16 entries each, Linux's layout, at 0x3000, 0x5000, 0x7000
// (each used ring on the next page: < 0x9000).
constexpr uint64_t kSmallRings = kRam + 0x3000;
constexpr uint64_t kSmallRingStride = 0x2000;
constexpr uint32_t kSmallRingSize = 16;
constexpr uint64_t kBuffers = kRam + 0x9000;
constexpr uint64_t kGuard = kRam + 0x30000;  // up to the end of RAM: never given to the device
constexpr uint64_t kGuardSize = kRamSize - 0x30000;
constexpr uint64_t kBase = 0x0a000000;
constexpr uint64_t kImageSize = 64 << 10;
constexpr uint8_t kGuardByte = 0xa5;

int g_report_fd = 2;
std::string g_image;

[[noreturn]] void violated(const char* what) {
  dprintf(g_report_fd, "fuzz invariant violated: %s\n", what);
  std::abort();
}

enum Op : uint8_t {
  kWriteRegister,   // a 32-bit register write
  kWriteRam,        // bytes into the buffer area
  kHeader,          // a request header in the buffer area
  kWriteDescriptor, // one descriptor of the table (never into the guard)
  kExposeHead,      // an avail entry, then the idx moves
  kNotify,
  kWaitIdle,        // until the worker has completed everything
  kBringUp,
  kReset,           // status 0, maybe with requests in flight
  kHostReset,       // the host's reset (a reboot in place), from another thread than the driver's
  kOpCount,
};

uint64_t buffer_address(fuzz::Input& in) { return kBuffers + in.u16() % (kGuard - kBuffers); }

void wait_idle(const VirtioBlock& device) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (device.requests_in_flight() != 0) {
    if (std::chrono::steady_clock::now() > end) violated("requests never completed");
    std::this_thread::yield();
  }
}

uint64_t ring_base(unsigned queue) { return queue == 0 ? kRing : kSmallRings + (queue - 1) * kSmallRingStride; }
uint32_t ring_size(unsigned queue) { return queue == 0 ? 256 : kSmallRingSize; }

void run(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  GuestMemory memory;
  memory.add_ram(kRam, kRamSize);
  std::vector<uint8_t> guard(kGuardSize, kGuardByte);
  memory.write(kGuard, guard.data(), guard.size());
  const uint8_t flags = in.u8();
  DiskOptions options;
  options.path = g_image;
  options.read_only = flags & 1;
  EventLoop loop;
  EventFd irq;
  // Both engines: the first byte's bit 2 (4) picks threads, else io_uring
  // (explicitly: a ring that cannot be set up stops the run). Bits 3-4:
  // 0 is one queue (the input then reads as it always did), 1-3 are 2-4
  // queues.
  const unsigned queues = 1 + ((flags >> 3) & 3);
  auto device = std::make_unique<VirtioBlock>(
      memory, loop, DiskImage::open(options),
      BlockDeviceOptions{.serial = "fuzz",
                         .queues = queues,
                         .engine = flags & 4 ? EngineChoice::kThreads : EngineChoice::kIoUring});
  // With several queues each op that names a ring reads which one first.
  auto pick_queue = [&in, queues] { return queues > 1 ? in.u8() % queues : 0u; };
  virtio::TransportOptions t;
  t.notify = virtio::NotifyMode::kTrap;
  t.regs = virtio::RegsMode::kTrap;
  auto transport = std::make_unique<virtio::MmioTransport>(
      *device, virtio::TransportEnv{.memory = memory, .irq = irq, .base = kBase, .loop = &loop, .name = "fuzz"}, t);
  virtio::test::MmioDriver driver(*transport);
  // Raw access to the rings' memory, where a hostile driver writes.
  std::vector<std::unique_ptr<virtio::test::DriverRing>> rings;
  for (unsigned q = 0; q < queues; ++q)
    rings.push_back(std::make_unique<virtio::test::DriverRing>(
        memory, virtio::test::DriverRing::linux_layout(ring_base(q), ring_size(q))));

  for (int steps = 0; !in.done() && steps < 2048; ++steps) {
    switch (in.u8() % kOpCount) {
      case kWriteRegister: {
        // Never DriverFeatures: INDIRECT_DESC stays off (below), so every
        // buffer the device gets is a descriptor of the table.
        const uint32_t offset = (in.u8() % 0x40) * 4;
        const uint32_t value = in.u32();
        if (offset != virtio::reg::kDriverFeatures) driver.write(offset, value);
        break;
      }
      case kWriteRam: {
        const uint64_t gpa = buffer_address(in);
        uint8_t bytes[16];
        const size_t len = std::min<uint64_t>(in.u8() % sizeof bytes, kGuard - gpa);
        for (size_t i = 0; i < len; ++i) bytes[i] = in.u8();
        memory.write(gpa, bytes, len);
        break;
      }
      case kHeader: {
        const uint64_t gpa = std::min(buffer_address(in), kGuard - 16);
        const uint32_t types[] = {spec::kTIn, spec::kTOut, spec::kTFlush, spec::kTGetId,
                                  spec::kTDiscard, spec::kTWriteZeroes, in.u32()};
        const spec::RequestHeader h{types[in.u8() % 7], 0, in.u8() & 1 ? in.u64() : in.u8()};
        memory.write(gpa, &h, sizeof h);
        break;
      }
      case kWriteDescriptor: {
        virtio::test::DriverRing& ring = *rings[pick_queue()];
        const uint16_t index = static_cast<uint16_t>(in.u8() % ring.layout().size);
        const uint64_t addr = buffer_address(in);
        // Within the buffer area: the guard stays the device's to leave alone.
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(in.u16() % 0x2000, kGuard - addr));
        const uint16_t flags = in.u8() & 7;
        ring.write_desc(index, addr, len, flags, in.u8());
        break;
      }
      case kExposeHead: {
        virtio::test::DriverRing& ring = *rings[pick_queue()];
        const uint16_t idx = ring.avail_idx();
        ring.set_avail_entry(static_cast<uint16_t>(idx % ring.layout().size), in.u8());
        ring.set_avail_idx(static_cast<uint16_t>(idx + 1));
        break;
      }
      case kNotify:
        // One past the last queue too: a notify for a queue the device lacks.
        driver.notify(queues > 1 ? in.u8() % (queues + 1) : 0);
        break;
      case kWaitIdle: wait_idle(*device); break;
      case kBringUp:
        // Without INDIRECT_DESC: an indirect table could name guard bytes
        // legitimately, and the guard check would mean nothing.
        if (driver.probe() && driver.initialize((in.u64() | virtio::feature::bit(virtio::feature::kVersion1)) &
                                                ~virtio::feature::bit(virtio::feature::kRingIndirectDesc))) {
          // Linux sets up min(num_queues, CPUs) queues: maybe fewer than offered.
          const unsigned live = queues > 1 ? 1 + in.u8() % queues : 1;
          for (unsigned q = 0; q < live; ++q) driver.setup_queue(q, ring_base(q), ring_size(q));
          driver.driver_ok();
        }
        break;
      case kReset: driver.reset(); break;
      case kHostReset: {
        // Machine::reset_devices() runs on the main thread, not a vCPU's.
        std::thread host([&] { transport->reset(); });
        host.join();
        break;
      }
    }
    if (transport->device_status() & ~0xcfu) violated("Status holds undefined bits");
  }
  if (std::getenv("KVMMIO_FUZZ_TRACE")) {
    // For reading what a seed or an artifact does: block_fuzz -runs=1 FILE
    wait_idle(*device);
    const BlockCounters& c = device->counters();
    dprintf(g_report_fd, "reads %llu, writes %llu, flushes %llu, get_ids %llu, discards %llu, write_zeroes %llu, "
                         "refused %llu, io_errors %llu\n",
            static_cast<unsigned long long>(c.reads.load()), static_cast<unsigned long long>(c.writes.load()),
            static_cast<unsigned long long>(c.flushes.load()), static_cast<unsigned long long>(c.get_ids.load()),
            static_cast<unsigned long long>(c.discards.load()),
            static_cast<unsigned long long>(c.write_zeroes.load()),
            static_cast<unsigned long long>(c.refused.load()), static_cast<unsigned long long>(c.io_errors.load()));
  }
  // The VMM's teardown order, sometimes with requests in flight: the
  // transport goes first (resetting the device), then the device.
  if (!(flags & 2)) driver.reset();
  transport.reset();
  device.reset();
  struct stat st {};
  if (::stat(g_image.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != kImageSize)
    violated("the image changed size: a request reached past its end");
  memory.read(kGuard, guard.data(), guard.size());
  for (uint8_t b : guard)
    if (b != kGuardByte) violated("guest RAM outside every buffer was written");
}

}  // namespace
}  // namespace kvmmio::block

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kvmmio::block::g_report_fd = dup(2);  // before libFuzzer's -close_fd_mask=2
  kvmmio::set_log_level(kvmmio::LogLevel::kError);
  char tmpl[] = "/tmp/kvmmio-block-fuzz-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0 || ::ftruncate(fd, kvmmio::block::kImageSize) != 0) std::abort();
  ::close(fd);
  kvmmio::block::g_image = tmpl;
  std::atexit([] { ::unlink(kvmmio::block::g_image.c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvmmio::block::run(data, size);
  return 0;
}
