// SPDX-License-Identifier: BSD-2-Clause
// The vCPU thread: init, boot registers, the run loop, failure reports.
#include "vmm/machine/vcpu_runner_arm64.h"

#include <linux/kvm.h>

#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <system_error>

#include "kvmmio/arch/arm64.h"
#include "kvmmio/base/log.h"
#include "kvmmio/base/thread_name.h"
#include "vmm/boot/device_tree.h"

namespace kvmmio::vmm {
namespace {

uint64_t reg_elr_el1() {
  return KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE |
         (offsetof(kvm_regs, elr_el1) / sizeof(uint32_t));
}

// The state that explains most guest deaths: where it was, at which EL and
// with what masks (pstate), its first arguments, and the last exception it
// took at EL1 (syndrome, faulting address, return address).
std::string describe_registers(Vcpu& vcpu) {
  struct Reg {
    const char* name;
    uint64_t id;
  };
  const Reg regs[] = {
      {"pc", arm64::reg_pc()},
      {"pstate", arm64::reg_pstate()},
      {"x0", arm64::reg_x(0)},
      {"x1", arm64::reg_x(1)},
      {"x2", arm64::reg_x(2)},
      {"x3", arm64::reg_x(3)},
      {"sp_el1", arm64::reg_sp_el1()},
      {"elr_el1", reg_elr_el1()},
      {"esr_el1", ARM64_SYS_REG(3, 0, 5, 2, 0)},
      {"far_el1", ARM64_SYS_REG(3, 0, 6, 0, 0)},
  };
  std::string out;
  for (const Reg& r : regs) {
    char buf[48];
    try {
      std::snprintf(buf, sizeof buf, "%s=0x%" PRIx64 " ", r.name, vcpu.get_one_reg(r.id));
    } catch (const std::exception&) {
      std::snprintf(buf, sizeof buf, "%s=? ", r.name);
    }
    out += buf;
  }
  return out;
}

}  // namespace

VcpuRunner::VcpuRunner(Vm& vm, std::unique_ptr<Vcpu> vcpu, StopRequest& stop, bool reboot_in_place)
    : vm_(vm),
      vcpu_(std::move(vcpu)),
      stop_(stop),
      reboot_in_place_(reboot_in_place),
      thread_([this] { thread_main(); }) {}

VcpuRunner::~VcpuRunner() {
  if (!thread_.joinable()) return;
  stop_.request(StopCause::kFailure, "machine torn down");
  stop();
  join();
}

void VcpuRunner::stop() {
  bool running;
  {
    std::lock_guard lock(mutex_);
    running = phase_ == Phase::kRunning;
    if (!running) phase_ = Phase::kAborted;
  }
  cv_.notify_all();
  // immediate_exit covers a vCPU about to enter KVM_RUN, the signal one in
  // it; either way the loop then sees the StopRequest.
  if (running) vcpu_->kick();
}

void VcpuRunner::pause() {
  bool running;
  {
    std::lock_guard lock(mutex_);
    pause_ = true;
    running = phase_ == Phase::kRunning;
  }
  if (running) vcpu_->kick();
}

void VcpuRunner::resume() {
  {
    std::lock_guard lock(mutex_);
    pause_ = false;
  }
  cv_.notify_all();
}

bool VcpuRunner::parked() const {
  std::lock_guard lock(mutex_);
  return parked_ || finished_ || phase_ != Phase::kRunning;
}

bool VcpuRunner::wait_parked(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return cv_.wait_until(lock, deadline, [this] { return parked_ || finished_ || phase_ != Phase::kRunning; });
}

void VcpuRunner::hold() {
  bool running;
  {
    std::lock_guard lock(mutex_);
    hold_ = true;
    running = phase_ == Phase::kRunning;
  }
  if (running) vcpu_->kick();
}

void VcpuRunner::reinitialise(std::optional<BootEntry> entry) {
  {
    std::lock_guard lock(mutex_);
    reinit_entry_ = entry;
    reinit_pending_ = true;
    reinitialised_ = false;
  }
  cv_.notify_all();
}

bool VcpuRunner::wait_reinitialised() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return reinitialised_ || finished_ || phase_ != Phase::kRunning; });
  return reinitialised_;
}

void VcpuRunner::release() {
  {
    std::lock_guard lock(mutex_);
    hold_ = false;
  }
  cv_.notify_all();
}

// On the vCPU's thread, between two KVM_RUNs: waits while paused or held,
// unless the VM stops (stop() wakes it); re-initialises the vCPU when the
// machine asks while it is held.
void VcpuRunner::park_while_paused() {
  std::unique_lock lock(mutex_);
  if (!pause_ && !hold_) return;
  parked_ = true;
  cv_.notify_all();
  for (;;) {
    cv_.wait(lock, [this] { return (!pause_ && !hold_) || stop_.requested() || reinit_pending_; });
    if (stop_.requested() || !reinit_pending_) break;
    reinit_pending_ = false;
    const std::optional<BootEntry> entry = reinit_entry_;
    lock.unlock();
    // An MMIO read KVM has not yet completed would be written into the
    // reset vCPU's registers and advance its new PC on the next KVM_RUN:
    // complete it first (docs/architecture.md, "The KVM layer").
    vcpu_->complete_pending_io();
    arm64::reset_vcpu(vm_, *vcpu_, /*powered_off=*/vcpu_->index() > 0);
    if (entry) set_boot_registers(*entry);
    lock.lock();
    reinitialised_ = true;
    cv_.notify_all();
  }
  parked_ = false;
}

