// SPDX-License-Identifier: BSD-2-Clause
// Architecture-neutral parts of TestMachine: the test device, the run loop
// with its watchdog, guest loading.
#include "test_machine.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "kvmmio/base/error.h"
#include "kvmmio/base/thread_name.h"

namespace kvmmio::test {

const char* to_string(Report::Kind kind) {
  switch (kind) {
    case Report::Kind::kDone: return "done";
    case Report::Kind::kReady: return "ready";
    case Report::Kind::kIrq: return "irq";
    case Report::Kind::kFault: return "fault";
    case Report::Kind::kTimeout: return "timeout";
    case Report::Kind::kUnexpectedExit: return "unexpected-exit";
  }
  return "?";
}

std::span<const uint8_t> guest_code(const char* start, const char* end) {
  return {reinterpret_cast<const uint8_t*>(start), static_cast<size_t>(end - start)};
}

void TestDevice::mmio_read(uint64_t offset, std::span<uint8_t> data) {
  if (forward_ && offset < TestMachine::kReportOffset) return forward_->mmio_read(offset, data);
  std::fill(data.begin(), data.end(), 0);
}

void TestDevice::mmio_write(uint64_t offset, std::span<const uint8_t> data) {
  uint64_t value = 0;
  std::memcpy(&value, data.data(), std::min<size_t>(data.size(), 8));
  if (offset == TestMachine::kNotifyOffset) ++notify_writes_;
  if (forward_ && offset < TestMachine::kReportOffset) return forward_->mmio_write(offset, data);
  if (offset == TestMachine::kNotifyOffset) return;
  // Report registers (arm64 guests): +0 done, +8 ready, +0x10 irq, +0x18 fault.
  switch (offset - TestMachine::kReportOffset) {
    case 0x00: pending_ = Report{Report::Kind::kDone, value}; break;
    case 0x08: pending_ = Report{Report::Kind::kReady, value}; break;
    case 0x10: pending_ = Report{Report::Kind::kIrq, value}; break;
    case 0x18: pending_ = Report{Report::Kind::kFault, value}; break;
    default: break;
  }
}

std::optional<Report> TestDevice::take_report() { return std::exchange(pending_, std::nullopt); }

void TestMachine::load(std::span<const uint8_t> code, uint64_t gpa) {
  if (!vm_->memory().write(gpa, code.data(), code.size()))
    throw std::runtime_error("guest program does not fit in test RAM");
}

TestMachine::EmbedderVm::~EmbedderVm() {
  if (ram) ::munmap(ram, ram_size);
}

void TestMachine::make_vm(Kvm& kvm, const MachineOptions& options, uint64_t ram_size) {
  if (options.vm == VmOwner::kKvmmio) {
    vm_ = std::make_unique<Vm>(kvm);
    vm_->add_ram(kRamBase, ram_size);
    return;
  }
  embedder_.fd = UniqueFd(::ioctl(kvm.fd(), KVM_CREATE_VM, 0));
  if (!embedder_.fd) throw_errno("KVM_CREATE_VM (the embedder's)");
  const AdoptedVm adopted{.fd = embedder_.fd.get(), .first_memslot = 1, .memslots = kAdoptedMemslots};
  if (options.vm == VmOwner::kEmbedderHostRam) {
    void* p = ::mmap(nullptr, ram_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw_errno("mmap the embedder's RAM");
    embedder_.ram = p;
    embedder_.ram_size = ram_size;
    kvm_userspace_memory_region region{};
    region.slot = 0;
    region.guest_phys_addr = kRamBase;
    region.memory_size = ram_size;
    region.userspace_addr = reinterpret_cast<uint64_t>(p);
    if (::ioctl(embedder_.fd.get(), KVM_SET_USER_MEMORY_REGION, &region) != 0)
      throw_errno("KVM_SET_USER_MEMORY_REGION (the embedder's RAM)");
    vm_ = std::make_unique<Vm>(kvm, adopted);
    vm_->add_ram({.gpa = kRamBase, .size = ram_size, .host = p}, RamSlot::kExisting);
    return;
  }
  // The RAM a page into a memfd: kvmmio maps it from that offset.
  const uint64_t offset = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  embedder_.ram_fd = UniqueFd(::memfd_create("embedder-ram", MFD_CLOEXEC));
  if (!embedder_.ram_fd || ::ftruncate(embedder_.ram_fd.get(), static_cast<off_t>(offset + ram_size)) != 0)
    throw_errno("memfd for the embedder's RAM");
  vm_ = std::make_unique<Vm>(kvm, adopted);
  vm_->add_ram({.gpa = kRamBase, .size = ram_size, .fd = embedder_.ram_fd.get(), .offset = offset},
               RamSlot::kRegister);
}

TestMachine::TestMachine(Kvm& kvm, MachineOptions options) {
  on_vcpu_thread([&] { build(kvm, options); });
}

TestMachine::~TestMachine() = default;

KickAfter::KickAfter(Vcpu& vcpu, std::chrono::milliseconds timeout)
    : thread_([this, &vcpu, timeout] {
        name_this_thread("watchdog");
        std::unique_lock lock(mutex_);
        if (!cv_.wait_for(lock, timeout, [this] { return done_; })) {
          fired_ = true;
          vcpu.kick();
        }
      }) {}

KickAfter::~KickAfter() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

WorkerThread::WorkerThread()
    : thread_([this] {
        name_this_thread("vcpu0");
        for (;;) {
          std::function<void()> work;
          {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [this] { return stop_ || work_.has_value(); });
            if (!work_) return;
            work = std::move(*work_);
            work_.reset();
          }
          work();
        }
      }) {}

WorkerThread::~WorkerThread() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WorkerThread::submit(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    work_ = std::move(work);
  }
  cv_.notify_all();
}

Report TestMachine::run_until_report(std::chrono::milliseconds timeout) {
  return on_vcpu_thread([&] {
    KickAfter watchdog(vcpu(), timeout);
    return next_report(&watchdog);
  });
}

Report TestMachine::next_report(const KickAfter* watchdog) {
  for (;;) {
    VcpuExit ex = vcpu().run();
    switch (ex.kind) {
      case VcpuExit::Kind::kMmio:
        ++mmio_exits_;
        if (auto r = device_.take_report()) return *r;
        break;
      case VcpuExit::Kind::kIo: {
        // x86 guests report through ports 0xf4 (done), 0xf5 (ready), 0xf6 (irq).
        if (!ex.io_out) break;
        uint64_t value = 0;  // the port write's bytes (outb: 1, outl: 4)
        const auto data = vcpu().io_data();
        std::memcpy(&value, data.data(), std::min<size_t>(data.size(), sizeof(value)));
        if (ex.io_port == 0xf4) return {Report::Kind::kDone, value};
        if (ex.io_port == 0xf5) return {Report::Kind::kReady, value};
        if (ex.io_port == 0xf6) return {Report::Kind::kIrq, value};
        break;
      }
      case VcpuExit::Kind::kInterrupted:
        if (watchdog && watchdog->fired()) return {Report::Kind::kTimeout, 0};
        break;
      default:
        return {Report::Kind::kUnexpectedExit, ex.raw_reason};
    }
  }
}

}  // namespace kvmmio::test
