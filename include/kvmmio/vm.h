// SPDX-License-Identifier: BSD-2-Clause
// Vm: one KVM virtual machine: its fd, memory slots, GSI routing table,
// irqfd bookkeeping, and the MMIO bus its vCPUs dispatch to.
//
// Either kvmmio creates the VM (Vm(Kvm&)), or it adopts one an embedder
// made and keeps running (Vm(Kvm&, const AdoptedVm&)): a VMM that owns its
// VM, its RAM and its vCPUs, as kvmtool or QEMU do, and hands kvmmio the
// VM fd, the memory slot numbers kvmmio may use, and its RAM (RamMapping,
// RamSlot::kExisting). kvmmio then makes no memory slot, interrupt
// controller or routing change it is not asked for (docs/embedding.md,
// "Adopting the embedder's VM").
//
// Order matters on arm64: irqfds can be routed only once the vGIC exists and
// is initialised. Until set_irqchip_ready(), irqfd assignments are queued and
// applied then; routing commits are deferred the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <vector>

#include "kvmmio/base/export.h"
#include "kvmmio/gsi_routing.h"
#include "kvmmio/guest_memory.h"
#include "kvmmio/kvm.h"
#include "kvmmio/mmio_bus.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

class Vcpu;

// Where and how an ioeventfd matches guest accesses.
struct KVMMIO_EXPORT IoEventSpec {
  uint64_t addr = 0;
  uint32_t len = 0;  // 0 = any length (KVM_CAP_IOEVENTFD_ANY_LENGTH)
  bool has_datamatch = false;
  uint64_t datamatch = 0;
  bool pio = false;  // x86 port I/O instead of MMIO
};

class Vm;

// The embedder's VM, for Vm's adopting constructor.
struct KVMMIO_EXPORT AdoptedVm {
  // A KVM VM fd (KVM_CREATE_VM). The Vm keeps a dup of it: the embedder
  // may close its own whenever it likes.
  int fd = -1;
  // The memory slot numbers kvmmio may use, [first_memslot, first_memslot +
  // memslots): for RAM it registers (RamSlot::kRegister) and read-only
  // slots (map_readonly(), so regs=mirror: one per device). The embedder
  // keeps them free. 0: kvmmio makes no memory slot at all.
  uint32_t first_memslot = 0;
  uint32_t memslots = 0;
  // The embedder's interrupt controller (on arm64 its vGIC) is initialised
  // already: irqfds go to KVM at once. Else they are queued until
  // set_irqchip_ready(), as on a VM of kvmmio's own.
  bool irqchip_ready = false;
};

// Who makes guest RAM a KVM memory slot.
enum class RamSlot {
  kRegister,  // kvmmio does, with a memory slot number it may use
  kExisting,  // the embedder has (an adopted VM's RAM, as a rule)
};

// A read-only KVM memory slot (KVM_MEM_READONLY) over host memory the
// caller owns and keeps mapped for the slot's life: guest reads there are
// memory reads, guest writes fault to KVM's MMIO path (ioeventfds, then
// KVM_EXIT_MMIO). Removed from the VM on destruction.
class KVMMIO_EXPORT ReadOnlySlot {
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

class KVMMIO_EXPORT Vm {
 public:
  // Creates a VM. It may use every memory slot KVM offers
  // (KVM_CAP_NR_MEMSLOTS).
  explicit Vm(Kvm& kvm);
  // Adopts the embedder's VM. UserError when `adopted.fd` is no KVM VM, or
  // when the slot range wraps.
  Vm(Kvm& kvm, const AdoptedVm& adopted);
  // Removes the memory slots kvmmio made for RAM (an adopted VM lives on).
  ~Vm();
  Vm(const Vm&) = delete;
  Vm& operator=(const Vm&) = delete;

  Kvm& kvm() const { return kvm_; }
  int fd() const { return fd_.get(); }
  GuestMemory& memory() { return memory_; }
  MmioBus& mmio_bus() { return mmio_bus_; }

  bool adopted() const { return adopted_; }

  // Adds RAM to guest memory and registers it as a KVM memory slot.
  const RamRegion& add_ram(uint64_t gpa, uint64_t size);
  // Adds the embedder's RAM to guest memory (GuestMemory::add_ram), and
  // with RamSlot::kRegister makes it a KVM memory slot too.
  const RamRegion& add_ram(const RamMapping& mapping, RamSlot slot);

  // Maps `host` (whole host pages, page-aligned) read-only at `gpa`. Not
  // guest RAM: GuestMemory and vhost never see it. Throws UserError where
  // KVM lacks KVM_CAP_READONLY_MEM (see supports_readonly_slots()), or
  // when every memory slot number the Vm may use is taken.
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
  // A free memory slot number of [first_slot_, first_slot_ + slots_), or
  // UserError; release_slot() frees one. set_slot() registers a slot,
  // remove_slot() deletes and frees it.
  uint32_t take_slot();
  void release_slot(uint32_t slot);
  void set_slot(uint32_t slot, uint32_t flags, uint64_t gpa, uint64_t size, const void* host, const char* what);
  void remove_slot(uint32_t slot, uint64_t gpa);
  // Adds RAM with `add` and makes it a memory slot of a number taken here.
  const RamRegion& register_ram(const std::function<const RamRegion&()>& add);

  Kvm& kvm_;
  UniqueFd fd_;
  bool adopted_ = false;
  GuestMemory memory_;
  MmioBus mmio_bus_;
  GsiRouting routing_;
  std::mutex slot_mutex_;  // guards the slot numbers below
  uint32_t first_slot_ = 0;
  uint32_t slots_ = 0;
  std::set<uint32_t> used_slots_;
  struct RamSlotEntry {
    uint32_t slot;
    uint64_t gpa;
  };
  std::vector<RamSlotEntry> ram_slots_;  // RAM kvmmio registered, removed by ~Vm
  int vcpu_count_ = 0;

  std::mutex irq_mutex_;  // guards the queue and readiness below
  bool irqchip_ready_ = false;
  bool routing_dirty_ = false;
  std::vector<PendingIrqFd> pending_irqfds_;
  uint64_t routing_commits_ = 0;
};

}  // namespace kvmmio
