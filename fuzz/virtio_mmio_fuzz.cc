// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: a hostile guest against the virtio-mmio transport and
// the split virtqueue. The input drives register reads and writes of any
// offset and width, writes into guest RAM (rings, descriptors, buffers),
// queue notifications and device-side config changes, in either register
// layout. After every step the target checks what must always hold:
//  - every buffer a popped chain names lies inside one RAM region (all
//    device access goes through GuestMemory::span(), which ASan cannot watch
//    at the mapping's edges, so the chain itself is checked independently);
//  - InterruptStatus carries only defined bits, Status only defined bits;
//  - the device is active only while DRIVER_OK is set;
//  - with regs=mirror (half the inputs), every word of the register mirror
//    and every configuration byte equals what a trapped read returns.
// Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <memory>
#include <span>
#include <vector>

#include "../tests/virtio/mmio_driver.h"
#include "fuzz_input.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/base/log.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/mmio_transport.h"

namespace kvmmio::virtio {
namespace {

constexpr uint64_t kRamA = 0x40000000;
constexpr uint64_t kRamASize = 256 << 10;
// A second region one page above the first: chains must not straddle the gap.
constexpr uint64_t kRamB = kRamA + kRamASize + 0x1000;
constexpr uint64_t kRamBSize = 64 << 10;
constexpr uint64_t kRing0 = kRamA + 0x1000;
constexpr uint64_t kRing1 = kRamA + 0x8000;
constexpr uint64_t kBase = 0x0a000000;

// scripts/fuzz.sh closes the target's stderr (guest errors are the point
// here and would flood it); violations go to a copy made before that.
int g_report_fd = 2;

[[noreturn]] void violated(const char* what) {
  dprintf(g_report_fd, "fuzz invariant violated: %s\n", what);
  std::abort();
}

bool inside_one_region(uint64_t gpa, uint64_t len) {
  for (auto [start, size] : {std::pair{kRamA, kRamASize}, std::pair{kRamB, kRamBSize}}) {
    if (gpa >= start && gpa - start <= size && len <= size - (gpa - start)) return true;
  }
  return false;
}

// A device whose queues do what real devices do with chains: read the
// readable part, write the writable part, return them, interrupt.
class FuzzDevice final : public VirtioDevice {
 public:
  FuzzDevice(const GuestMemory& memory, uint32_t backend_queues)
      : memory_(memory), backend_queues_(backend_queues) {}
  uint32_t device_id() const override { return 0xfff1; }
  uint64_t device_features() const override { return 0x3; }
  uint32_t num_queues() const override { return 2; }
  uint16_t queue_max_size(uint32_t q) const override { return q == 0 ? 256 : 16; }
  uint32_t config_size() const override { return sizeof(config_); }
  void read_config(uint32_t offset, std::span<uint8_t> data) override {
    if (offset + data.size() > sizeof(config_)) violated("config read out of range reached the device");
    std::memcpy(data.data(), config_ + offset, data.size());
  }
  void write_config(uint32_t offset, std::span<const uint8_t> data) override {
    if (offset + data.size() > sizeof(config_)) violated("config write out of range reached the device");
    std::memcpy(config_ + offset, data.data(), data.size());
  }
  bool backend_owns_queue(uint32_t q) const override { return (backend_queues_ >> q) & 1; }
  bool supports_queue_reset() const override { return true; }
  bool activate(const DeviceActivation& a) override {
    if (active_) violated("activated twice without a reset");
    active_ = true;
    interrupt_ = a.interrupt;
    rings_[0] = rings_[1] = nullptr;
    for (const ActiveQueue& q : a.queues) {
      if (q.index >= 2) violated("activation names a queue the device does not have");
      if ((q.ring == nullptr) != backend_owns_queue(q.index)) violated("ring handed out for a backend queue");
      rings_[q.index] = q.ring;
    }
    return true;
  }
  void queue_notify(uint32_t q) override {
    if (!active_) violated("queue_notify before activation");
    if (q >= 2 || backend_owns_queue(q)) violated("notify for a queue the VMM does not own");
    if (rings_[q]) process(*rings_[q]);
  }
  void reset() override {
    if (!active_) violated("reset without activation");
    active_ = false;
    rings_[0] = rings_[1] = nullptr;
  }
  void reset_queue(uint32_t q) override { rings_[q] = nullptr; }
  void enable_queue(const ActiveQueue& q) override { rings_[q.index] = q.ring; }
  bool active() const { return active_; }
  uint64_t chains() const { return chains_; }
  void change_config(VirtioInterrupt& interrupt, uint8_t value) {
    config_[value % sizeof(config_)] = value;
    interrupt.signal_config_change();
  }

