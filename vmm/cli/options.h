// SPDX-License-Identifier: BSD-2-Clause
// The kvmmio command line: parsing, validation of what can be checked without
// touching files or KVM, and the --help text. Owns no resources.
//
// Every problem is a UsageError whose message names the option, what is
// wrong, and the fix; main() prints it and exits with status 2.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvmmio/base/error.h"
#include "kvmmio/base/log.h"
#include "kvmmio/block/disk_options.h"
#include "kvmmio/fs/fs_options.h"
#include "kvmmio/net/net_options.h"
#include "kvmmio/vsock/vsock_options.h"
#include "kvmmio/virtio/mmio_transport.h"
#include "vmm/console/console_destination.h"
#include "vmm/control/control_client.h"
#include "vmm/machine/machine.h"
#include "vmm/network/nat_network.h"
#include "vmm/process/seccomp.h"
#include "vmm/process/usage_error.h"

namespace kvmmio::vmm {

enum class ConsoleKind { kSerial, kVirtio };

const char* to_string(GicChoice gic);
const char* to_string(ConsoleKind console);

struct RunOptions {
  std::string kernel;
  std::optional<std::string> initrd;
  // The kernel command line: --cmdline adds words after the default
  // (default_cmdline(console)); --cmdline-replace is the whole line.
  std::optional<std::string> cmdline_extra;    // --cmdline
  std::optional<std::string> cmdline_replace;  // --cmdline-replace
  uint64_t mem;
  int cpus = 1;
  GicChoice gic = GicChoice::kAuto;
  ConsoleKind console = ConsoleKind::kSerial;
  virtio::TransportOptions console_transport;  // --console virtio,KEY=VALUE...
  ConsoleDestination console_to;               // --console KIND,DEST (default stdio)
  std::optional<std::string> dump_dtb;
  std::optional<std::string> stats;
  std::optional<std::string> api_socket;  // --api-socket PATH (control_server.h)
  // --name NAME: the VM's sockets and pidfile in its runtime directory
  // (vm_directory.h); its control socket is always there.
  std::optional<std::string> name;
  std::vector<net::NetOptions> nets;  // one per --net, in order
  std::vector<block::DiskOptions> disks;  // one per --disk, in order (vda, vdb, ...)
  bool rng = true;  // --rng on|off: the virtio-rng entropy device, in the last slot
  std::optional<vsock::VsockOptions> vsock;  // --vsock cid=N, at most one
  std::vector<fs::FsOptions> shares;  // one per --fs, in order
  SeccompMode seccomp = SeccompMode::kOn;  // --seccomp
  OnReboot on_reboot = OnReboot::kRestart;  // --on-reboot
  std::optional<std::string> user, group;  // --user, --group: dropped to after set-up
  LogLevel log_level = LogLevel::kInfo;

  RunOptions();
  // The kernel command line the guest gets: --cmdline-replace's, or the
  // default with --cmdline's words after it.
  std::string kernel_cmdline() const;
};

// kvmmio stop NAME [--timeout S]: the power key, then quit after S seconds.
struct StopOptions {
  std::string name;
  int timeout_s = 30;
};

struct Command {
  enum class Kind { kHelp, kVersion, kRun, kCtl, kList, kStop, kConsole, kNetwork };
  Kind kind = Kind::kHelp;
  RunOptions run;
  CtlOptions ctl;
  StopOptions stop;
  std::string console_name;  // kvmmio console NAME
  NetworkCommand network;    // kvmmio network create|delete|list
};

// Parses argv[1..] (the program name left out).
Command parse_command_line(const std::vector<std::string>& args);

// The kernel command line when --cmdline is not given.
std::string default_cmdline(ConsoleKind console);

std::string help_text();
std::string version_text();

}  // namespace kvmmio::vmm
