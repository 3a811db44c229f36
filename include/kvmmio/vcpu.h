// SPDX-License-Identifier: BSD-2-Clause
// Vcpu: one virtual CPU: its fd, its kvm_run mapping, and the KVM_RUN step.
//
// run() enters the guest once and returns the reason it left. MMIO exits are
// dispatched to the VM's MmioBus before returning (reads are completed in
// kvm_run), so callers only account for them. Port I/O (x86 test guests),
// HLT, SYSTEM_EVENT and errors are returned for the caller to act on.
//
// kick() makes a running (or about to run) KVM_RUN return kInterrupted from
// any thread: it sets kvm_run.immediate_exit and signals the vCPU thread.
//
// Pitfall (docs/architecture.md, "The KVM layer"): after an MMIO or I/O exit, KVM completes the
// access and advances PC only on the next KVM_RUN. Register writes in between
// would be overtaken, so set_*reg*() first completes the pending access with
// an immediate-exit KVM_RUN.
#pragma once

#include <linux/kvm.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <span>

#include "kvmmio/base/counters.h"
#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

class Vm;

struct KVMMIO_EXPORT VcpuExit {
  enum class Kind {
    kMmio,           // dispatched to the bus already
    kIo,             // port I/O: see io_*; for IN, fill io_data() before next run
    kHlt,
    kSystemEvent,    // system_event_type: KVM_SYSTEM_EVENT_SHUTDOWN/RESET/...
    kInterrupted,    // kick() or a signal
    kInternalError,  // internal_suberror
    kFailEntry,
    kUnknown,        // raw_reason
  };
  Kind kind = Kind::kUnknown;
  uint32_t raw_reason = 0;
  // kMmio
  uint64_t mmio_addr = 0;
  uint32_t mmio_len = 0;
  bool mmio_write = false;
  uint64_t mmio_value = 0;  // value written, or value returned to the guest
  bool mmio_claimed = false;
  // kIo
  uint16_t io_port = 0;
  uint8_t io_size = 0;
  bool io_out = false;
  uint32_t io_count = 0;
  // kSystemEvent
  uint32_t system_event_type = 0;
  // kInternalError
  uint32_t internal_suberror = 0;
};

// Exits by reason since the vCPU was created.
#define KVMMIO_VCPU_EXITS(C)                                                          \
  C(mmio, "MMIO accesses KVM handed to the VMM")                                     \
  C(io, "port I/O (x86-64 test guests only)")                                        \
  C(hlt, "HLT (x86-64 test guests only)")                                            \
  C(system_event, "PSCI system events: power-off, reset")                            \
  C(interrupted, "KVM_RUN interrupted: vCPU kicks and signals")                      \
  C(internal_error, "KVM internal errors")                                           \
  C(fail_entry, "failed guest entries")                                              \
  C(unknown, "exit reasons kvmmio does not handle")
struct KVMMIO_EXPORT VcpuExitCounts {
  KVMMIO_VCPU_EXITS(KVMMIO_ATOMIC_COUNTER)
  KVMMIO_COUNTER_TABLE(KVMMIO_VCPU_EXITS)
  uint64_t total() const;
};

class KVMMIO_EXPORT Vcpu {
 public:
  Vcpu(Vm& vm, int index, UniqueFd fd);
  ~Vcpu();
  Vcpu(const Vcpu&) = delete;
  Vcpu& operator=(const Vcpu&) = delete;

  int index() const { return index_; }
  int fd() const { return fd_.get(); }
  Vm& vm() const { return vm_; }
  kvm_run* run_struct() const { return run_; }

  VcpuExit run();
  void kick();

  // For kIo exits: the data of the current access (size * count bytes).
  std::span<uint8_t> io_data() const;

  // Completes an MMIO/IO access KVM still owes the guest (see header note).
  void complete_pending_io();

  // arm64: KVM_SET/GET_ONE_REG. x86: KVM_SET/GET_(S)REGS via the raw fd.
  void set_one_reg(uint64_t id, uint64_t value);
  uint64_t get_one_reg(uint64_t id);

  const VcpuExitCounts& exit_counts() const { return counts_; }

 private:
  Vm& vm_;
  int index_;
  UniqueFd fd_;
  kvm_run* run_ = nullptr;
  size_t run_size_ = 0;
  bool io_pending_ = false;
  std::atomic<pthread_t> thread_{};
  std::atomic<bool> in_run_{false};
  VcpuExitCounts counts_;
};

}  // namespace kvmmio
