// SPDX-License-Identifier: BSD-2-Clause
// TestMachine: a minimal VM for the KVM-layer tests and benchmarks on real
// /dev/kvm: RAM, one vCPU, the architecture's in-kernel interrupt controller,
// and the small guest programs of tests/guests/<arch>/*.S.
//
// The guests talk back through a "report" channel the test reads: a port
// write on x86, an MMIO store to a claimed test device on arm64. The notify
// address is a register of the same test device, so stores that are not
// swallowed by an ioeventfd arrive there as counted MMIO exits.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

#include "kvmmio/kvm.h"
#include "kvmmio/mmio_bus.h"
#include "kvmmio/vcpu.h"
#include "kvmmio/vm.h"

#if defined(__aarch64__)
#include "kvmmio/arch/arm64.h"
#endif

namespace kvmmio::test {

// What a guest said, or why it said nothing.
struct Report {
  enum class Kind { kDone, kReady, kIrq, kFault, kTimeout, kUnexpectedExit };
  Kind kind = Kind::kTimeout;
  uint64_t value = 0;  // kIrq: what the guest acknowledged; kFault: ESR
};
const char* to_string(Report::Kind kind);

// The test device: a register page at kTestDeviceBase. Writes to the notify
// register are counted (each is an MMIO exit that reached userspace).
//
// A test may put a real device behind the registers below kReportOffset
// (say a virtio-mmio transport based at kTestDeviceBase, whose QueueNotify
// is the store loop's target); the report registers stay the machine's.
class TestDevice : public MmioDevice {
 public:
  void mmio_read(uint64_t offset, std::span<uint8_t> data) override;
  void mmio_write(uint64_t offset, std::span<const uint8_t> data) override;
  uint64_t notify_writes() const { return notify_writes_; }
  std::optional<Report> take_report();
  // Forwards accesses below kReportOffset to `registers` (nullptr: none).
  void forward_registers_to(MmioDevice* registers) { forward_ = registers; }

 private:
  uint64_t notify_writes_ = 0;
  std::optional<Report> pending_;
  MmioDevice* forward_ = nullptr;
};

// Who owns the machine's VM and RAM.
enum class VmOwner {
  kKvmmio,           // Vm(Kvm&) and Vm::add_ram(): kvmmio creates both
  kEmbedderHostRam,  // the machine, as an embedding VMM would: it creates the
                     // VM, maps its RAM and makes it memory slot 0; kvmmio
                     // adopts the VM with slots 1.. and gets the RAM's address
  kEmbedderFdRam,    // the same VM, with the RAM in a memfd of the machine's
                     // (at an offset) that kvmmio maps and makes a slot itself
};

struct MachineOptions {
#if defined(__aarch64__)
  // Which vGIC; nullopt = v3 if the host offers it, else v2.
  std::optional<arm64::GicVersion> gic;
  int vcpus = 1;
#endif
  VmOwner vm = VmOwner::kKvmmio;
};

// Kicks a vCPU out of KVM_RUN if `timeout` passes before it is destroyed.
class KickAfter {
 public:
  KickAfter(Vcpu& vcpu, std::chrono::milliseconds timeout);
  ~KickAfter();
  bool fired() const { return fired_; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

// A thread that runs submitted work in order: the vCPU thread of a machine.
class WorkerThread {
 public:
  WorkerThread();
  ~WorkerThread();
  template <typename F>
  auto run(F&& fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::forward<F>(fn));
    auto result = task.get_future();
    submit([&task] { task(); });
    return result.get();
  }

 private:
  void submit(std::function<void()> work);
  std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<std::function<void()>> work_;
  bool stop_ = false;
  std::thread thread_;
};

class TestMachine {
 public:
  static const uint64_t kRamBase;
  static const uint64_t kTestDeviceBase;
  static constexpr uint64_t kNotifyOffset = 0x50;  // like virtio-mmio QueueNotify
  // The memory slots an adopted VM leaves kvmmio: [1, 1 + kAdoptedMemslots).
  static constexpr uint32_t kAdoptedMemslots = 4;
  static constexpr uint64_t kReportOffset = 0x100;
  // MMIO exits a guest's done report costs: a store to the test device on
  // arm64, port I/O (no MMIO exit) on x86-64.
#if defined(__aarch64__)
  static constexpr uint64_t kDoneReportMmioExits = 1;
#else
  static constexpr uint64_t kDoneReportMmioExits = 0;
#endif
  uint64_t notify_addr() const { return kTestDeviceBase + kNotifyOffset; }

