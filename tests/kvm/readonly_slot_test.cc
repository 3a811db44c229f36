// SPDX-License-Identifier: BSD-2-Clause
// Read-only memory slots on real /dev/kvm, the mechanism under regs=mirror
// (docs/virtio-mmio.md "The register mirror"): a page mapped with
// KVM_MEM_READONLY over a device's registers serves guest loads with no
// exit, while guest stores to it still exit as MMIO, or are taken by an
// ioeventfd in the kernel when one matches.
#include <gtest/gtest.h>
#include <linux/kvm.h>

#include "../guests/test_machine.h"
#include "kvm_fixture.h"
#include "kvmmio/ioeventfd.h"
#include "kvmmio/virtio/mmio_regs.h"
#include "kvmmio/virtio/register_mirror.h"

namespace kvmmio::test {
namespace {

constexpr uint64_t kReadOffset = 0x60;  // where InterruptStatus would be
constexpr uint32_t kLoads = 1000;

class ReadOnlySlotTest : public KvmTest {
 protected:
  void SetUp() override {
    KvmTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    // regs=mirror needs this; kvmmio falls back to regs=trap without it, so
    // a host that lacks it is not broken, and says so here.
    ASSERT_GT(kvm->check_extension(KVM_CAP_READONLY_MEM), 0)
        << "KVM on this host lacks KVM_CAP_READONLY_MEM (kvmmio then uses regs=trap)";
  }
};

TEST_F(ReadOnlySlotTest, GuestLoadsFromTheSlotDoNotExit) {
  TestMachine m(*kvm);
  virtio::RegisterMirror page(virtio::kMmioWindowSize);
  page.update32(kReadOffset, 3);
  ReadOnlySlot slot = m.vm().map_readonly(TestMachine::kTestDeviceBase, page.page());
  m.load_load_loop(kReadOffset, kLoads);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(r.value, 3u * kLoads) << "the guest read what the VMM wrote";
#if defined(__aarch64__)
  EXPECT_EQ(m.mmio_exits(), 1u);  // the done report only
#else
  EXPECT_EQ(m.mmio_exits(), 0u);  // the done report is port I/O
#endif
}

TEST_F(ReadOnlySlotTest, WithoutTheSlotEveryLoadExits) {
  TestMachine m(*kvm);
  m.load_load_loop(kReadOffset, 10);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(r.value, 0u);  // the test device reads as zeros
#if defined(__aarch64__)
  EXPECT_EQ(m.mmio_exits(), 11u);
#else
  EXPECT_EQ(m.mmio_exits(), 10u);
#endif
}

TEST_F(ReadOnlySlotTest, StoresToTheSlotExitAsMmio) {
  TestMachine m(*kvm);
  virtio::RegisterMirror page(virtio::kMmioWindowSize);
  ReadOnlySlot slot = m.vm().map_readonly(TestMachine::kTestDeviceBase, page.page());
  m.load_store_loop(0x1234, 5);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(m.notify_exits(), 5u);
  EXPECT_EQ(page.read32(TestMachine::kNotifyOffset), 0u) << "a store changed the read-only page";
}

TEST_F(ReadOnlySlotTest, AnIoEventFdTakesMatchingStoresToTheSlot) {
  TestMachine m(*kvm);
  virtio::RegisterMirror page(virtio::kMmioWindowSize);
  ReadOnlySlot slot = m.vm().map_readonly(TestMachine::kTestDeviceBase, page.page());
  IoEventFd fd = IoEventFd::mmio_datamatch<uint32_t>(m.vm(), m.notify_addr(), virtio::interrupt::kUsedBuffer);
  m.load_store_loop(virtio::interrupt::kUsedBuffer, 20);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(m.notify_exits(), 0u);
  EXPECT_EQ(fd.event().take().value_or(0), 20u);
}

TEST_F(ReadOnlySlotTest, RemovingTheSlotMakesLoadsExitAgain) {
  TestMachine m(*kvm);
  virtio::RegisterMirror page(virtio::kMmioWindowSize);
  page.update32(kReadOffset, 7);
  {
    ReadOnlySlot slot = m.vm().map_readonly(TestMachine::kTestDeviceBase, page.page());
  }
  m.load_load_loop(kReadOffset, 4);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(r.value, 0u);
}

}  // namespace
}  // namespace kvmmio::test
