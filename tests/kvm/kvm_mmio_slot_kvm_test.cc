// SPDX-License-Identifier: BSD-2-Clause
// KvmMmioSlot on real /dev/kvm: with regs=mirror (the default) the guest's
// register loads read the mapped mirror page with no exit and the slot's
// InterruptACK ioeventfd is assigned; with regs=trap nothing is mapped and
// every load exits to the transport; the mirror's slot goes with the
// KvmMmioSlot. Architecture-neutral: runs here on x86-64 and on KVM/ARM in
// the nested arm64 platform.
//
// The slot sits at TestMachine::kTestDeviceBase and the machine's test
// device forwards the accesses that exit to the slot's transport, as a
// VMM's MMIO bus would; the test plays the driver's register writes itself.
#include <gtest/gtest.h>
#include <linux/kvm.h>

#include <cerrno>
#include <optional>
#include <system_error>

#include "../guests/test_machine.h"
#include "../virtio/echo_device.h"
#include "../virtio/mmio_driver.h"
#include "kvm_fixture.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/ioeventfd.h"
#include "kvmmio/virtio/kvm_mmio_slot.h"
#include "kvmmio/virtio/mmio_regs.h"

namespace kvmmio::test {
namespace {

using virtio::KvmMmioSlot;
using virtio::RegsMode;
using virtio::test::EchoDevice;
using virtio::test::MmioDriver;

constexpr uint32_t kQueueSize = 64;
constexpr uint32_t kGsi = 5;
constexpr uint32_t kLoads = 1000;


// One device in a KvmMmioSlot of a TestMachine, brought up to DRIVER_OK.
struct SlotMachine {
  SlotMachine(Kvm& kvm, RegsMode regs)
      : machine(kvm),
        device(machine.vm().memory(), {.queues = 1, .max_size = kQueueSize}) {
    virtio::KvmMmioSlotConfig config{.base = TestMachine::kTestDeviceBase, .gsi = kGsi, .name = "kvm-slot-test"};
    config.options.regs = regs;
    slot.emplace(machine.vm(), device, loop, config);
    machine.device().forward_registers_to(&slot->transport());
    MmioDriver driver(slot->transport());
    EXPECT_TRUE(driver.probe());
    EXPECT_TRUE(driver.initialize(~uint64_t{0}));
    EXPECT_TRUE(driver.setup_queue(0, TestMachine::kRamBase + 0x40000, kQueueSize));
    driver.driver_ok();
  }
  ~SlotMachine() { remove_slot(); }
  void remove_slot() {
    machine.device().forward_registers_to(nullptr);
    slot.reset();
  }
  uint64_t register_reads() const { return slot->transport().counters().register_reads.load(); }
  // 0 when KVM accepts another used-buffer ACK ioeventfd at the slot's
  // InterruptACK, else the errno it refuses it with: KVM refuses one
  // identical to an ioeventfd it has with EEXIST.
  int another_ack_fd_errno() {
    try {
      IoEventFd fd = IoEventFd::mmio_datamatch<uint32_t>(
          machine.vm(), TestMachine::kTestDeviceBase + virtio::reg::kInterruptAck, virtio::interrupt::kUsedBuffer);
      return 0;
    } catch (const std::system_error& e) {
      return e.code().value();
    }
  }

  TestMachine machine;
  EventLoop loop;
  EchoDevice device;
  std::optional<KvmMmioSlot> slot;
};

class KvmMmioSlotTest : public KvmTest {
 protected:
  bool readonly_slots() const { return kvm->check_extension(KVM_CAP_READONLY_MEM) > 0; }
};

TEST_F(KvmMmioSlotTest, TheMirrorServesGuestRegisterLoadsWithoutExits) {
  SlotMachine s(*kvm, RegsMode::kMirror);
  if (!readonly_slots()) {
    // The fallback: regs=trap in effect, nothing mapped.
    EXPECT_FALSE(s.slot->mirror_mapped());
    EXPECT_EQ(s.slot->transport().options().regs, RegsMode::kTrap);
    GTEST_SKIP() << "KVM on this host lacks KVM_CAP_READONLY_MEM: the slot fell back to regs=trap";
  }
  ASSERT_TRUE(s.slot->mirror_mapped());
  const uint64_t reads = s.register_reads();
  s.machine.load_load_loop(virtio::reg::kInterruptStatus, kLoads);
  const Report r = s.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  // From DRIVER_OK on, the mirror's InterruptStatus has the used-buffer bit.
  EXPECT_EQ(r.value, uint64_t{virtio::interrupt::kUsedBuffer} * kLoads);
  EXPECT_EQ(s.machine.mmio_exits(), TestMachine::kDoneReportMmioExits);
  EXPECT_EQ(s.register_reads(), reads) << "a guest load reached the transport";
}

TEST_F(KvmMmioSlotTest, TheMirrorComesWithTheAckIoEventFd) {
  SlotMachine s(*kvm, RegsMode::kMirror);
  if (!s.slot->mirror_mapped()) GTEST_SKIP() << "no KVM_CAP_READONLY_MEM: no mirror, no ACK ioeventfd";
  EXPECT_EQ(s.another_ack_fd_errno(), EEXIST) << "the slot's own ACK ioeventfd is not in place";
  EXPECT_EQ(s.slot->interrupt_acks_in_kernel(), 0u);
}

TEST_F(KvmMmioSlotTest, RegsTrapMapsNothingAndEveryLoadExits) {
  SlotMachine s(*kvm, RegsMode::kTrap);
  EXPECT_FALSE(s.slot->mirror_mapped());
  EXPECT_EQ(s.another_ack_fd_errno(), 0) << "regs=trap assigned an ACK ioeventfd";
  const uint64_t reads = s.register_reads();
  s.machine.load_load_loop(virtio::reg::kInterruptStatus, 10);
  const Report r = s.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(r.value, 0u) << "no interrupt was raised";
  EXPECT_EQ(s.machine.mmio_exits(), 10u + TestMachine::kDoneReportMmioExits);
  EXPECT_EQ(s.register_reads(), reads + 10);
}

TEST_F(KvmMmioSlotTest, TheMirrorGoesWithTheSlot) {
  SlotMachine s(*kvm, RegsMode::kMirror);
  if (!s.slot->mirror_mapped()) GTEST_SKIP() << "no KVM_CAP_READONLY_MEM: no mirror to remove";
  s.remove_slot();
  // The window is the test device's again: loads exit and read zeros.
  s.machine.load_load_loop(virtio::reg::kInterruptStatus, 4);
  const Report r = s.machine.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(r.value, 0u);
  EXPECT_EQ(s.machine.mmio_exits(), 4u + TestMachine::kDoneReportMmioExits);
}

}  // namespace
}  // namespace kvmmio::test
