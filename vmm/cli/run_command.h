// SPDX-License-Identifier: BSD-2-Clause
// `kvmmio run`: from checked options to a finished VM (or a dumped device
// tree). Order: everything the user gave is checked first (device plan,
// kernel, initrd, placement, output paths), then the machine is built, so
// a mistake is reported before anything starts.
#pragma once

#include "vmm/cli/options.h"
#include "vmm/stats/startup_timeline.h"

namespace kvmmio::vmm {

// Returns the process exit status (vmm/process/exit_status.h). Throws UserError
// (status 2) for input problems, other exceptions (status 1) for failures.
// STARTUP (optional): the timeline main() started; its "setup" and
// "devices" phases end here, the rest in the Machine (--stats).
int run_command(const RunOptions& options, StartupTimeline* startup = nullptr);

}  // namespace kvmmio::vmm
