// SPDX-License-Identifier: BSD-2-Clause
// KvmTest: the fixture of every test that needs real /dev/kvm.
//
// The policy, the same on a developer's machine and in CI:
// - no /dev/kvm at all: every KvmTest skips with one reason, "host /dev/kvm
//   absent" (the machine is a VM without nested virtualization; the real-KVM
//   coverage then comes from the arm64 platform, which needs only QEMU);
// - a /dev/kvm that exists must work: it is opened and one tiny guest is run
//   (once per process); if that fails, every KvmTest fails with the reason.
//   A broken KVM is never mistaken for a missing one.
// - KVMMIO_REQUIRE_KVM=1 (set inside the arm64 platform's L1, where KVM is
//   the thing under test) turns the absent case into a failure as well.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "../guests/test_machine.h"
#include "kvmmio/kvm.h"

namespace kvmmio::test {

inline constexpr const char* kKvmPath = "/dev/kvm";
// The skip reason; scripts/summarize-gtest.sh counts skips by this text.
inline constexpr const char* kKvmAbsentReason = "host /dev/kvm absent";

inline bool kvm_required() {
  const char* v = std::getenv("KVMMIO_REQUIRE_KVM");
  return v && std::string(v) == "1";
}

// What /dev/kvm on this machine can do, found out once per test program.
struct KvmProbe {
  enum class State { kAbsent, kUsable, kBroken } state;
  std::string reason;  // kBroken: what failed
};

inline KvmProbe probe_kvm() {
  struct stat st{};
  if (::stat(kKvmPath, &st) != 0 && errno == ENOENT) return {KvmProbe::State::kAbsent, {}};
  try {
    Kvm kvm(kKvmPath);
    // One store and the done report: a VM, its memory, a vCPU, KVM_RUN and
    // an MMIO exit. Less than this and no KvmTest could mean anything.
    TestMachine m(kvm);
    m.load_store_loop(0x6b766d21, 1);
    const Report r = m.run_until_report(std::chrono::seconds(10));
    if (r.kind != Report::Kind::kDone)
      return {KvmProbe::State::kBroken,
              std::string("a one-store test guest ended with '") + to_string(r.kind) +
                  "' instead of 'done'"};
  } catch (const std::exception& e) {
    return {KvmProbe::State::kBroken, e.what()};
  }
  return {KvmProbe::State::kUsable, {}};
}

inline const KvmProbe& kvm_probe() {
  static const KvmProbe probe = probe_kvm();
  return probe;
}

class KvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const KvmProbe& probe = kvm_probe();
    switch (probe.state) {
      case KvmProbe::State::kAbsent:
        if (kvm_required()) FAIL() << kKvmAbsentReason << " but KVMMIO_REQUIRE_KVM=1";
        GTEST_SKIP() << kKvmAbsentReason;
      case KvmProbe::State::kBroken:
        FAIL() << kKvmPath << " exists but cannot run a guest: " << probe.reason
               << ". Fix the host's KVM (module, permissions, nested virtualization) or"
                  " remove the device node; the tests skip only when /dev/kvm is absent.";
      case KvmProbe::State::kUsable:
        break;
    }
    kvm = std::make_unique<Kvm>();
  }
  std::unique_ptr<Kvm> kvm;
};

}  // namespace kvmmio::test
