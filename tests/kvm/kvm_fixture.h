// KvmTest: the fixture of every test that needs real /dev/kvm.
//
// Where /dev/kvm cannot exist, these tests skip with a visible reason. Where
// it must exist (CI, the arm64 platform), KVMMIO_REQUIRE_KVM=1 turns that
// skip into a failure, so a broken host cannot pass silently.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "kvmmio/kvm.h"

namespace kvmmio::test {

inline bool kvm_required() {
  const char* v = std::getenv("KVMMIO_REQUIRE_KVM");
  return v && std::string(v) == "1";
}

class KvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Kvm::available()) {
      if (kvm_required()) FAIL() << "/dev/kvm is not usable but KVMMIO_REQUIRE_KVM=1";
      GTEST_SKIP() << "no usable /dev/kvm on this machine: the real-KVM tests cannot run";
    }
    kvm = std::make_unique<Kvm>();
  }
  std::unique_ptr<Kvm> kvm;
};

}  // namespace kvmmio::test
