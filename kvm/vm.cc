// SPDX-License-Identifier: BSD-2-Clause
// Vm: VM creation or adoption, memory slots (numbers from the range the Vm
// may use), ioeventfd/irqfd ioctls, and routing commits (deferred, with
// queued irqfds, until the irqchip is ready).
#include "kvmmio/vm.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "kvmmio/base/error.h"
#include "kvmmio/vcpu.h"

namespace kvmmio {

namespace {

void require_vm_caps(const Kvm& kvm) {
  kvm.require(KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY", "guest RAM");
  kvm.require(KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD", "queue notifications without exits");
  kvm.require(KVM_CAP_IRQFD, "KVM_CAP_IRQFD", "interrupts without the VMM");
  kvm.require(KVM_CAP_IRQ_ROUTING, "KVM_CAP_IRQ_ROUTING", "GSI routing");
  kvm.require(KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT", "stopping vCPUs cleanly");
}

// What an fd is, as /proc/self/fd says ("anon_inode:kvm-vm" for a VM).
std::string fd_target(int fd) {
  char buf[256];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n < 0 ? std::string("no open fd: ") + std::strerror(errno) : std::string(buf, static_cast<size_t>(n));
}

// Attempts of KVM_CREATE_VM that a signal may interrupt (see Vm::Vm).
constexpr int kCreateVmTries = 1000;

}  // namespace

Vm::Vm(Kvm& kvm) : kvm_(kvm) {
  require_vm_caps(kvm);
  // Machine type 0: the architecture's default (a 40-bit IPA space on arm64).
  // KVM_CREATE_VM registers an MMU notifier, whose walk of the process's
  // mappings gives up with EINTR while a signal is pending (the kernel's
  // mm_take_all_locks()) and creates nothing. The signal is handled on the
  // way out, so the call is made again; the bound only keeps a process
  // that is flooded with signals from looping forever.
  int fd = -1;
  for (int tries = 0; tries < kCreateVmTries; ++tries) {
    fd = ::ioctl(kvm.fd(), KVM_CREATE_VM, 0);
    if (fd >= 0 || errno != EINTR) break;
  }
  fd_ = UniqueFd(fd);
  if (!fd_) throw_errno("KVM_CREATE_VM");
  const int nr = kvm.check_extension(KVM_CAP_NR_MEMSLOTS);
  slots_ = nr > 0 ? static_cast<uint32_t>(nr) : 32;  // KVM's minimum before the capability
}

Vm::Vm(Kvm& kvm, const AdoptedVm& adopted) : kvm_(kvm), adopted_(true) {
  require_vm_caps(kvm);
  const std::string target = fd_target(adopted.fd);
  if (target != "anon_inode:kvm-vm")
    throw UserError("cannot adopt fd " + std::to_string(adopted.fd) + " as a KVM VM: it is " + target +
                    ", not the fd KVM_CREATE_VM returned");
  if (adopted.first_memslot + adopted.memslots < adopted.first_memslot)
    throw UserError("the memory slot numbers given to kvmmio wrap: first " +
                    std::to_string(adopted.first_memslot) + ", " + std::to_string(adopted.memslots) + " of them");
  fd_ = UniqueFd(::fcntl(adopted.fd, F_DUPFD_CLOEXEC, 0));
  if (!fd_) throw_errno("dup of the adopted VM fd");
  first_slot_ = adopted.first_memslot;
  slots_ = adopted.memslots;
  irqchip_ready_ = adopted.irqchip_ready;
}

Vm::~Vm() {
  for (const RamSlotEntry& e : ram_slots_) remove_slot(e.slot, e.gpa);
}

uint32_t Vm::take_slot() {
  std::lock_guard lock(slot_mutex_);
  for (uint32_t i = 0; i < slots_; ++i) {
    if (used_slots_.insert(first_slot_ + i).second) return first_slot_ + i;
  }
  if (slots_ == 0)
    throw UserError("kvmmio may make no KVM memory slot in this VM: the embedder gave it none "
                    "(AdoptedVm::memslots); give it some, or ask for no slot (RamSlot::kExisting, regs=trap)");
  throw UserError("all " + std::to_string(slots_) + " KVM memory slots kvmmio may use (from " +
                  std::to_string(first_slot_) + ") are taken: give it more, or use fewer "
                  "(each regs=mirror device takes one)");
}

void Vm::release_slot(uint32_t slot) {
  std::lock_guard lock(slot_mutex_);
  used_slots_.erase(slot);
}

void Vm::set_slot(uint32_t slot, uint32_t flags, uint64_t gpa, uint64_t size, const void* host,
                  const char* what) {
  kvm_userspace_memory_region region{};
  region.slot = slot;
  region.flags = flags;
  region.guest_phys_addr = gpa;
  region.memory_size = size;
  region.userspace_addr = reinterpret_cast<uint64_t>(host);
  if (::ioctl(fd_.get(), KVM_SET_USER_MEMORY_REGION, &region) != 0) throw_errno(what);
}

const RamRegion& Vm::register_ram(const std::function<const RamRegion&()>& add) {
  const uint32_t slot = take_slot();
  try {
    const RamRegion& r = add();
    set_slot(slot, 0, r.gpa(), r.size(), r.host(), "KVM_SET_USER_MEMORY_REGION");
    ram_slots_.push_back({slot, r.gpa()});
    return r;
  } catch (...) {
    release_slot(slot);
    throw;
  }
}

const RamRegion& Vm::add_ram(uint64_t gpa, uint64_t size) {
  return register_ram([&]() -> const RamRegion& { return memory_.add_ram(gpa, size); });
}

const RamRegion& Vm::add_ram(const RamMapping& mapping, RamSlot slot) {
  if (slot == RamSlot::kExisting) return memory_.add_ram(mapping);
  return register_ram([&]() -> const RamRegion& { return memory_.add_ram(mapping); });
}

bool Vm::supports_readonly_slots() const { return kvm_.check_extension(KVM_CAP_READONLY_MEM) > 0; }

ReadOnlySlot Vm::map_readonly(uint64_t gpa, std::span<const uint8_t> host) {
  kvm_.require(KVM_CAP_READONLY_MEM, "KVM_CAP_READONLY_MEM", "read-only memory slots");
  const uint32_t slot = take_slot();
  try {
    set_slot(slot, KVM_MEM_READONLY, gpa, host.size(), host.data(), "KVM_SET_USER_MEMORY_REGION (read-only)");
  } catch (...) {
    release_slot(slot);
    throw;
  }
  return ReadOnlySlot(this, slot, gpa);
}

void Vm::remove_slot(uint32_t slot, uint64_t gpa) {
  kvm_userspace_memory_region region{};
  region.slot = slot;
  region.guest_phys_addr = gpa;  // memory_size 0 deletes the slot
  (void)::ioctl(fd_.get(), KVM_SET_USER_MEMORY_REGION, &region);
  release_slot(slot);
}

ReadOnlySlot::ReadOnlySlot(ReadOnlySlot&& other) noexcept
    : vm_(std::exchange(other.vm_, nullptr)), slot_(other.slot_), gpa_(other.gpa_) {}

ReadOnlySlot& ReadOnlySlot::operator=(ReadOnlySlot&& other) noexcept {
  if (this != &other) {
    reset();
    vm_ = std::exchange(other.vm_, nullptr);
    slot_ = other.slot_;
    gpa_ = other.gpa_;
  }
  return *this;
}

void ReadOnlySlot::reset() {
  if (vm_) std::exchange(vm_, nullptr)->remove_slot(slot_, gpa_);
}

std::unique_ptr<Vcpu> Vm::create_vcpu(int index) {
  UniqueFd fd(::ioctl(fd_.get(), KVM_CREATE_VCPU, index));
  if (!fd) {
    const int err = errno;
    if (err == EINVAL)
      throw UserError("cannot create vCPU " + std::to_string(index) + ": KVM allows at most " +
                      std::to_string(kvm_.check_extension(KVM_CAP_MAX_VCPUS)) +
                      " vCPUs on this host; use fewer");
    errno = err;
    throw_errno("KVM_CREATE_VCPU");
  }
  ++vcpu_count_;
  return std::make_unique<Vcpu>(*this, index, std::move(fd));
}

namespace {
kvm_ioeventfd to_kvm(const IoEventSpec& spec, int eventfd, bool deassign) {
  kvm_ioeventfd io{};
  io.addr = spec.addr;
  io.len = spec.len;
  io.fd = eventfd;
  io.datamatch = spec.datamatch;
  if (spec.has_datamatch) io.flags |= KVM_IOEVENTFD_FLAG_DATAMATCH;
  if (spec.pio) io.flags |= KVM_IOEVENTFD_FLAG_PIO;
  if (deassign) io.flags |= KVM_IOEVENTFD_FLAG_DEASSIGN;
  return io;
}
}  // namespace

void Vm::assign_ioeventfd(const IoEventSpec& spec, int eventfd) {
  kvm_ioeventfd io = to_kvm(spec, eventfd, false);
  if (::ioctl(fd_.get(), KVM_IOEVENTFD, &io) != 0) throw_errno("KVM_IOEVENTFD assign");
}

void Vm::deassign_ioeventfd(const IoEventSpec& spec, int eventfd) {
  kvm_ioeventfd io = to_kvm(spec, eventfd, true);
  if (::ioctl(fd_.get(), KVM_IOEVENTFD, &io) != 0) throw_errno("KVM_IOEVENTFD deassign");
}

void Vm::apply_irqfd(uint32_t gsi, int eventfd, int resamplefd, bool deassign) {
  kvm_irqfd irqfd{};
  irqfd.fd = static_cast<uint32_t>(eventfd);
  irqfd.gsi = gsi;
  if (deassign) irqfd.flags |= KVM_IRQFD_FLAG_DEASSIGN;
  if (resamplefd >= 0 && !deassign) {
    irqfd.flags |= KVM_IRQFD_FLAG_RESAMPLE;
    irqfd.resamplefd = static_cast<uint32_t>(resamplefd);
  }
  if (::ioctl(fd_.get(), KVM_IRQFD, &irqfd) != 0)
    throw_errno(deassign ? "KVM_IRQFD deassign" : "KVM_IRQFD assign");
}

void Vm::assign_irqfd(uint32_t gsi, int eventfd, int resamplefd) {
  std::lock_guard lock(irq_mutex_);
  if (!irqchip_ready_) {
    pending_irqfds_.push_back({gsi, eventfd, resamplefd});
    return;
  }
  apply_irqfd(gsi, eventfd, resamplefd, false);
}

void Vm::deassign_irqfd(uint32_t gsi, int eventfd) {
  std::lock_guard lock(irq_mutex_);
  auto it = std::find_if(pending_irqfds_.begin(), pending_irqfds_.end(),
                         [&](const PendingIrqFd& p) { return p.gsi == gsi && p.eventfd == eventfd; });
  if (it != pending_irqfds_.end()) {
    pending_irqfds_.erase(it);  // never reached KVM
    return;
  }
  apply_irqfd(gsi, eventfd, -1, true);
}

void Vm::commit_routing() {
  std::lock_guard lock(irq_mutex_);
  if (!irqchip_ready_) {
    routing_dirty_ = true;  // sent by set_irqchip_ready()
    return;
  }
  send_routing_locked();
}

void Vm::send_routing_locked() {
  std::vector<uint64_t> table = routing_.serialize();
  if (::ioctl(fd_.get(), KVM_SET_GSI_ROUTING, table.data()) != 0) {
    // Seen on a PVM x86 host: KVM_CAP_IRQ_ROUTING advertised, ioctl refused.
    if (errno == ENOTTY)
      throw UserError("this host's KVM refuses KVM_SET_GSI_ROUTING (ENOTTY) although it reports "
                      "KVM_CAP_IRQ_ROUTING: only KVM's default routing can be used here");
    throw_errno("KVM_SET_GSI_ROUTING");
  }
  ++routing_commits_;
  routing_dirty_ = false;
}

void Vm::set_irqchip_ready() {
  std::lock_guard lock(irq_mutex_);
  irqchip_ready_ = true;
  if (routing_dirty_) send_routing_locked();
  for (const auto& p : pending_irqfds_) apply_irqfd(p.gsi, p.eventfd, p.resamplefd, false);
  pending_irqfds_.clear();
}

void Vm::irq_line(uint32_t irq, bool level) {
  kvm_irq_level line{};
  line.irq = irq;
  line.level = level ? 1 : 0;
  if (::ioctl(fd_.get(), KVM_IRQ_LINE, &line) != 0) throw_errno("KVM_IRQ_LINE");
}

}  // namespace kvmmio
