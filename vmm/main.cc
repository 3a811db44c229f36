// kvmmio: the command-line entry. Parses, dispatches, and turns exceptions
// into the documented exit statuses (vmm/exit_status.h).
#include <cstdio>
#include <string>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "vmm/exit_status.h"
#include "vmm/options.h"
#include "vmm/run_command.h"

int main(int argc, char** argv) {
  using namespace kvmmio::vmm;
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const Command cmd = parse_command_line(args);
    switch (cmd.kind) {
      case Command::Kind::kHelp: std::fputs(help_text().c_str(), stdout); return 0;
      case Command::Kind::kVersion: std::fputs(version_text().c_str(), stdout); return 0;
      case Command::Kind::kRun: return run_command(cmd.run);
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
