// SPDX-License-Identifier: BSD-2-Clause
// `kvmmio run` and `kvmmio run --dump-dtb` (see run_command.h).
#include "vmm/cli/run_command.h"

#include <signal.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <utility>

#include "kvmmio/base/log.h"
#include "kvmmio/base/user_path.h"
#include "vmm/boot/boot_layout.h"
#include "vmm/console/console_setup.h"
#include "vmm/control/control_server.h"
#include "vmm/boot/device_tree.h"
#include "vmm/cli/devices.h"
#include "vmm/process/exit_status.h"
#include "vmm/boot/image_loader.h"
#include "vmm/machine/machine.h"
#include "vmm/process/output_file.h"
#include "vmm/process/privileges.h"
#include "vmm/process/raw_terminal.h"
#include "vmm/process/thread_stacks.h"
#include "vmm/control/vm_directory.h"

namespace kvmmio::vmm {
namespace {

// The tree a VM with these options would get, without a VM: MPIDRs as KVM
// assigns them, and GICv3 for --gic auto (what any GICv3 host offers).
int dump_dtb(const RunOptions& options, const std::vector<VirtioDevicePlan>& plan,
             const BootLayout& boot) {
  DeviceTreeSpec spec;
  spec.ram_size = options.mem;
  spec.gic = options.gic == GicChoice::kV2 ? arm64::GicVersion::kV2 : arm64::GicVersion::kV3;
  if (options.cpus > layout::max_cpus(spec.gic))
    throw UsageError("--cpus " + std::to_string(options.cpus) +
                     " with --gic v2: a GICv2 guest can "
                     "have at most " +
                     std::to_string(layout::kMaxCpusGicV2) + " vCPUs; use fewer, or --gic v3");
  for (int i = 0; i < options.cpus; ++i) spec.cpu_mpidrs.push_back(mpidr_of_vcpu(i));
  spec.bootargs = options.kernel_cmdline();
  spec.initrd = boot.initrd;
  for (uint32_t i = 0; i < plan.size(); ++i)
    spec.virtio_mmio.push_back(layout::virtio_mmio_slot(i));
  add_random_seeds(spec);
  OutputFile out(*options.dump_dtb, "--dump-dtb");
  out.write(build_device_tree(spec));
  return exit_status::kPoweredOff;
}

// What the control socket's `info` says of this VM besides its state.
VmIdentity vm_identity(const RunOptions& options) {
  VmIdentity id;
  id.name = options.name.value_or("");
  id.pid = ::getpid();
  id.mem_bytes = options.mem;
  for (const net::NetOptions& n : options.nets) id.macs.push_back(net::mac_text(n.effective_mac()));
  if (options.vsock) id.cid = options.vsock->cid;
  return id;
}

void report_stop(const RunResult& result) {
  switch (result.exit_status) {
    case exit_status::kPoweredOff: break;  // the normal end: nothing to say
    case exit_status::kResetRequested:
      if (result.stop_reason == "reset")
        KVMMIO_LOG_INFO(
            "the guest asked for a reset (PSCI SYSTEM_RESET) and --on-reboot is exit: exit "
            "status 3, run kvmmio again to boot again");
      else  // the reboot bound: the reason says which
        KVMMIO_LOG_INFO("stopped: %s (exit status 3)", result.stop_reason.c_str());
      break;
    default:
      KVMMIO_LOG_INFO("stopped: %s (exit status %d)", result.stop_reason.c_str(),
                      result.exit_status);
      break;
  }
}

}  // namespace

int run_command(const RunOptions& options, StartupTimeline* startup) {
  // A background job (kvmmio run ... &) must never be stopped by its
  // terminal: it writes there regardless of TOSTOP, and reads it or
  // changes its mode only in the foreground (terminal_role()).
  ignore_terminal_stop_signals();
  // Before any thread of kvmmio's starts (thread_stacks.h says why).
  set_default_thread_stack(kThreadStackBytes);
  set_malloc_arenas(kMallocArenas);
  // Before any file the user named is opened: the --user kvmmio becomes
  // may own files in directories other users can write (user_path.h).
  std::optional<uid_t> run_as_uid;
  std::optional<gid_t> run_as_gid;
  if (options.user) {
    const Identity id = resolve_user(*options.user);
    run_as_uid = id.uid;
    run_as_gid = id.gid;
    trust_path_owner(id.uid);
  }
  if (options.group) run_as_gid = resolve_group(*options.group);
  auto kernel = std::make_unique<const KernelImage>(options.kernel);
  std::unique_ptr<const BootFile> initrd;
  if (options.initrd) initrd = std::make_unique<const BootFile>(*options.initrd, "--initrd");
  const BootLayout boot =
      plan_boot(layout::kRamBase, options.mem, kernel->header(),
                initrd ? std::optional<uint64_t>(initrd->size()) : std::nullopt);

  // --dump-dtb needs no console: open nothing (no pty, no socket file).
  if (options.dump_dtb) return dump_dtb(options, plan_virtio_devices(options, STDOUT_FILENO), boot);
  // A named VM's directory first: its console socket may be in it, and a
  // name in use is refused before anything else is made. Declared before
  // the sockets, so they are removed before it.
  std::optional<VmDirectory> vm_dir;
  if (options.name) vm_dir.emplace(*options.name);
  // After the files are checked, so a pty's path is not printed just
  // before an error about the kernel.
  ConsoleEnds console = open_console(options.console_to, terminal_role(STDIN_FILENO));
  const std::vector<VirtioDevicePlan> plan = plan_virtio_devices(options, console.out);

  // Before anything starts, so a taken path is refused at once.
  std::unique_ptr<ControlServer> api;
  if (vm_dir) {
    api = std::make_unique<ControlServer>(vm_dir->file(kApiSocketFile));
    KVMMIO_LOG_INFO("named %s: control socket on %s (kvmmio ctl %s stats, kvmmio stop %s)",
                    vm_dir->name().c_str(), api->path().c_str(), vm_dir->name().c_str(), vm_dir->name().c_str());
  } else if (options.api_socket) {
    api = std::make_unique<ControlServer>(*options.api_socket);
    KVMMIO_LOG_INFO("control socket on %s (kvmmio ctl %s stats)", api->path().c_str(),
                    api->path().c_str());
  }
  if (api) api->set_identity(vm_identity(options));

  std::optional<OutputFile> stats_file;
  if (options.stats) stats_file.emplace(*options.stats, "--stats");
  // A closed stdout must not kill kvmmio: ConsoleOutput sees EPIPE instead.
  ::signal(SIGPIPE, SIG_IGN);

  if (run_as_uid || run_as_gid) {
    const uid_t uid = run_as_uid.value_or(static_cast<uid_t>(-1));
    const gid_t gid = run_as_gid.value_or(static_cast<gid_t>(-1));
    console.give_to(uid, gid);
    if (api) api->give_to(uid, gid);
    if (vm_dir) vm_dir->give_to(uid, gid);
  }
  // Raw only while the guest owns the terminal (below).
  const bool console_on_terminal = console.stdio;

  MachineConfig config;
  config.mem = options.mem;
  config.cpus = options.cpus;
  config.gic = options.gic;
  config.bootargs = options.kernel_cmdline();
  config.kernel = std::move(kernel);
  config.initrd = std::move(initrd);
  config.boot = boot;
  config.console = std::move(console);
  config.console_destination = options.console_to.to_string();
  config.api = std::move(api);
  config.seccomp = options.seccomp;
  config.on_reboot = options.on_reboot;
  config.startup = startup;
  config.uid = run_as_uid;
  config.gid = run_as_gid;
  if (stats_file) {
    // kill -USR1: the counters so far, e.g. before and after a benchmark run.
    config.on_stats_request = [&stats_file](const MachineStats& stats) {
      try {
        stats_file->write(to_json(stats));
      } catch (const std::exception& e) {
        KVMMIO_LOG_ERROR("--stats snapshot: %s", e.what());
      }
    };
  }

  // Before anything holds guest memory: no core dumps, no ptrace by peers.
  harden_process();
  if (startup) startup->end_phase("setup");  // options, plans, files opened
  Machine machine(std::move(config));
  // In plan order, so the slots match the device tree --dump-dtb shows.
  for (const VirtioDevicePlan& d : plan) machine.add_virtio_mmio(d.name, d.type, d.make);
  if (startup) startup->end_phase("devices");
  RunResult result;
  {
    // Raw only while the guest owns the terminal: set-up errors above print
    // to a normal terminal, and the mode is restored before the messages
    // below.
    std::optional<RawTerminal> raw;
    if (console_on_terminal) raw.emplace(STDIN_FILENO);
    result = machine.run();
  }
  report_stop(result);
  if (stats_file) {
    MachineStats stats = machine.stats();
    try {
      stats_file->write(to_json(stats));
    } catch (const std::exception& e) {
      // The output the user asked for cannot be had: a usage error, as
      // for --dump-dtb (the guest's own status is in the log line above).
      KVMMIO_LOG_ERROR("%s", e.what());
      return exit_status::kUsage;
    }
  }
  return result.exit_status;
}

}  // namespace kvmmio::vmm