 private:
  void process(SplitQueue& ring) {
    DescriptorChain chain;
    uint8_t scratch[512];
    // pop() must end: bounded by the ring size per notify in any case.
    for (uint32_t budget = 0; budget < 4 * 256 && ring.pop(chain) == SplitQueue::PopResult::kChain; ++budget) {
      bool seen_writable = false;
      for (const Segment& s : chain.segments) {
        if (!inside_one_region(s.gpa, s.len)) violated("a popped buffer lies outside guest RAM");
        if (seen_writable && !s.device_writable) violated("readable segment after a writable one");
        seen_writable |= s.device_writable;
      }
      const size_t in = read_from_chain(memory_, chain, 0, scratch);
      const size_t out = write_to_chain(memory_, chain, 0, {scratch, in});
      ring.push_used(chain.head, static_cast<uint32_t>(out));
      ++chains_;
      if (ring.should_interrupt() && interrupt_) interrupt_->signal_used();
    }
  }

  const GuestMemory& memory_;
  uint32_t backend_queues_;
  uint8_t config_[24] = {};
  bool active_ = false;
  VirtioInterrupt* interrupt_ = nullptr;
  SplitQueue* rings_[2] = {};
  uint64_t chains_ = 0;
};

using fuzz::Input;

enum Op : uint8_t {
  kWriteRegister,   // 32-bit write to a register-file offset
  kReadRegister,    // 32-bit read
  kRawAccess,       // any width, any offset in the window (config too)
  kWriteRam,        // bytes into guest RAM
  kWriteDescriptor, // one descriptor of queue 0's table
  kExposeHead,      // an avail entry of queue 0, then move its idx
  kNotify,          // QueueNotify as an MMIO exit
  kBringUp,         // Linux's whole init sequence, to reach DRIVER_OK quickly
  kConfigChange,    // device-initiated
  kOpCount,
};

void check_invariants(MmioTransport& transport, FuzzDevice& device, test::MmioDriver& driver) {
  const uint32_t status = transport.device_status();
  if (status & ~0xcfu) violated("Status holds undefined bits");
  if (device.active() && !(status & status::kDriverOk)) violated("device active without DRIVER_OK");
  if (driver.read(reg::kInterruptStatus) & ~interrupt::kAll) violated("InterruptStatus holds undefined bits");
  if (const RegisterMirror* mirror = transport.mirror()) {
    const uint32_t version = transport.options().version;
    for (uint32_t offset = 0; offset < reg::kConfig; offset += 4) {
      const RegisterInfo* info = find_register(offset, version);
      const bool readable = info && info->access != RegAccess::kWrite;
      if (mirror->read32(offset) != (readable ? driver.read(offset) : 0u))
        violated("a register mirror word differs from the trapped read");
    }
    for (uint32_t i = 0; i < device.config_size(); ++i) {
      uint8_t trapped = 0;
      transport.mmio_read(reg::kConfig + i, {&trapped, 1});
      if (mirror->bytes(reg::kConfig + i, 1)[0] != trapped)
        violated("a configuration byte of the mirror differs from the trapped read");
    }
  }
}

void run(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t setup = in.u8();
  GuestMemory memory;
  memory.add_ram(kRamA, kRamASize);
  memory.add_ram(kRamB, kRamBSize);
  FuzzDevice device(memory, (setup >> 1) & 3);
  EventFd irq;
  TransportOptions options;
  options.version = (setup & 1) ? kVersionLegacy : kVersionModern;
  options.notify = NotifyMode::kTrap;  // single-threaded and deterministic
  options.regs = (setup & 8) ? RegsMode::kMirror : RegsMode::kTrap;
  MmioTransport transport(device, {.memory = memory, .irq = irq, .base = kBase, .name = "fuzz"}, options);
  test::MmioDriver driver(transport);

  for (int steps = 0; !in.done() && steps < 4096; ++steps) {
    switch (in.u8() % kOpCount) {
      case kWriteRegister: {
        const uint32_t offset = (in.u8() % 0x40) * 4;
        driver.write(offset, in.u32());
        break;
      }
      case kReadRegister: (void)driver.read((in.u8() % 0x40) * 4); break;
      case kRawAccess: {
        const uint64_t offset = in.u16() % kMmioWindowSize;
        const size_t width = size_t{1} << (in.u8() % 4);
        uint8_t bytes[8];
        const uint64_t value = in.u64();
        std::memcpy(bytes, &value, sizeof(bytes));
        if (in.u8() & 1) {
          transport.mmio_write(offset, {bytes, width});
        } else {
          transport.mmio_read(offset, {bytes, width});
        }
        break;
      }
      case kWriteRam: {
        const uint64_t gpa = kRamA + in.u16() * 4;  // the first 256 KiB
        uint8_t bytes[16];
        const size_t len = in.u8() % sizeof(bytes);
        for (size_t i = 0; i < len; ++i) bytes[i] = in.u8();
        memory.write(gpa, bytes, len);  // may be refused at the end: fine
        break;
      }
      case kWriteDescriptor: {
        const uint16_t index = in.u8();
        const uint8_t where = in.u8();
        // Mostly buffers in RAM, sometimes anywhere at all.
        const uint64_t addr = where < 200 ? kRamA + 0x10000 + in.u16() * 2 : in.u64();
        const uint32_t len = where & 1 ? in.u32() : in.u16();
        const uint16_t flags = in.u8() & 7;
        const uint16_t next = in.u8();
        const uint64_t at = kRing0 + 16ull * index;
        memory.store(at, addr);
        memory.store(at + 8, len);
        memory.store(at + 12, flags);
        memory.store(at + 14, next);
        break;
      }
      case kExposeHead: {
        // Queue 0's ring as Linux lays out 256 entries at kRing0.
        const uint64_t avail = kRing0 + 256 * 16;
        const uint16_t idx = memory.load<uint16_t>(avail + 2).value_or(0);
        memory.store<uint16_t>(avail + 4 + 2 * (idx % 256), in.u16() % 300);
        memory.store<uint16_t>(avail + 2, static_cast<uint16_t>(idx + 1 + (in.u8() % 4 == 0 ? in.u16() : 0)));
        break;
      }
      case kNotify: driver.notify(in.u8() % 3); break;
      case kBringUp:
        if (driver.probe() && driver.initialize(in.u64() | feature::bit(feature::kVersion1))) {
          driver.setup_queue(0, kRing0, 256);
          driver.setup_queue(1, kRing1, 16);
          driver.driver_ok();
        }
        break;
      case kConfigChange: device.change_config(transport.interrupt(), in.u8()); break;
    }
    check_invariants(transport, device, driver);
  }
  if (std::getenv("KVMMIO_FUZZ_TRACE")) {
    // For reading what a seed or an artifact does: fuzzer ... -runs=1 FILE
    const TransportCounters& c = transport.counters();
    dprintf(g_report_fd, "status 0x%x, chains %llu, interrupts %llu, guest errors %llu, needs-reset %llu\n",
            transport.device_status(), static_cast<unsigned long long>(device.chains()),
            static_cast<unsigned long long>(c.interrupts_injected.load()),
            static_cast<unsigned long long>(c.guest_errors.load()),
            static_cast<unsigned long long>(c.needs_reset.load()));
  }
}

}  // namespace
}  // namespace kvmmio::virtio

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kvmmio::virtio::g_report_fd = dup(2);  // before libFuzzer's -close_fd_mask=2
  kvmmio::set_log_level(kvmmio::LogLevel::kError);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvmmio::virtio::run(data, size);
  return 0;
}
