// SPDX-License-Identifier: BSD-2-Clause
// Vm: one KVM virtual machine: its fd, memory slots, GSI routing table,
// irqfd bookkeeping, and the MMIO bus its vCPUs dispatch to.
//
// Order matters on arm64: irqfds can be routed only once the vGIC exists and
// is initialised. Until set_irqchip_ready(), irqfd assignments are queued and
// applied then; routing commits are deferred the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "kvmmio/gsi_routing.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/kvm.h"
#include "kvmmio/mmio_bus.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

class Vcpu;

// Where and how an ioeventfd matches guest accesses.
struct IoEventSpec {
  uint64_t addr = 0;
  uint32_t len = 0;  // 0 = any length (KVM_CAP_IOEVENTFD_ANY_LENGTH)
  bool has_datamatch = false;
  uint64_t datamatch = 0;
  bool pio = false;  // x86 port I/O instead of MMIO
};

class Vm;

// A read-only KVM memory slot (KVM_MEM_READONLY) over host memory the
// caller owns and keeps mapped for the slot's life: guest reads there are
// memory reads, guest writes fault to KVM's MMIO path (ioeventfds, then
// KVM_EXIT_MMIO). Removed from the VM on destruction.
class ReadOnlySlot {
 public:
  ReadOnlySlot() = default;
  ReadOnlySlot(ReadOnlySlot&& other) noexcept;
  ReadOnlySlot& operator=(ReadOnlySlot&& other) noexcept;
  ~ReadOnlySlot() { reset(); }
  void reset();
  explicit operator bool() const { return vm_ != nullptr; }
  uint64_t gpa() const { return gpa_; }

 private:
  friend class Vm;
  ReadOnlySlot(Vm* vm, uint32_t slot, uint64_t gpa) : vm_(vm), slot_(slot), gpa_(gpa) {}
  Vm* vm_ = nullptr;
  uint32_t slot_ = 0;
  uint64_t gpa_ = 0;
};

class Vm {
 public:
  explicit Vm(Kvm& kvm);
  ~Vm();
  Vm(const Vm&) = delete;
  Vm& operator=(const Vm&) = delete;

  Kvm& kvm() const { return kvm_; }
  int fd() const { return fd_.get(); }
  GuestMemory& memory() { return memory_; }
  MmioBus& mmio_bus() { return mmio_bus_; }

  // Adds RAM to guest memory and registers it as a KVM memory slot.
  const RamRegion& add_ram(uint64_t gpa, uint64_t size);

  // Maps `host` (whole host pages, page-aligned) read-only at `gpa`. Not
  // guest RAM: GuestMemory and vhost never see it. Throws UserError where
  // KVM lacks KVM_CAP_READONLY_MEM (see supports_readonly_slots()).
  [[nodiscard]] ReadOnlySlot map_readonly(uint64_t gpa, std::span<const uint8_t> host);
  bool supports_readonly_slots() const;

  std::unique_ptr<Vcpu> create_vcpu(int index);
  int vcpu_count() const { return vcpu_count_; }

  // Raw ioeventfd/irqfd operations; prefer the RAII IoEventFd and IrqFd.
  void assign_ioeventfd(const IoEventSpec& spec, int eventfd);
  void deassign_ioeventfd(const IoEventSpec& spec, int eventfd);
  void assign_irqfd(uint32_t gsi, int eventfd, int resamplefd = -1);
  void deassign_irqfd(uint32_t gsi, int eventfd);

  // Routing: edit the table, then commit() resends the whole of it.
  GsiRouting& routing() { return routing_; }
  void commit_routing();

  // Called by the interrupt-controller backend once it is initialised:
  // applies queued routing and irqfds.
  void set_irqchip_ready();
  bool irqchip_ready() const { return irqchip_ready_; }

  // Sets the level of an interrupt line from userspace (KVM_IRQ_LINE); the
  // encoding of `irq` is the architecture's (see arch headers).
  void irq_line(uint32_t irq, bool level);

  // Counters for tests and stats.
  uint64_t routing_commits() const { return routing_commits_; }

 private:
  struct PendingIrqFd {
    uint32_t gsi;
    int eventfd;
    int resamplefd;
  };
  void apply_irqfd(uint32_t gsi, int eventfd, int resamplefd, bool deassign);
  void send_routing_locked();  // KVM_SET_GSI_ROUTING with the whole table
  friend class ReadOnlySlot;
  void remove_slot(uint32_t slot, uint64_t gpa);

  Kvm& kvm_;
  UniqueFd fd_;
  GuestMemory memory_;
  MmioBus mmio_bus_;
  GsiRouting routing_;
  uint32_t next_slot_ = 0;
  int vcpu_count_ = 0;

  std::mutex irq_mutex_;  // guards the queue and readiness below
  bool irqchip_ready_ = false;
  bool routing_dirty_ = false;
  std::vector<PendingIrqFd> pending_irqfds_;
  uint64_t routing_commits_ = 0;
};

}  // namespace kvmmio
