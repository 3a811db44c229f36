// SPDX-License-Identifier: BSD-2-Clause
// VcpuRunner (arm64): one vCPU and the thread that owns it. Every ioctl on
// the vCPU after KVM_CREATE_VCPU happens on this thread: KVM_ARM_VCPU_INIT,
// register set-up, KVM_RUN, and the register dump on failure, as KVM's API
// documentation asks of vCPU ioctls (KVM_CREATE_VCPU itself aside, made by
// the machine). It was first done as a guard against vCPUs that misbehaved
// on the nested platform; that was QEMU's stale translated code
// (docs/arm64-platform.md, "Known L1 issues").
//
// The thread starts at construction and initialises the vCPU (PSCI 0.2;
// secondaries powered off until the guest's CPU_ON), then waits: the
// machine creates the vGIC (which needs every vCPU initialised) and loads
// the guest, then start()s each runner. The run loop ends on a PSCI system
// event, a failure (registers logged), or a StopRequest plus kick().
//
// With reboot in place (--on-reboot restart), the guest's SYSTEM_RESET
// does not end the loop: the vCPU holds itself (parks before its next
// KVM_RUN) and asks the machine for a reboot (StopRequest::request_reboot).
// The machine holds the others, resets the devices and reloads the guest,
// has each thread re-initialise its own vCPU (reinitialise()) and then
// releases them all: the thread and the vCPU fd are the same throughout,
// so its seccomp filter stays in force.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "kvmmio/vcpu.h"
#include "kvmmio/vm.h"
#include "vmm/process/stop_request.h"

namespace kvmmio::vmm {

// Where the boot vCPU enters the kernel (booting.rst: x0 = DTB, x1-x3 = 0,
// EL1h with D, A, I, F masked).
struct BootEntry {
  uint64_t pc = 0;
  uint64_t dtb = 0;
};

class VcpuRunner {
 public:
  // `reboot_in_place`: the guest's SYSTEM_RESET asks for a reboot rather
  // than a stop (StopCause::kReset).
  VcpuRunner(Vm& vm, std::unique_ptr<Vcpu> vcpu, StopRequest& stop, bool reboot_in_place = false);
  // Ends the thread if it has not finished (as stop(), after making a
  // StopRequest if none was made) and joins it.
  ~VcpuRunner();
  VcpuRunner(const VcpuRunner&) = delete;
  VcpuRunner& operator=(const VcpuRunner&) = delete;

  // Waits for the vCPU's initialisation; rethrows its error. Returns the
  // vCPU's MPIDR affinity, for its cpu node.
  uint64_t wait_initialised();
  // Lets the vCPU run; the boot vCPU gets `entry`. `before_run` runs on
  // the vCPU's thread right before its first KVM_RUN (the thread's seccomp
  // filter); if it throws, the vCPU fails as a KVM_RUN error would.
  void start(std::optional<BootEntry> entry, std::function<void()> before_run = {});
  // Ends the thread: before start() it gives up waiting; after, the vCPU
  // is kicked out of KVM_RUN and the loop, seeing the StopRequest the
  // caller made first, ends. Then join().
  void stop();
  void join();

  // The control socket's pause (control_protocol.h): the vCPU is kicked
  // out of KVM_RUN and parks before entering it again, until resume() or
  // a stop. Either may come from any thread, repeated at will.
  void pause();
  void resume();
  // True once the thread is parked (or has no guest to run: not started,
  // finished), so it is outside KVM_RUN.
  bool parked() const;
  // Waits until parked() or the deadline; returns parked().
  bool wait_parked(std::chrono::steady_clock::time_point deadline);

  // Reboot in place, from the machine's main thread. hold() kicks the vCPU
  // out of KVM_RUN and parks it as pause() does, but only release() ends
  // it (the control socket's resume does not). While it is held and
  // parked, reinitialise() has the vCPU's own thread reset the vCPU
  // (arm64::reset_vcpu, after completing any access KVM owes the guest)
  // and, with `entry`, set the boot registers; wait_reinitialised() returns
  // true once that is done, false if the thread has ended (a failure, a
  // stop).
  void hold();
  void reinitialise(std::optional<BootEntry> entry);
  bool wait_reinitialised();
  void release();

  const Vcpu& vcpu() const { return *vcpu_; }

 private:
  enum class Phase { kInitialising, kInitialised, kRunning, kAborted };
  void thread_main();
  void run_loop();
  void fail(const std::string& what);
  void park_while_paused();
  void set_boot_registers(const BootEntry& entry);  // on the vCPU's thread

  Vm& vm_;
  std::unique_ptr<Vcpu> vcpu_;
  StopRequest& stop_;
  const bool reboot_in_place_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  Phase phase_ = Phase::kInitialising;
  bool init_done_ = false;
  bool pause_ = false, parked_ = false, finished_ = false;
  bool hold_ = false;              // reboot in place: parked until release()
  bool reinit_pending_ = false;    // reinitialise() asked, not yet done
  bool reinitialised_ = false;     // done since the last reinitialise()
  std::optional<BootEntry> reinit_entry_;
  std::exception_ptr init_error_;
  uint64_t mpidr_ = 0;
  std::optional<BootEntry> entry_;
  std::function<void()> before_run_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace kvmmio::vmm
