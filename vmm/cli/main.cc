// SPDX-License-Identifier: BSD-2-Clause
// kvmmio: the command-line entry. Parses, dispatches, and turns exceptions
// into the documented exit statuses (vmm/process/exit_status.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "vmm/control/control_client.h"
#include "vmm/process/exit_status.h"
#include "vmm/cli/options.h"
#include "vmm/cli/run_command.h"
#include "vmm/process/signals.h"
#include "vmm/stats/startup_timeline.h"
#include "vmm/cli/vm_commands.h"

namespace {

// kvmmio's log lines: the library's, with the seconds since kvmmio started
// in front, as dmesg shows the kernel's ("[    1.234567] kvmmio: ...").
void install_log_sink() {
  static const auto start = std::chrono::steady_clock::now();
  kvmmio::set_log_sink([](kvmmio::LogLevel level, std::string_view message) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%12.6f] ", t);
    const std::string line = stamp + kvmmio::format_log_line(level, message);
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
  });
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kvmmio::vmm;
  StartupTimeline startup;  // first: --stats reports the start-up from here
  // Next: a --stats snapshot (SIGUSR1) asked for from here on waits for
  // the VM instead of killing kvmmio (signals.h).
  hold_snapshot_requests();
  install_log_sink();
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const Command cmd = parse_command_line(args);
    switch (cmd.kind) {
      case Command::Kind::kHelp: std::fputs(help_text().c_str(), stdout); return 0;
      case Command::Kind::kVersion: std::fputs(version_text().c_str(), stdout); return 0;
      case Command::Kind::kRun:
        kvmmio::set_log_level(cmd.run.log_level);
        return run_command(cmd.run, &startup);
      case Command::Kind::kCtl: return run_ctl(cmd.ctl);
      case Command::Kind::kList: return run_list();
      case Command::Kind::kStop: return run_stop(cmd.stop);
      case Command::Kind::kConsole: return run_console_attach(cmd.console_name);
      case Command::Kind::kNetwork: return run_network(cmd.network);
    }
  } catch (const kvmmio::UserError& e) {
    KVMMIO_LOG_ERROR("%s", e.what());
    return exit_status::kUsage;
  } catch (const std::exception& e) {
    KVMMIO_LOG_ERROR("%s", e.what());
    return exit_status::kFailure;
  }
  return exit_status::kFailure;
}