void VcpuRunner::set_boot_registers(const BootEntry& entry) {
  vcpu_->set_one_reg(arm64::reg_x(0), entry.dtb);
  for (int i = 1; i <= 3; ++i) vcpu_->set_one_reg(arm64::reg_x(i), 0);
  vcpu_->set_one_reg(arm64::reg_pstate(), arm64::kPstateEl1hMasked);
  vcpu_->set_one_reg(arm64::reg_pc(), entry.pc);
}

void VcpuRunner::join() {
  if (thread_.joinable()) thread_.join();
}

uint64_t VcpuRunner::wait_initialised() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return init_done_; });
  if (init_error_) std::rethrow_exception(init_error_);
  return mpidr_;
}

void VcpuRunner::start(std::optional<BootEntry> entry, std::function<void()> before_run) {
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::kInitialised) return;
    entry_ = entry;
    before_run_ = std::move(before_run);
    phase_ = Phase::kRunning;
  }
  cv_.notify_all();
}

void VcpuRunner::thread_main() {
  name_this_thread("vcpu" + std::to_string(vcpu_->index()));
  try {
    // Secondaries stay powered off in KVM until the guest's PSCI CPU_ON,
    // which also sets their entry point and context id.
    arm64::init_vcpu(vm_, *vcpu_, /*powered_off=*/vcpu_->index() > 0);
    const uint64_t mpidr = mpidr_affinity(vcpu_->get_one_reg(arm64::reg_mpidr()));
    std::lock_guard lock(mutex_);
    mpidr_ = mpidr;
    init_done_ = true;
    if (phase_ == Phase::kInitialising) phase_ = Phase::kInitialised;
  } catch (...) {
    std::lock_guard lock(mutex_);
    init_error_ = std::current_exception();
    init_done_ = true;
    phase_ = Phase::kAborted;
  }
  cv_.notify_all();

  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return phase_ == Phase::kRunning || phase_ == Phase::kAborted; });
    if (phase_ == Phase::kAborted) return;
  }
  try {
    if (entry_) set_boot_registers(*entry_);
    if (before_run_) before_run_();
    run_loop();
  } catch (const std::system_error& e) {
    // KVM_RUN answers ENOSYS when the guest touched an address that is
    // neither RAM nor a device with an instruction it cannot emulate (no
    // syndrome, e.g. LDP/STP): the guest's bug, named as such.
    fail(e.code().value() == ENOSYS
             ? std::string(e.what()) +
                   " (the guest accessed an address that is neither RAM nor a "
                   "device, with an instruction KVM cannot emulate)"
             : std::string(e.what()));
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void VcpuRunner::run_loop() {
  struct Finished {
    VcpuRunner& r;
    ~Finished() {
      {
        std::lock_guard lock(r.mutex_);
        r.finished_ = true;
      }
      r.cv_.notify_all();
    }
  } finished{*this};
  while (!stop_.requested()) {
    park_while_paused();
    if (stop_.requested()) break;
    const VcpuExit ex = vcpu_->run();
    switch (ex.kind) {
      case VcpuExit::Kind::kMmio:         // the bus handled it (or counted it)
      case VcpuExit::Kind::kInterrupted:  // a kick: the loop condition decides
        break;
      case VcpuExit::Kind::kSystemEvent:
        switch (ex.system_event_type) {
          case KVM_SYSTEM_EVENT_SHUTDOWN: stop_.request(StopCause::kPowerOff, "poweroff"); return;
          case KVM_SYSTEM_EVENT_RESET:
            if (!reboot_in_place_) {
              stop_.request(StopCause::kReset, "reset");
              return;
            }
            // KVM has powered every vCPU off; this one parks before its
            // next KVM_RUN until the machine has rebooted the guest.
            {
              std::lock_guard lock(mutex_);
              hold_ = true;
            }
            stop_.request_reboot();
            break;
          case KVM_SYSTEM_EVENT_CRASH:
            fail("the guest reported a crash (KVM_SYSTEM_EVENT_CRASH)");
            return;
          default:
            fail("unexpected system event type " + std::to_string(ex.system_event_type));
            return;
        }
        break;  // a reset to be done in place: the loop parks
      case VcpuExit::Kind::kInternalError:
        fail("KVM_EXIT_INTERNAL_ERROR, suberror " + std::to_string(ex.internal_suberror));
        return;
      case VcpuExit::Kind::kFailEntry: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "KVM_EXIT_FAIL_ENTRY, reason 0x%llx",
                      static_cast<unsigned long long>(
                          vcpu_->run_struct()->fail_entry.hardware_entry_failure_reason));
        fail(buf);
        return;
      }
      default: fail("unexpected exit reason " + std::to_string(ex.raw_reason)); return;
    }
  }
}

void VcpuRunner::fail(const std::string& what) {
  const std::string reason = "vCPU " + std::to_string(vcpu_->index()) + ": " + what;
  KVMMIO_LOG_ERROR("%s", reason.c_str());
  KVMMIO_LOG_ERROR("vCPU %d registers: %s", vcpu_->index(), describe_registers(*vcpu_).c_str());
  stop_.request(StopCause::kFailure, reason);
}

}  // namespace kvmmio::vmm
