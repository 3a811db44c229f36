// SPDX-License-Identifier: BSD-2-Clause
// entropy_device: a VMM's virtio part built on libkvmmio, the way an
// embedder writes it (docs/embedding.md walks through it).
//
// It sets up a KVM VM with guest RAM, an event loop, and one virtio-mmio
// slot (KvmMmioSlot: irqfd, notify ioeventfds, the transport, and the
// read-only register mirror with its InterruptACK ioeventfd) in front of a
// device of its own: an entropy source (virtio device ID 4, the device
// Linux's virtio-rng driver binds), which fills the buffers the driver
// offers with bytes from getrandom(2).
//
// With no guest kernel at hand, the program first plays the guest's driver
// itself: it builds a split virtqueue in guest RAM and makes the register
// accesses Linux's virtio-mmio driver makes. Its stores go through the VM's
// MMIO bus, which is where a VMM's vCPU loop hands the MMIO exits of a real
// guest (Vcpu::run() does exactly that); its loads read the mirror page
// where the slot mapped one, as a guest's loads would, else the bus. So the
// program exercises the same code a guest's accesses would, and checks what
// it gets back. This part needs no vCPU and runs on x86-64 too.
//
// On arm64 it then does what a VMM does: a vCPU, the vGIC and a KVM_RUN
// loop, running the small guest of irq_guest.S (shared with the C example,
// c_embedder.c), which sets the device up and takes its interrupts as
// Linux's driver does: InterruptStatus read, InterruptACK written, EOI.
// With the register mirror that costs no vCPU exit: the program counts
// them, and checks there are none.
//
// Build it against an installed kvmmio:
//   g++ entropy_device.cc irq_guest.S $(pkg-config --cflags --libs kvmmio) -o entropy_device
// Exit status: 0 it worked, 1 it did not, 77 no usable /dev/kvm (skipped).
#include <sys/random.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <span>
#include <thread>

#include <kvmmio/base/error.h>
#include <kvmmio/base/event_fd.h>
#include <kvmmio/base/event_loop.h>
#include <kvmmio/base/log.h>
#include <kvmmio/kvm.h>
#include <kvmmio/virtio/descriptor_chain.h>
#include <kvmmio/virtio/kvm_mmio_slot.h>
#include <kvmmio/virtio/mmio_regs.h>
#include <kvmmio/virtio/mmio_transport.h>
#include <kvmmio/virtio/register_mirror.h>
#include <kvmmio/virtio/split_queue.h>
#include <kvmmio/virtio/virtio_device.h>
#include <kvmmio/vcpu.h>
#include <kvmmio/vm.h>
#if defined(__aarch64__)
#include <kvmmio/arch/arm64.h>
#endif

#include "irq_guest.h"

namespace {

using namespace kvmmio;
using namespace kvmmio::virtio;

// ---- The device: what the embedder writes ------------------------------------

// virtio 1.2 section 5.4: one request queue, no feature bits, no
// configuration space. Each buffer the driver offers is device-writable;
// the device fills it with random bytes and returns it.
//
// The library has a complete entropy device, kvmmio::rng::VirtioRng
// (kvmmio/rng/virtio_rng.h, the kvmmio program's --rng): a rate bound with
// a timer, a work budget per dispatch (QueueDrain), device-readable
// buffers refused as guest errors, counters. This one is kept to the least
// a VirtioDevice needs, written out on purpose: what an embedder's own
// device looks like is the point of this file, so it does not use that one.
class EntropyDevice final : public VirtioDevice {
 public:
  explicit EntropyDevice(const GuestMemory& memory) : memory_(memory) {}

  uint32_t device_id() const override { return 4; }  // entropy source
  uint64_t device_features() const override { return 0; }
  uint32_t num_queues() const override { return 1; }
  uint16_t queue_max_size(uint32_t) const override { return 64; }

  // DRIVER_OK: keep what the activation hands over, until reset().
  bool activate(const DeviceActivation& activation) override {
    activation_ = activation;
    return true;
  }

