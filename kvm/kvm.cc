// SPDX-License-Identifier: BSD-2-Clause
// Kvm: opening /dev/kvm with errors that say how to fix the host.
#include "kvmmio/kvm.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include <cstring>

#include "kvmmio/base/error.h"

namespace kvmmio {

Kvm::Kvm(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {
  if (!fd_) {
    const int err = errno;
    std::string msg = "cannot open " + path + ": " + std::strerror(err);
    if (err == ENOENT)
      msg += " (KVM is not available: enable virtualization and load the kvm module,"
             " e.g. modprobe kvm)";
    else if (err == EACCES || err == EPERM)
      msg += " (run as root or add your user to the 'kvm' group)";
    throw UserError(msg);
  }
  const int version = ::ioctl(fd_.get(), KVM_GET_API_VERSION, 0);
  if (version != KVM_API_VERSION)
    throw UserError(path + " speaks KVM API version " + std::to_string(version) +
                    ", kvmmio needs " + std::to_string(KVM_API_VERSION));
}

int Kvm::check_extension(long cap) const {
  const int r = ::ioctl(fd_.get(), KVM_CHECK_EXTENSION, cap);
  return r < 0 ? 0 : r;
}

void Kvm::require(long cap, const char* name, const char* why) const {
  if (check_extension(cap) <= 0)
    throw UserError(std::string("KVM on this host lacks ") + name + ", needed for " + why +
                    " (a newer host kernel is required)");
}

int Kvm::vcpu_mmap_size() const {
  const int r = ::ioctl(fd_.get(), KVM_GET_VCPU_MMAP_SIZE, 0);
  if (r <= 0) throw_errno("KVM_GET_VCPU_MMAP_SIZE");
  return r;
}

bool Kvm::available(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  return fd.valid();
}

}  // namespace kvmmio
