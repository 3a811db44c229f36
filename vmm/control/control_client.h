// SPDX-License-Identifier: BSD-2-Clause
// `kvmmio ctl PATH|NAME COMMAND`: sends {"cmd":COMMAND} to a running
// kvmmio's control socket (--api-socket PATH, or a named VM's), prints the answer line on stdout and
// returns the exit status: 0 for an answer, 1 for an error answer; a
// socket that cannot be reached, or no answer, is a UsageError (status 2)
// naming the fix.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>


namespace kvmmio::vmm {

// How long ctl waits for the answer (a pause waits for the vCPUs, a
// bounded time).
inline constexpr int kCtlTimeoutMs = 10000;

// kvmmio ctl PATH|NAME COMMAND: one request to a running kvmmio's
// control socket, by its path or by the VM's name.
struct CtlOptions {
  std::string socket;
  std::string command;
  std::string name;  // when given by name: the VM's
};

int run_ctl(const CtlOptions& options, std::FILE* out = stdout, int timeout_ms = kCtlTimeoutMs);

// One request, {"cmd":COMMAND}, to the control socket at `socket`; its
// answer line (without the newline), which may be an {"error":...}.
// UsageError starting with `shown` when the socket cannot be reached or
// gives no answer in time; `name`: the VM's, when it was given by name.
std::string control_request(const std::string& socket, const std::string& command, const std::string& shown,
                            const std::string& name = {}, int timeout_ms = kCtlTimeoutMs);

// The named VM (other than `except`) whose `info` says it holds vsock CID
// `cid`, asking each running one; nullopt when none says so (an unnamed VM,
// another program's, or one that does not answer).
std::optional<std::string> vm_holding_cid(uint32_t cid, const std::string& except);

}  // namespace kvmmio::vmm
