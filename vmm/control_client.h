// SPDX-License-Identifier: BSD-2-Clause
// `kvmmio ctl PATH COMMAND`: sends {"cmd":COMMAND} to a running kvmmio's
// control socket (--api-socket PATH), prints the answer line on stdout and
// returns the exit status: 0 for an answer, 1 for an error answer; a
// socket that cannot be reached, or no answer, is a UsageError (status 2)
// naming the fix.
#pragma once

#include <cstdio>

#include "vmm/options.h"

namespace kvmmio::vmm {

// How long ctl waits for the answer (a pause waits for the vCPUs, a
// bounded time).
inline constexpr int kCtlTimeoutMs = 10000;

int run_ctl(const CtlOptions& options, std::FILE* out = stdout, int timeout_ms = kCtlTimeoutMs);

}  // namespace kvmmio::vmm
