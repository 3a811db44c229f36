// SPDX-License-Identifier: BSD-2-Clause
// The commands for named VMs (vm_directory.h), each reaching a running
// kvmmio through the sockets in its runtime directory:
//   kvmmio list               a table of the named VMs that run: name, PID,
//                             state, uptime, vCPUs, memory, vsock CID, MACs
//   kvmmio stop NAME [--timeout S]
//                             presses the guest's power key, waits S
//                             seconds (default 30) for kvmmio to exit, then
//                             quits it as SIGTERM would
//   kvmmio console NAME       attaches the terminal to the VM's console
//                             socket (--console ...,socket); Ctrl-] detaches
// Each returns its exit status (0 done, 1 the VM did not stop) and throws
// UsageError (status 2) naming the fix when the VM cannot be reached.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "vmm/cli/options.h"

namespace kvmmio::vmm {

int run_list(std::FILE* out = stdout);
int run_stop(const StopOptions& options, std::FILE* out = stdout);
int run_console_attach(const std::string& name);

// The detach key of `kvmmio console`: Ctrl-] (0x1d), as telnet's and virsh's.
inline constexpr char kDetachKey = 0x1d;

}  // namespace kvmmio::vmm
