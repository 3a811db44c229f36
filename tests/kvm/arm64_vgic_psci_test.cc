// SPDX-License-Identifier: BSD-2-Clause
// arm64 only, on real KVM/ARM (the nested platform, or a board): vGIC
// creation for the version the host offers and a clear error for the one it
// does not; vCPU init with PSCI 0.2 and secondaries started by the guest.
//
// KVMMIO_EXPECT_GIC=3|2 (set by the arm64 platform from L1's gic-version)
// states which vGIC the host must offer; without it the test checks each
// version against what KVM_CREATE_DEVICE_TEST says.
#include <gtest/gtest.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include <cstdlib>
#include <thread>

#include "../guests/test_machine.h"
#include "kvm_fixture.h"
#include "kvmmio/arch/arm64.h"
#include "kvmmio/base/error.h"
#include "kvmmio/irqfd.h"

extern "C" const char arm64_guest_psci[], arm64_guest_psci_end[];

namespace kvmmio::test {
namespace {

using arm64::GicVersion;

std::optional<GicVersion> expected_gic() {
  const char* v = std::getenv("KVMMIO_EXPECT_GIC");
  if (!v) return std::nullopt;
  if (std::string(v) == "3") return GicVersion::kV3;
  if (std::string(v) == "2") return GicVersion::kV2;
  ADD_FAILURE() << "KVMMIO_EXPECT_GIC must be 3 or 2, not " << v;
  return std::nullopt;
}

class Arm64Test : public KvmTest {};

TEST_F(Arm64Test, OfferedVgicIsCreatedAndTheOtherFailsClearly) {
  int created = 0;
  for (GicVersion v : {GicVersion::kV3, GicVersion::kV2}) {
    SCOPED_TRACE(arm64::gic_name(v));
    Vm vm(*kvm);
    auto vcpu = vm.create_vcpu(0);
    arm64::init_vcpu(vm, *vcpu, false);
    const bool supported = arm64::vgic_supported(vm, v);
    if (auto expect = expected_gic()) {
      EXPECT_EQ(supported, v == *expect);
    }
    const arm64::GicLayout layout{.dist_base = 0x08000000, .redist_base = 0x080a0000,
                                  .cpu_base = 0x08010000};
    if (supported) {
      EXPECT_FALSE(vm.irqchip_ready());
      arm64::Vgic gic(vm, v, layout, 128);
      EXPECT_TRUE(vm.irqchip_ready());
      EXPECT_EQ(vm.routing().size(), 96u);  // GSI n -> SPI n for every SPI
      ++created;
    } else {
      try {
        arm64::Vgic gic(vm, v, layout, 128);
        FAIL() << "created a vGIC the host says it cannot offer";
      } catch (const UserError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(std::string(arm64::gic_name(v)) + " is not available on this host"),
                  std::string::npos) << msg;
        const arm64::GicVersion other = v == arm64::GicVersion::kV3 ? arm64::GicVersion::kV2 : arm64::GicVersion::kV3;
        EXPECT_NE(msg.find(std::string("use ") + arm64::gic_name(other) + " instead"), std::string::npos) << msg;
      }
      EXPECT_FALSE(vm.irqchip_ready());
    }
  }
  EXPECT_GE(created, 1) << "the host offers neither vGICv3 nor vGICv2";
}

TEST_F(Arm64Test, IrqFdsAssignedBeforeTheVgicAreQueuedThenRouted) {
  Vm vm(*kvm);
  auto vcpu = vm.create_vcpu(0);
  arm64::init_vcpu(vm, *vcpu, false);
  IrqFd early(vm, 7);  // would fail in KVM now: no vGIC yet
  EXPECT_FALSE(vm.irqchip_ready());
  const GicVersion v = arm64::vgic_supported(vm, GicVersion::kV3) ? GicVersion::kV3 : GicVersion::kV2;
  arm64::Vgic gic(vm, v, {.dist_base = 0x08000000, .redist_base = 0x080a0000, .cpu_base = 0x08010000}, 128);
  // Re-assigning the same eventfd and GSI must now be refused by KVM: proof
  // that the queued one reached it.
  EXPECT_THROW(vm.assign_irqfd(7, early.fd()), std::system_error);
}

TEST_F(Arm64Test, VcpuInitWithPsciStartsSecondariesPoweredOff) {
  TestMachine m(*kvm, {.gic = std::nullopt, .vcpus = 2});
  kvm_mp_state state{};
  m.on_vcpu_thread([&] {
    ASSERT_EQ(::ioctl(m.vcpu(1).fd(), KVM_GET_MP_STATE, &state), 0);
    EXPECT_EQ(state.mp_state, static_cast<uint32_t>(KVM_MP_STATE_STOPPED));
    ASSERT_EQ(::ioctl(m.vcpu(0).fd(), KVM_GET_MP_STATE, &state), 0);
    EXPECT_EQ(state.mp_state, static_cast<uint32_t>(KVM_MP_STATE_RUNNABLE));
  });
}

TEST_F(Arm64Test, GuestStartsTheSecondaryThroughPsci) {
  TestMachine m(*kvm, {.gic = std::nullopt, .vcpus = 2});
  const uint64_t report = TestMachine::kTestDeviceBase + TestMachine::kReportOffset;
  const uint64_t mpidr1 = m.on_vcpu_thread([&] { return m.vcpu(1).get_one_reg(arm64::reg_mpidr()); });
  m.load_program(guest_code(arm64_guest_psci, arm64_guest_psci_end));
  m.on_vcpu_thread([&] {
    m.vcpu(0).set_one_reg(arm64::reg_x(3), report);
    m.vcpu(0).set_one_reg(arm64::reg_x(4), mpidr1 & 0xff00ffffffull);
  });

  Report version = m.run_until_report();
  ASSERT_EQ(version.kind, Report::Kind::kDone);
  EXPECT_GE(version.value, 0x2u) << "PSCI version below 0.2";

  // The secondary waits in KVM (powered off) until CPU_ON; run it now.
  std::atomic<uint64_t> secondary_mpidr{0};
  std::atomic<bool> secondary_done{false};
  std::thread secondary([&] {
    for (int i = 0; i < 1000 && !secondary_done; ++i) {
      VcpuExit ex = m.vcpu(1).run();
      if (ex.kind == VcpuExit::Kind::kMmio && ex.mmio_write && ex.mmio_addr == report) {
        secondary_mpidr = ex.mmio_value;
        secondary_done = true;
      } else if (ex.kind == VcpuExit::Kind::kInterrupted) {
        break;
      }
    }
  });
  Report cpu_on = m.run_until_report();
  ASSERT_EQ(cpu_on.kind, Report::Kind::kDone);
  EXPECT_EQ(cpu_on.value, 0u) << "CPU_ON failed with PSCI error " << static_cast<int32_t>(cpu_on.value);
  // A poll with a 10 s deadline; past it the kick ends the secondary's run.
  for (int i = 0; i < 200 && !secondary_done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!secondary_done) m.vcpu(1).kick();
  secondary.join();
  ASSERT_TRUE(secondary_done) << "the secondary never ran";
  EXPECT_EQ(secondary_mpidr & 0xff00ffffffull, mpidr1 & 0xff00ffffffull);
}

}  // namespace
}  // namespace kvmmio::test
