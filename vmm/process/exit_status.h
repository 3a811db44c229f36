// SPDX-License-Identifier: BSD-2-Clause
// kvmmio's exit statuses, as documented in --help, kvmmio(1) and
// docs/usage.md. Scripts rely on them: change all four places together.
#pragma once

namespace kvmmio::vmm::exit_status {

constexpr int kPoweredOff = 0;      // PSCI SYSTEM_OFF, or nothing to run (--dump-dtb, --help)
constexpr int kFailure = 1;         // vCPU internal error, KVM_RUN failure, guest crash report
constexpr int kUsage = 2;           // bad usage or set-up error; the message names the fix
// PSCI SYSTEM_RESET under --on-reboot exit (run kvmmio again to reboot), or
// a reboot loop under --on-reboot restart (reboot_limit.h).
constexpr int kResetRequested = 3;
constexpr int kSignalBase = 128;    // + the signal number (SIGINT 130, SIGTERM 143)

}  // namespace kvmmio::vmm::exit_status