  // The driver made buffers available (a trapped QueueNotify, or the event
  // loop polling the queue's ioeventfd); the transport holds the device
  // lock, so this runs one call at a time.
  void queue_notify(uint32_t) override {
    SplitQueue* ring = activation_.queues.empty() ? nullptr : activation_.queues[0].ring;
    if (!ring) return;
    DescriptorChain chain;
    uint8_t bytes[256];
    while (ring->pop(chain) == SplitQueue::PopResult::kChain) {
      uint32_t written = 0;
      while (written < chain.writable_bytes) {
        const size_t want = std::min<uint64_t>(sizeof(bytes), chain.writable_bytes - written);
        const ssize_t got = ::getrandom(bytes, want, 0);
        if (got <= 0) break;
        written += static_cast<uint32_t>(
            write_to_chain(memory_, chain, written, {bytes, static_cast<size_t>(got)}));
      }
      ring->push_used(chain.head, written);
      bytes_served_ += written;
      ++buffers_served_;
    }
    // One interrupt for the batch, if the driver wants one (EVENT_IDX).
    if (ring->should_interrupt()) activation_.interrupt->signal_used();
  }

  // Status 0: forget the activation (its queues and interrupt).
  void reset() override { activation_ = {}; }

  // Read from any thread: the event-loop thread serves polled notifies.
  uint64_t bytes_served() const { return bytes_served_; }
  uint64_t buffers_served() const { return buffers_served_; }

 private:
  const GuestMemory& memory_;
  DeviceActivation activation_;
  std::atomic<uint64_t> bytes_served_{0};
  std::atomic<uint64_t> buffers_served_{0};
};

// ---- The guest's side, played by this program --------------------------------

// The guest's memory map is irq_guest.h's, which the vCPU part runs.
constexpr uint64_t kRamBase = IRQ_GUEST_RAM;     // where the guest's RAM starts
constexpr uint64_t kRamSize = IRQ_GUEST_RAM_SIZE;
constexpr uint64_t kMmioBase = IRQ_GUEST_VIRTIO;  // the device's register window, a page of its own
constexpr uint32_t kGsi = IRQ_GUEST_GSI;          // its interrupt (on arm64: SPI 16)
constexpr uint16_t kQueueSize = IRQ_GUEST_QUEUE_SIZE;
// The ring's three parts and the buffer, each on a page of its own.
constexpr uint64_t kDescGpa = IRQ_GUEST_DESC, kAvailGpa = IRQ_GUEST_AVAIL, kUsedGpa = IRQ_GUEST_USED,
                   kBufferGpa = IRQ_GUEST_BUFFER;
constexpr uint32_t kBufferLen = IRQ_GUEST_BUFFER_LEN;

class Driver {
 public:
  // `mirror`: the page a guest's loads would read (regs=mirror), or nullptr
  // for loads that exit to the bus (regs=trap).
  Driver(MmioBus& bus, uint64_t base, const RegisterMirror* mirror) : bus_(bus), base_(base), mirror_(mirror) {}
  uint32_t read(uint32_t reg) { return mirror_ ? mirror_->read32(reg) : read_trapped(reg); }
  // A load as it arrives when it exits: through the bus to the transport.
  uint32_t read_trapped(uint32_t reg) {
    uint8_t b[4] = {};
    if (!bus_.read(base_ + reg, b)) throw std::runtime_error("nothing at the register window");
    uint32_t v;
    std::memcpy(&v, b, 4);
    return v;
  }
  void write(uint32_t reg, uint32_t value) {
    uint8_t b[4];
    std::memcpy(b, &value, 4);
    if (!bus_.write(base_ + reg, b)) throw std::runtime_error("nothing at the register window");
  }

 private:
  MmioBus& bus_;
  uint64_t base_;
  const RegisterMirror* mirror_;
};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "entropy_device: FAIL: %s\n", what);
  std::exit(1);
}

void expect(bool ok, const char* what) {
  if (!ok) fail(what);
}

