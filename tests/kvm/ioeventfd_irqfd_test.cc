// SPDX-License-Identifier: BSD-2-Clause
// ioeventfd and irqfd on real /dev/kvm, with guests that really store and
// really take interrupts. The same tests run on x86-64 (this machine) and
// on arm64 (inside the nested KVM/ARM platform, vGICv3 and vGICv2).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../guests/test_machine.h"
#include "kvm_fixture.h"
#include "kvmmio/base/error.h"
#include "kvmmio/base/event_fd.h"
#include "kvmmio/ioeventfd.h"
#include "kvmmio/irqfd.h"

namespace kvmmio::test {
namespace {

using namespace std::chrono_literals;
constexpr uint32_t kStores = 1000;
constexpr uint32_t kGsi = 5;

TEST_F(KvmTest, DatamatchedIoEventFdSwallowsEveryStore) {
  TestMachine m(*kvm);
  auto notify = IoEventFd::mmio_datamatch<uint32_t>(m.vm(), m.notify_addr(), 0);
  m.load_store_loop(/*value=*/0, kStores);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(notify.event().take().value_or(0), kStores);
  EXPECT_EQ(m.notify_exits(), 0u);
  EXPECT_EQ(m.mmio_exits(), m.vcpu().exit_counts().mmio.load());
}

TEST_F(KvmTest, NonMatchingValueExitsToUserspace) {
  TestMachine m(*kvm);
  auto notify = IoEventFd::mmio_datamatch<uint32_t>(m.vm(), m.notify_addr(), 0);
  m.load_store_loop(/*value=*/1, kStores);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kDone);
  EXPECT_FALSE(notify.event().take().has_value());
  EXPECT_EQ(m.notify_exits(), kStores);
}

TEST_F(KvmTest, DeassignedIoEventFdNoLongerSwallows) {
  TestMachine m(*kvm);
  {
    auto notify = IoEventFd::mmio_datamatch<uint32_t>(m.vm(), m.notify_addr(), 0);
    m.load_store_loop(0, 10);
    ASSERT_EQ(m.run_until_report().kind, Report::Kind::kDone);
    EXPECT_EQ(notify.event().take().value_or(0), 10u);
    EXPECT_EQ(m.notify_exits(), 0u);
  }  // deassigned here
  m.load_store_loop(0, kStores);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kDone);
  EXPECT_EQ(m.notify_exits(), kStores);
}

TEST_F(KvmTest, AnyValueIoEventFdCountsAllStores) {
  TestMachine m(*kvm);
  auto notify = IoEventFd::mmio_any<uint32_t>(m.vm(), m.notify_addr());
  m.load_store_loop(0x1234, 50);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kDone);
  EXPECT_EQ(notify.event().take().value_or(0), 50u);
  EXPECT_EQ(m.notify_exits(), 0u);
}

// Runs the interrupt guest to "ready", then checks that each trigger is
// taken by the guest and acknowledged as `gsi`.
void expect_delivered(TestMachine& m, const std::function<void()>& trigger, uint32_t gsi,
                      int times) {
  for (int i = 0; i < times; ++i) {
    trigger();
    const Report r = m.run_until_report();
    ASSERT_EQ(r.kind, Report::Kind::kIrq) << "interrupt " << i << ": " << to_string(r.kind)
                                          << " value=0x" << std::hex << r.value;
    EXPECT_EQ(r.value, TestMachine::expected_irq_report(gsi));
  }
}

TEST_F(KvmTest, IrqFdRaisesAnInterruptTheGuestTakes) {
  TestMachine m(*kvm);
  IrqFd irq(m.vm(), kGsi);
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  expect_delivered(m, [&] { irq.trigger(); }, kGsi, 5);
}

TEST_F(KvmTest, NoInterruptWithoutATrigger) {
  // The control for the test above: the guest reports nothing on its own.
  TestMachine m(*kvm);
  IrqFd irq(m.vm(), kGsi);
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  EXPECT_EQ(m.run_until_report(300ms).kind, Report::Kind::kTimeout);
}

TEST_F(KvmTest, RoutingCommitIsAcceptedOrRefusedWithAClearError) {
  // The x86-64 development host (a PVM KVM) reports KVM_CAP_IRQ_ROUTING but
  // answers ENOTTY to KVM_SET_GSI_ROUTING; real KVM/ARM accepts it. Either
  // way the Vm must say which.
  TestMachine m(*kvm);
  const uint64_t before = m.vm().routing_commits();
  try {
    m.vm().commit_routing();
    EXPECT_EQ(m.vm().routing_commits(), before + 1);
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("refuses KVM_SET_GSI_ROUTING"), std::string::npos) << e.what();
    EXPECT_EQ(m.vm().routing_commits(), before);
#if defined(__aarch64__)
    ADD_FAILURE() << "KVM/ARM must accept KVM_SET_GSI_ROUTING";
#endif
  }
}

// Routing resend, on real KVM/ARM (the product's platform; CI runs these in
// the nested arm64 L1). Not built for x86-64: its development host refuses
// KVM_SET_GSI_ROUTING (see the test above).
#if defined(__aarch64__)
TEST_F(KvmTest, AddingARouteKeepsEarlierIrqFdsDelivering) {
  TestMachine m(*kvm);
  IrqFd irq(m.vm(), kGsi);
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  expect_delivered(m, [&] { irq.trigger(); }, kGsi, 1);

  // A new route elsewhere; the whole table is resent.
  const uint64_t commits = m.vm().routing_commits();
  m.vm().routing().set_msi(200, 0xfee00000, 0x40);
  m.vm().commit_routing();
  EXPECT_EQ(m.vm().routing_commits(), commits + 1);
  expect_delivered(m, [&] { irq.trigger(); }, kGsi, 3);
}

TEST_F(KvmTest, KvmRoutingIsReplacedWholeSoAMissingRouteStopsDelivery) {
  // Why the table is resent whole: a table without GSI kGsi silences it.
  TestMachine m(*kvm);
  IrqFd irq(m.vm(), kGsi);
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  m.vm().routing().remove(kGsi);
  m.vm().commit_routing();
  irq.trigger();
  EXPECT_EQ(m.run_until_report(300ms).kind, Report::Kind::kTimeout);
}

#endif  // __aarch64__

TEST_F(KvmTest, IrqFdAssignedAfterDeassignStillDelivers) {
  TestMachine m(*kvm);
  { IrqFd first(m.vm(), kGsi); }
  IrqFd second(m.vm(), kGsi);
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  expect_delivered(m, [&] { second.trigger(); }, kGsi, 2);
}

TEST_F(KvmTest, IrqLineFromARelayThreadDelivers) {
  // What QEMU and kvmtool do for virtio-mmio: a VMM thread reads the
  // backend's eventfd and injects with KVM_IRQ_LINE.
  TestMachine m(*kvm);
  EventFd call;
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  std::atomic<bool> stop{false};
  std::thread relay([&] {
    while (!stop) {
      if (call.wait_readable(50) && call.take()) m.pulse_irq_line(kGsi);
    }
  });
  expect_delivered(m, [&] { call.signal(); }, kGsi, 3);
  stop = true;
  relay.join();
}

TEST_F(KvmTest, IrqFdWithResampleDelivers) {
  TestMachine m(*kvm);
  IrqFd irq(m.vm(), kGsi, /*with_resample=*/true);
  ASSERT_NE(irq.resample(), nullptr);
  m.load_irq_guest(kGsi);
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  expect_delivered(m, [&] { irq.trigger(); }, kGsi, 1);
}

}  // namespace
}  // namespace kvmmio::test
