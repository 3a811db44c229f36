// SPDX-License-Identifier: BSD-2-Clause
// Architecture-neutral parts of TestMachine: the test device, the run loop
// with its watchdog, guest loading.
#include "test_machine.h"

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

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