  explicit TestMachine(Kvm& kvm, MachineOptions options = {});
  ~TestMachine();

  Vm& vm() { return *vm_; }
  Vcpu& vcpu(int i = 0) { return *vcpus_.at(i); }
  TestDevice& device() { return device_; }

  // The store-loop guest: `count` 32-bit stores of `value` to notify_addr(),
  // then a kDone report.
  void load_store_loop(uint32_t value, uint32_t count);

  // The load-loop guest: `count` 32-bit loads from kTestDeviceBase +
  // `offset`, then a kDone report whose value is their 32-bit sum.
  void load_load_loop(uint64_t offset, uint32_t count);

  // The interrupt guest for `gsi`: it enables that interrupt in the
  // controller and reports kReady; each interrupt it takes is reported as
  // kIrq with what it acknowledged (x86: the PIC in-service bitmask; arm64:
  // the INTID).
  void load_irq_guest(uint32_t gsi);
  // What a kIrq report of `gsi` should carry.
  static uint64_t expected_irq_report(uint32_t gsi);
  // Raises `gsi` from userspace with KVM_IRQ_LINE (an edge: high, then low).
  void pulse_irq_line(uint32_t gsi);

  // Runs vCPU 0 on the machine's vCPU thread until the guest reports, or
  // the timeout passes (then the vCPU is kicked out and kTimeout returned).
  // Counts MMIO exits.
  Report run_until_report(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Runs `fn` on the machine's own vCPU thread, as a VMM runs each vCPU on
  // a thread of its own. Every vCPU ioctl of this machine (create, init,
  // registers, KVM_RUN) happens there, and the thread dies with the machine.
  // (Once thought to avoid a nested-L1 fault; the fault was QEMU running
  // stale guest code, docs/arm64-platform.md "Known L1 issues", and the
  // thread per VM stays because it is how a VMM runs vCPUs.)
  template <typename F>
  auto on_vcpu_thread(F&& fn) -> decltype(fn()) {
    return vcpu_thread_.run(std::forward<F>(fn));
  }
  // The report loop without a thread hop or watchdog: call it only on the
  // vCPU thread, under a KickAfter (benchmarks guard whole loops with one).
  Report next_report(const KickAfter* watchdog = nullptr);

  uint64_t mmio_exits() const { return mmio_exits_; }
  uint64_t notify_exits() const { return device_.notify_writes(); }

#if defined(__aarch64__)
  arm64::GicVersion gic_version() const { return vgic_->version(); }
  // Loads a raw arm64 program at kRamBase and points vCPU `i` at it.
  void load_program(std::span<const uint8_t> code, int vcpu_index = 0);
#endif

 private:
  void load(std::span<const uint8_t> code, uint64_t gpa);

  void build(Kvm& kvm, const MachineOptions& options);  // on the vCPU thread
  // The VM with `ram_size` bytes of RAM at kRamBase, owned as options.vm says.
  void make_vm(Kvm& kvm, const MachineOptions& options, uint64_t ram_size);

  // An embedder's VM fd and RAM (VmOwner::kEmbedder*): what it keeps after
  // handing them to kvmmio, so they outlive the Vm.
  struct EmbedderVm {
    UniqueFd fd;
    UniqueFd ram_fd;
    void* ram = nullptr;
    size_t ram_size = 0;
    ~EmbedderVm();
  };

  WorkerThread vcpu_thread_;  // first member: exists before the VM is built
  EmbedderVm embedder_;
  std::unique_ptr<Vm> vm_;
  std::vector<std::unique_ptr<Vcpu>> vcpus_;
  TestDevice device_;
  uint64_t mmio_exits_ = 0;
#if defined(__aarch64__)
  std::unique_ptr<arm64::Vgic> vgic_;
#endif
};

// The bytes of an assembled guest program between two symbols.
std::span<const uint8_t> guest_code(const char* start, const char* end);

}  // namespace kvmmio::test
