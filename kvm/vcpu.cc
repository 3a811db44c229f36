// SPDX-License-Identifier: BSD-2-Clause
// Vcpu: the KVM_RUN step, MMIO dispatch to the bus, kicks, and registers.
#include "kvmmio/vcpu.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <cstring>
#include <mutex>

#include "kvmmio/base/error.h"
#include "kvmmio/vm.h"

namespace kvmmio {
namespace {

// The kick signal only has to interrupt KVM_RUN (EINTR); it does nothing
// itself. Installed once, without SA_RESTART.
int kick_signal() {
  static std::once_flag once;
  static int signo = SIGRTMIN;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    if (::sigaction(signo, &sa, nullptr) != 0) throw_errno("sigaction for vCPU kick");
  });
  return signo;
}

// Exit counters are written only by the vCPU's own thread and read for
// stats: relaxed increments, no barriers on the exit path.
void bump(std::atomic<uint64_t>& counter) { counter.fetch_add(1, std::memory_order_relaxed); }

uint64_t le_value(const uint8_t* data, uint32_t len) {
  uint64_t v = 0;
  std::memcpy(&v, data, len > 8 ? 8 : len);
  return v;
}

}  // namespace

uint64_t VcpuExitCounts::total() const {
  uint64_t sum = 0;
  each([&sum](const char*, uint64_t n) { sum += n; });
  return sum;
}

Vcpu::Vcpu(Vm& vm, int index, UniqueFd fd) : vm_(vm), index_(index), fd_(std::move(fd)) {
  kick_signal();
  run_size_ = static_cast<size_t>(vm.kvm().vcpu_mmap_size());
  void* p = ::mmap(nullptr, run_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
  if (p == MAP_FAILED) throw_errno("mmap kvm_run");
  run_ = static_cast<kvm_run*>(p);
}

Vcpu::~Vcpu() {
  if (run_) ::munmap(run_, run_size_);
}

VcpuExit Vcpu::run() {
  // kick() stores immediate_exit, then loads in_run_; this stores in_run_,
  // then enters KVM_RUN (which reads immediate_exit): both sequentially
  // consistent, so one of them sees the other.
  const pthread_t self = ::pthread_self();
  if (thread_.load(std::memory_order_relaxed) != self) thread_.store(self);
  in_run_.store(true);
  const int r = ::ioctl(fd_.get(), KVM_RUN, 0);
  const int err = errno;
  in_run_ = false;
  io_pending_ = false;

  VcpuExit ex;
  if (r < 0) {
    if (err == EINTR || err == EAGAIN) {
      __atomic_store_n(&run_->immediate_exit, 0, __ATOMIC_SEQ_CST);
      bump(counts_.interrupted);
      ex.kind = VcpuExit::Kind::kInterrupted;
      return ex;
    }
    errno = err;
    throw_errno("KVM_RUN on vCPU " + std::to_string(index_));
  }

  ex.raw_reason = run_->exit_reason;
  switch (run_->exit_reason) {
    case KVM_EXIT_MMIO: {
      auto& m = run_->mmio;
      const uint32_t len = m.len <= sizeof(m.data) ? m.len : sizeof(m.data);
      ex.kind = VcpuExit::Kind::kMmio;
      ex.mmio_addr = m.phys_addr;
      ex.mmio_len = len;
      ex.mmio_write = m.is_write != 0;
      if (ex.mmio_write) {
        ex.mmio_value = le_value(m.data, len);
        ex.mmio_claimed = vm_.mmio_bus().write(m.phys_addr, {m.data, len});
      } else {
        ex.mmio_claimed = vm_.mmio_bus().read(m.phys_addr, {m.data, len});
        ex.mmio_value = le_value(m.data, len);
      }
      io_pending_ = true;
      bump(counts_.mmio);
      break;
    }
    case KVM_EXIT_IO:
      ex.kind = VcpuExit::Kind::kIo;
      ex.io_port = run_->io.port;
      ex.io_size = run_->io.size;
      ex.io_out = run_->io.direction == KVM_EXIT_IO_OUT;
      ex.io_count = run_->io.count;
      io_pending_ = true;
      bump(counts_.io);
      break;
    case KVM_EXIT_HLT:
      ex.kind = VcpuExit::Kind::kHlt;
      bump(counts_.hlt);
      break;
    case KVM_EXIT_SYSTEM_EVENT:
      ex.kind = VcpuExit::Kind::kSystemEvent;
      ex.system_event_type = run_->system_event.type;
      bump(counts_.system_event);
      break;
    case KVM_EXIT_INTERNAL_ERROR:
      ex.kind = VcpuExit::Kind::kInternalError;
      ex.internal_suberror = run_->internal.suberror;
      bump(counts_.internal_error);
      break;
    case KVM_EXIT_FAIL_ENTRY:
      ex.kind = VcpuExit::Kind::kFailEntry;
      bump(counts_.fail_entry);
      break;
    case KVM_EXIT_INTR:
      ex.kind = VcpuExit::Kind::kInterrupted;
      bump(counts_.interrupted);
      break;
    default:
      ex.kind = VcpuExit::Kind::kUnknown;
      bump(counts_.unknown);
      break;
  }
  return ex;
}

void Vcpu::kick() {
  // immediate_exit covers a vCPU about to enter KVM_RUN; the signal one that
  // is inside it.
  __atomic_store_n(&run_->immediate_exit, 1, __ATOMIC_SEQ_CST);
  if (in_run_) ::pthread_kill(thread_.load(), kick_signal());
}

std::span<uint8_t> Vcpu::io_data() const {
  auto* base = reinterpret_cast<uint8_t*>(run_) + run_->io.data_offset;
  return {base, static_cast<size_t>(run_->io.size) * run_->io.count};
}

void Vcpu::complete_pending_io() {
  if (!io_pending_) return;
  __atomic_store_n(&run_->immediate_exit, 1, __ATOMIC_SEQ_CST);
  const int r = ::ioctl(fd_.get(), KVM_RUN, 0);
  const int err = errno;
  __atomic_store_n(&run_->immediate_exit, 0, __ATOMIC_SEQ_CST);
  io_pending_ = false;
  if (r == 0 || err != EINTR) {
    errno = r == 0 ? EIO : err;
    throw_errno("KVM_RUN (immediate exit) to complete pending I/O");
  }
}

void Vcpu::set_one_reg(uint64_t id, uint64_t value) {
  complete_pending_io();
  kvm_one_reg reg{id, reinterpret_cast<uint64_t>(&value)};
  if (::ioctl(fd_.get(), KVM_SET_ONE_REG, &reg) != 0) throw_errno("KVM_SET_ONE_REG");
}

uint64_t Vcpu::get_one_reg(uint64_t id) {
  uint64_t value = 0;
  kvm_one_reg reg{id, reinterpret_cast<uint64_t>(&value)};
  if (::ioctl(fd_.get(), KVM_GET_ONE_REG, &reg) != 0) throw_errno("KVM_GET_ONE_REG");
  return value;
}

}  // namespace kvmmio
