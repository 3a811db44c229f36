// SPDX-License-Identifier: BSD-2-Clause
// A Vm that adopts the embedder's VM (Vm(Kvm&, const AdoptedVm&)), on real
// /dev/kvm: guests run in the embedder's RAM, handed over as a host address
// or as an fd and offset; kvmmio makes memory slots only with the numbers it
// was given, reuses them, and removes its RAM slots when it goes; the VM's
// irqfds reach the guest; an fd that is no VM is refused. Architecture-neutral:
// x86-64 here, KVM/ARM in the nested arm64 platform.
#include <gtest/gtest.h>
#include <linux/kvm.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <cstring>
#include <string>
#include <vector>

#include "../guests/test_machine.h"
#include "../virtio/echo_device.h"
#include "kvm_fixture.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/irqfd.h"
#include "kvmmio/virtio/kvm_mmio_slot.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/register_mirror.h"

namespace kvmmio::test {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kGsi = 5;
constexpr uint64_t kPage = 4096;
// Read-only pages away from RAM and the test device, one 64 KiB step apart
// (a whole host page each, whatever the host's page size).
constexpr uint64_t kReadOnlyBase = 0x0b000000;
constexpr uint64_t kReadOnlyStep = 0x10000;


class AdoptedVmTest : public KvmTest, public ::testing::WithParamInterface<VmOwner> {
 protected:
  MachineOptions options() const {
    MachineOptions o;
    o.vm = GetParam();
    return o;
  }
};

std::string owner_name(const ::testing::TestParamInfo<VmOwner>& info) {
  return info.param == VmOwner::kEmbedderHostRam ? "HostRam" : "FdRam";
}

INSTANTIATE_TEST_SUITE_P(Ram, AdoptedVmTest,
                         ::testing::Values(VmOwner::kEmbedderHostRam, VmOwner::kEmbedderFdRam), owner_name);

TEST_P(AdoptedVmTest, GuestsRunInTheEmbeddersRam) {
  TestMachine m(*kvm, options());
  EXPECT_TRUE(m.vm().adopted());
  ASSERT_EQ(m.vm().memory().regions().size(), 1u);
  const RamRegion& ram = *m.vm().memory().regions()[0];
  if (GetParam() == VmOwner::kEmbedderHostRam) {
    EXPECT_FALSE(ram.owns_mapping()) << "kvmmio mapped what the embedder had mapped";
    EXPECT_EQ(ram.memfd(), -1);
  } else {
    EXPECT_TRUE(ram.owns_mapping());
    EXPECT_EQ(ram.fd_offset(), static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
  }
  m.load_store_loop(0x1234, 5);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(m.notify_exits(), 5u);
}

TEST_P(AdoptedVmTest, TheMirrorPageTakesAGivenSlotAndLoadsDoNotExit) {
  TestMachine m(*kvm, options());
  if (!m.vm().supports_readonly_slots()) GTEST_SKIP() << "no KVM_CAP_READONLY_MEM here";
  virtio::RegisterMirror page(virtio::kMmioWindowSize);
  page.update32(virtio::reg::kInterruptStatus, 1);
  ReadOnlySlot slot = m.vm().map_readonly(TestMachine::kTestDeviceBase, page.page());
  m.load_load_loop(virtio::reg::kInterruptStatus, 100);
  const Report r = m.run_until_report();
  // The guest still runs from the embedder's RAM (slot 0 untouched) and its
  // loads read the page.
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(r.value, 100u);
  EXPECT_EQ(m.mmio_exits(), TestMachine::kDoneReportMmioExits);
}

TEST_P(AdoptedVmTest, SlotNumbersComeFromTheGivenRangeAndAreReused) {
  TestMachine m(*kvm, options());
  if (!m.vm().supports_readonly_slots()) GTEST_SKIP() << "no KVM_CAP_READONLY_MEM here";
  // The fd variant's RAM took one of the numbers.
  const uint32_t free_slots =
      TestMachine::kAdoptedMemslots - (GetParam() == VmOwner::kEmbedderFdRam ? 1 : 0);
  std::deque<virtio::RegisterMirror> pages;  // not movable: a deque keeps them in place
  for (uint32_t i = 0; i <= free_slots; ++i) pages.emplace_back(virtio::kMmioWindowSize);
  std::vector<ReadOnlySlot> slots;
  for (uint32_t i = 0; i < free_slots; ++i)
    slots.push_back(m.vm().map_readonly(kReadOnlyBase + i * kReadOnlyStep, pages[i].page()));
  try {
    (void)m.vm().map_readonly(kReadOnlyBase + free_slots * kReadOnlyStep, pages[free_slots].page());
    FAIL() << "a read-only slot beyond the " << TestMachine::kAdoptedMemslots << " given";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("are taken"), std::string::npos) << e.what();
  }
  slots.front().reset();  // its number is free again
  slots.front() = m.vm().map_readonly(kReadOnlyBase + free_slots * kReadOnlyStep, pages[free_slots].page());
  m.load_store_loop(1, 3);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kDone) << "the embedder's RAM slot was touched";
}

