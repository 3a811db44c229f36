// SPDX-License-Identifier: BSD-2-Clause
// Kvm: the /dev/kvm system fd. Opening it checks the API version; require()
// turns a missing capability into a UserError that says what needs it.
#pragma once

#include <string>

#include "kvmmio/base/export.h"
#include "kvmmio/base/unique_fd.h"

namespace kvmmio {

class KVMMIO_EXPORT Kvm {
 public:
  static constexpr const char* kDefaultPath = "/dev/kvm";

  // Throws UserError with the fix when /dev/kvm is absent, not accessible,
  // or speaks another API version.
  explicit Kvm(const std::string& path = kDefaultPath);

  int fd() const { return fd_.get(); }

  // KVM_CHECK_EXTENSION on the system fd: 0 when absent, else the value.
  int check_extension(long cap) const;
  // Throws UserError "KVM lacks <name>, needed for <why>" when absent.
  void require(long cap, const char* name, const char* why) const;

  // Size of the per-vCPU kvm_run mapping.
  int vcpu_mmap_size() const;

  // True when `path` exists and can be opened: tests use it to decide
  // whether to skip with a visible reason.
  static bool available(const std::string& path = kDefaultPath);

 private:
  UniqueFd fd_;
};

}  // namespace kvmmio
