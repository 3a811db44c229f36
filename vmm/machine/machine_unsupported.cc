// SPDX-License-Identifier: BSD-2-Clause
// Machine on hosts that cannot run arm64 guests with KVM (x86-64 builds
// exist for --dump-dtb and the host-native tests): a clear refusal.
#include <sys/utsname.h>

#include "kvmmio/base/error.h"
#include "vmm/machine/machine.h"

namespace kvmmio::vmm {

class Machine::Impl {};

Machine::Machine(MachineConfig) {
  struct utsname u {};
  ::uname(&u);
  throw UserError(std::string("kvmmio run boots arm64 guests with KVM on arm64 hosts only, and "
                              "this host is ") +
                  u.machine +
                  ": run it on an arm64 host with /dev/kvm, or in a nested arm64 host made by "
                  "scripts/arm64/run.sh (see docs/arm64-platform.md); --dump-dtb works here");
}

Machine::~Machine() = default;

layout::VirtioMmioSlot Machine::add_virtio_mmio(std::string, std::string, DeviceFactory) {
  throw std::logic_error("Machine is not available on this host");
}
RunResult Machine::run() { throw std::logic_error("Machine is not available on this host"); }
MachineStats Machine::stats() const {
  throw std::logic_error("Machine is not available on this host");
}

}  // namespace kvmmio::vmm