TEST_P(AdoptedVmTest, IrqFdsReachTheGuest) {
  TestMachine m(*kvm, options());
  IrqFd irq(m.vm(), kGsi);
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  irq.trigger();
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kIrq) << to_string(r.kind);
  EXPECT_EQ(r.value, TestMachine::expected_irq_report(kGsi));
}

// A raw VM of the test's, as an embedder makes it.
struct RawVm {
  explicit RawVm(Kvm& kvm) : fd(::ioctl(kvm.fd(), KVM_CREATE_VM, 0)) {
    if (!fd) throw_errno("KVM_CREATE_VM");
  }
  UniqueFd fd;
};

TEST_F(KvmTest, AVmGivenNoSlotsMakesNone) {
  RawVm raw(*kvm);
  Vm vm(*kvm, AdoptedVm{.fd = raw.fd.get()});
  virtio::RegisterMirror page(virtio::kMmioWindowSize);
  try {
    (void)vm.map_readonly(kReadOnlyBase, page.page());
    FAIL() << "a read-only slot without slot numbers";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("gave it none"), std::string::npos) << e.what();
  }
  EXPECT_THROW(vm.add_ram(0x100000, kPage), UserError);
  // regs=mirror needs a slot, so a KvmMmioSlot asks for regs=trap here.
  EventLoop loop;
  virtio::test::EchoDevice device(vm.memory(), {.queues = 1, .max_size = 64});
  if (vm.supports_readonly_slots()) {
    EXPECT_THROW((void)virtio::KvmMmioSlot(vm, device, loop, {.base = kReadOnlyBase, .gsi = kGsi}), UserError);
  }
  virtio::KvmMmioSlotConfig trap{.base = kReadOnlyBase, .gsi = kGsi};
  trap.options.regs = virtio::RegsMode::kTrap;
  virtio::KvmMmioSlot slot(vm, device, loop, trap);
  EXPECT_FALSE(slot.mirror_mapped());
}

TEST_F(KvmTest, AdoptingAnFdThatIsNoVmIsRefused) {
  UniqueFd not_a_vm(::eventfd(0, EFD_CLOEXEC));
  try {
    Vm vm(*kvm, AdoptedVm{.fd = not_a_vm.get()});
    FAIL() << "an eventfd was adopted as a VM";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not the fd KVM_CREATE_VM returned"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)Vm(*kvm, AdoptedVm{.fd = -1}), UserError);
  RawVm raw(*kvm);
  EXPECT_THROW((void)Vm(*kvm, AdoptedVm{.fd = raw.fd.get(), .first_memslot = 0xffffffff, .memslots = 2}), UserError);
}

TEST_F(KvmTest, TheAdoptedVmOutlivesTheEmbeddersFd) {
  RawVm raw(*kvm);
  Vm vm(*kvm, AdoptedVm{.fd = raw.fd.get(), .first_memslot = 1, .memslots = 1});
  raw.fd.reset();  // the Vm has a dup of its own
  EXPECT_NO_THROW(vm.add_ram(0x100000, kPage));
  EXPECT_TRUE(vm.memory().store<uint32_t>(0x100000, 7));
}

TEST_F(KvmTest, TheVmRemovesItsRamSlotsFromAnAdoptedVm) {
  RawVm raw(*kvm);
  {
    Vm vm(*kvm, AdoptedVm{.fd = raw.fd.get(), .first_memslot = 1, .memslots = 1});
    vm.add_ram(0x100000, kPage);
  }
  // Slot 1 is gone with the Vm: the embedder may make it anew, with memory of
  // its own (KVM refuses new memory for a slot that still exists).
  void* mem = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  kvm_userspace_memory_region region{};
  region.slot = 1;
  region.guest_phys_addr = 0x100000;
  region.memory_size = kPage;
  region.userspace_addr = reinterpret_cast<uint64_t>(mem);
  EXPECT_EQ(::ioctl(raw.fd.get(), KVM_SET_USER_MEMORY_REGION, &region), 0) << std::strerror(errno);
  region.memory_size = 0;
  ::ioctl(raw.fd.get(), KVM_SET_USER_MEMORY_REGION, &region);
  ::munmap(mem, kPage);
}

}  // namespace
}  // namespace kvmmio::test