#if defined(__aarch64__)
// ---- A guest on a vCPU: its interrupts, and what they cost --------------------

constexpr uint32_t kInterrupts = 64;
constexpr auto kGuestTime = std::chrono::seconds(120);  // set-up included; TCG is slow

// Kicks the vCPU out of KVM_RUN if the guest is not done in time.
class Watchdog {
 public:
  explicit Watchdog(Vcpu& vcpu)
      : thread_([this, &vcpu] {
          std::unique_lock lock(mutex_);
          if (!cv_.wait_for(lock, kGuestTime, [this] { return done_; })) vcpu.kick();
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// The VMM's side: a vCPU and the vGIC on the VM (the slot's irqfd, queued
// until now, goes live with the vGIC), the guest in RAM, and the KVM_RUN
// loop. Vcpu::run() has handed an MMIO exit to the bus (the transport) by
// the time it returns; the loop counts the exits of each of the guest's
// phases (its mailbox says which).
void run_guest(Vm& vm, KvmMmioSlot& slot, const EntropyDevice& device) {
  std::unique_ptr<Vcpu> vcpu = vm.create_vcpu(0);
  arm64::init_vcpu(vm, *vcpu, /*powered_off=*/false);
  const arm64::GicVersion version =
      arm64::vgic_supported(vm, arm64::GicVersion::kV3) ? arm64::GicVersion::kV3 : arm64::GicVersion::kV2;
  arm64::Vgic gic(vm, version,
                  {.dist_base = IRQ_GUEST_GICD, .redist_base = IRQ_GUEST_GICR, .cpu_base = IRQ_GUEST_GICC},
                  IRQ_GUEST_NR_IRQS);
  const auto ram_span = vm.memory().span(kRamBase, kRamSize);
  expect(ram_span.has_value(), "no RAM for the guest");
  uint8_t* ram = ram_span->data();
  std::memset(ram, 0, kRamSize);
  irq_guest_start start;
  irq_guest_load(ram, version == arm64::GicVersion::kV3 ? 3 : 2, kInterrupts, &start);
  for (int i = 0; i < 7; ++i) vcpu->set_one_reg(arm64::reg_x(i), start.x[i]);
  vcpu->set_one_reg(arm64::reg_pc(), start.pc);
  vcpu->set_one_reg(arm64::reg_pstate(), start.pstate);

  const uint64_t buffers_before = device.buffers_served();
  const uint64_t acks_before = slot.interrupt_acks_in_kernel();
  uint64_t setup_exits = 0, traffic_exits = 0;
  {
    Watchdog watchdog(*vcpu);
    for (;;) {
      const VcpuExit exit = vcpu->run();
      const bool traffic = irq_guest_mailbox(ram).phase == IRQ_GUEST_TRAFFIC;
      traffic_exits += traffic;
      if (exit.kind == VcpuExit::Kind::kSystemEvent) break;  // PSCI SYSTEM_OFF
      if (exit.kind == VcpuExit::Kind::kInterrupted) fail("the guest did not finish in time");
      if (exit.kind != VcpuExit::Kind::kMmio || !exit.mmio_claimed) fail("an exit this VMM has no device for");
      setup_exits += !traffic;
    }
  }
  const struct irq_guest_mailbox box = irq_guest_mailbox(ram);
  expect(box.esr == 0, "the guest took an exception");
  expect(box.phase == IRQ_GUEST_DONE && box.interrupts == kInterrupts && box.unexpected_irqs == 0,
         "the guest did not take the device's interrupts");
  expect(device.buffers_served() - buffers_before == kInterrupts && irq_guest_used(ram) == kInterrupts,
         "the device did not serve every buffer");
  const uint64_t acks = slot.interrupt_acks_in_kernel() - acks_before;
  std::printf("entropy_device: a guest on a vCPU (vGICv%d) took %u of the device's interrupts: %" PRIu64
              " vCPU exits while it did (%.2f per interrupt), %" PRIu64 " InterruptACKs taken in the kernel; "
              "%" PRIu64 " exits for its set-up\n",
              version == arm64::GicVersion::kV3 ? 3 : 2, kInterrupts, traffic_exits,
              static_cast<double>(traffic_exits) / kInterrupts, acks, setup_exits);
  if (slot.mirror_mapped()) {
    expect(traffic_exits == 0, "regs=mirror: the guest's interrupts cost vCPU exits");
    expect(acks == kInterrupts, "regs=mirror: not every InterruptACK was taken in the kernel");
  } else {
    expect(traffic_exits == 2 * kInterrupts, "regs=trap: not 2 exits per interrupt");
  }
}
#endif

int run() {
  // ---- The VM: KVM, guest RAM, an event loop -------------------------------
  Kvm kvm;             // /dev/kvm; a UserError that names the fix when absent
  Vm vm(kvm);          // the VM, its memory slots and its MMIO bus
  vm.add_ram(kRamBase, kRamSize);  // memfd-backed, registered with KVM
  EventLoop loop;      // one thread: polled notifies, relayed interrupts

  // ---- One virtio-mmio slot in front of the device --------------------------
  EntropyDevice device(vm.memory());
  // TransportOptions' defaults: version 2, notify=ioeventfd, irq=irqfd,
  // regs=mirror (regs=trap, said once, where KVM lacks KVM_CAP_READONLY_MEM).
  KvmMmioSlot slot(vm, device, loop, {.base = kMmioBase, .gsi = kGsi, .name = "entropy0"});
  MmioTransport& transport = slot.transport();
  // The accesses that still exit arrive here: stores, and with regs=trap loads.
  vm.mmio_bus().claim(kMmioBase, MmioTransport::window_size(), transport, "entropy0");
  const RegisterMirror* mirror = slot.mirror_mapped() ? transport.mirror() : nullptr;
  std::printf("entropy_device: %s\n",
              mirror ? "regs=mirror: register loads read the read-only mirror page, used-buffer ACKs "
                       "go to an ioeventfd"
                     : "regs=trap: every register access exits");

  // ---- The guest's driver: probe, negotiate, set up queue 0 ----------------
  Driver d(vm.mmio_bus(), kMmioBase, mirror);
  expect(d.read(reg::kMagicValue) == kMagic, "MagicValue is not \"virt\"");
  expect(d.read(reg::kVersion) == kVersionModern, "Version is not 2");
  expect(d.read(reg::kDeviceId) == 4, "DeviceID is not 4 (entropy)");
  d.write(reg::kStatus, 0);
  d.write(reg::kStatus, status::kAcknowledge);
  d.write(reg::kStatus, status::kAcknowledge | status::kDriver);
  d.write(reg::kDeviceFeaturesSel, 1);
  const uint32_t high = d.read(reg::kDeviceFeatures);
  expect(high & 1, "VIRTIO_F_VERSION_1 not offered");
  d.write(reg::kDriverFeaturesSel, 1);
  d.write(reg::kDriverFeatures, 1);  // VERSION_1 only
  d.write(reg::kDriverFeaturesSel, 0);
  d.write(reg::kDriverFeatures, 0);
  d.write(reg::kStatus, status::kAcknowledge | status::kDriver | status::kFeaturesOk);
  expect(d.read(reg::kStatus) & status::kFeaturesOk, "FEATURES_OK refused");
  d.write(reg::kQueueSel, 0);
  expect(d.read(reg::kQueueNumMax) >= kQueueSize, "queue 0 is too small");
  d.write(reg::kQueueNum, kQueueSize);
  d.write(reg::kQueueDescLow, static_cast<uint32_t>(kDescGpa));
  d.write(reg::kQueueDescHigh, static_cast<uint32_t>(kDescGpa >> 32));
  d.write(reg::kQueueDriverLow, static_cast<uint32_t>(kAvailGpa));
  d.write(reg::kQueueDriverHigh, static_cast<uint32_t>(kAvailGpa >> 32));
  d.write(reg::kQueueDeviceLow, static_cast<uint32_t>(kUsedGpa));
  d.write(reg::kQueueDeviceHigh, static_cast<uint32_t>(kUsedGpa >> 32));
  d.write(reg::kQueueReady, 1);  // the transport assigns the queue's ioeventfd
  d.write(reg::kStatus,
          status::kAcknowledge | status::kDriver | status::kFeaturesOk | status::kDriverOk);
  expect(!(d.read(reg::kStatus) & status::kDeviceNeedsReset), "the device needs a reset");

  // ---- One request: a 32-byte device-writable buffer -----------------------
  const GuestMemory& mem = vm.memory();
  struct Desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
  } desc{kBufferGpa, kBufferLen, desc_flag::kWrite, 0};
  expect(mem.store(kDescGpa, desc), "descriptor outside RAM");
  expect(mem.store<uint16_t>(kAvailGpa + 4, 0), "avail ring outside RAM");  // ring[0] = head 0
  expect(mem.store<uint16_t>(kAvailGpa + 2, 1), "avail ring outside RAM");  // idx = 1
  d.write(reg::kQueueNotify, 0);  // as a trapped guest store would arrive

  // ---- What came back -------------------------------------------------------
  expect(mem.load<uint16_t>(kUsedGpa + 2) == 1, "no used buffer (used idx is not 1)");
  expect(mem.load<uint32_t>(kUsedGpa + 4) == 0, "used element is not descriptor 0");
  expect(mem.load<uint32_t>(kUsedGpa + 8) == kBufferLen, "used length is not 32");
  // The interrupt is the slot's irqfd. With no interrupt controller (a VMM
  // makes one: arm64::Vgic) the Vm keeps the irqfd queued, so its eventfd
  // just counts: the program reads it to see the interrupt.
  expect(slot.irqfd().event().take().value_or(0) >= 1, "no interrupt");
  expect(d.read(reg::kInterruptStatus) & interrupt::kUsedBuffer, "InterruptStatus lacks used-buffer");
  expect(d.read(reg::kStatus) == d.read_trapped(reg::kStatus), "the mirror's Status is not the register's");
  // A guest's store of this value on a vCPU never leaves the kernel with the
  // mirror (the ACK ioeventfd counts it); here it arrives as an exit would.
  d.write(reg::kInterruptAck, interrupt::kUsedBuffer);
  uint8_t got[kBufferLen];
  expect(mem.read(kBufferGpa, got, sizeof got), "buffer outside RAM");
  std::printf("entropy_device: the guest got %u random bytes:", kBufferLen);
  for (uint8_t b : got) std::printf(" %02x", b);
  std::printf("\n");

  const TransportCounters& c = transport.counters();
  std::printf("entropy_device: transport counters: notifies_trapped %" PRIu64
              ", interrupts_injected %" PRIu64 ", register_reads %" PRIu64 ", guest_errors %" PRIu64
              "; interrupt_acks_in_kernel %" PRIu64 "; device served %" PRIu64 " bytes\n",
              c.notifies_trapped.load(), c.interrupts_injected.load(), c.register_reads.load(),
              c.guest_errors.load(), slot.interrupt_acks_in_kernel(), device.bytes_served());
  expect(c.guest_errors.load() == 0, "the transport counted guest errors");

  d.write(reg::kStatus, 0);  // reset: the device drops its activation
  expect(d.read(reg::kStatus) == 0, "reset did not complete");
#if defined(__aarch64__)
  run_guest(vm, slot, device);
#else
  std::printf("entropy_device: its guest on a vCPU is arm64 code: not run on this host\n");
#endif
  return 0;
}

}  // namespace

int main() {
  // Library messages (guest errors, warnings) go where the embedder says.
  kvmmio::set_log_level(kvmmio::LogLevel::kInfo);
  if (!kvmmio::Kvm::available()) {
    std::printf("entropy_device: SKIP: no usable %s on this host\n", kvmmio::Kvm::kDefaultPath);
    return 77;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "entropy_device: %s\n", e.what());
    return 1;
  }
}
