// SPDX-License-Identifier: BSD-2-Clause
// Kvm, Vm and Vcpu basics on real /dev/kvm: capabilities, memory slots,
// error messages, notify_fds.
#include <gtest/gtest.h>
#include <linux/kvm.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "../guests/test_machine.h"
#include "kvm_fixture.h"
#include "kvmmio/base/error.h"

namespace kvmmio::test {
namespace {

using namespace std::chrono_literals;

TEST(KvmOpen, MissingDeviceGivesAClearError) {
  try {
    Kvm kvm("/dev/kvm-does-not-exist");
    FAIL() << "opened a device that does not exist";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("modprobe kvm"), std::string::npos) << e.what();
  }
}

TEST_F(KvmTest, ReportsTheCapabilitiesTheBypassNeeds) {
  EXPECT_GT(kvm->check_extension(KVM_CAP_IOEVENTFD), 0);
  EXPECT_GT(kvm->check_extension(KVM_CAP_IRQFD), 0);
  EXPECT_GT(kvm->check_extension(KVM_CAP_IRQ_ROUTING), 0);
  EXPECT_GT(kvm->check_extension(KVM_CAP_IMMEDIATE_EXIT), 0);
  EXPECT_EQ(kvm->check_extension(-1), 0);
  try {
    kvm->require(-1, "KVM_CAP_IMAGINARY", "testing");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("KVM_CAP_IMAGINARY"), std::string::npos);
  }
}

TEST_F(KvmTest, MmioStoresWithoutIoEventFdExitOncePerStore) {
  // The baseline every ioeventfd test compares against.
  TestMachine m(*kvm);
  m.load_store_loop(0xfeedf00d, 3);
  const Report r = m.run_until_report();
  ASSERT_EQ(r.kind, Report::Kind::kDone) << to_string(r.kind);
  EXPECT_EQ(m.notify_exits(), 3u);
#if defined(__aarch64__)
  EXPECT_EQ(m.mmio_exits(), 4u);  // 3 stores and the done report
#else
  EXPECT_EQ(m.mmio_exits(), 3u);  // 3 stores; the done report is port I/O
#endif
}

// KVM_CREATE_VM registers an MMU notifier, which walks the process's
// mappings and gives up with EINTR when a signal is pending (the kernel's
// mm_take_all_locks()); nothing is created then. An embedder's process has
// signals (kvmmio's own vCPU kick among them), so Vm retries the call: here
// a thread signals the creating thread every 20 us while it makes VMs.
TEST_F(KvmTest, CreatingVmsRidesOutSignals) {
  const int signo = SIGRTMIN + 3;
  struct sigaction quiet {}, old {};
  quiet.sa_handler = [](int) {};
  sigemptyset(&quiet.sa_mask);
  ASSERT_EQ(::sigaction(signo, &quiet, &old), 0);
  const pthread_t creator = ::pthread_self();
  std::atomic<bool> done{false};
  std::atomic<unsigned> sent{0};
  std::thread storm([&] {
    while (!done.load()) {
      if (::pthread_kill(creator, signo) == 0) sent.fetch_add(1);
      std::this_thread::sleep_for(20us);
    }
  });
  std::string failure;
  for (int i = 0; i < 200 && failure.empty(); ++i) {
    try {
      Vm vm(*kvm);
    } catch (const std::exception& e) {
      failure = "VM " + std::to_string(i) + ": " + e.what();
    }
  }
  done = true;
  storm.join();
  ::sigaction(signo, &old, nullptr);
  EXPECT_EQ(failure, "");
  EXPECT_GT(sent.load(), 0u);
}

TEST_F(KvmTest, KickInterruptsAGuestThatNeverExits) {
  TestMachine m(*kvm);
  m.load_irq_guest(5);  // waits for an interrupt that never comes
  ASSERT_EQ(m.run_until_report().kind, Report::Kind::kReady);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(m.run_until_report(300ms).kind, Report::Kind::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_GE(m.vcpu().exit_counts().interrupted.load(), 1u);
}

TEST_F(KvmTest, UnclaimedMmioIsAGuestErrorNotACrash) {
  TestMachine m(*kvm);
  uint8_t buf[4] = {9, 9, 9, 9};
  EXPECT_FALSE(m.vm().mmio_bus().read(0xdead0000, buf));
  EXPECT_EQ(m.vm().mmio_bus().unclaimed_accesses(), 1u);
}

}  // namespace
}  // namespace kvmmio::test
