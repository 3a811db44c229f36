// SPDX-License-Identifier: BSD-2-Clause
// Machine: one arm64 VM assembled from the memory map (vmm/boot/memory_map_arm64.h):
// RAM; the vCPUs, each on a thread of its own, with the in-kernel vGIC
// (VcpuSet, vcpu_set_arm64.h); the PL011, PL061 and PL031 (PlatformDevices,
// platform_devices.h: the console, unless a virtio-console device takes
// the console input, the power key and the clock); virtio-mmio devices in
// their slots; the event-loop thread for userspace backends; and the
// orderly stop. The Machine owns what it is given (MachineConfig).
//
// Confinement: once everything is set up and before the first guest
// instruction, the machine drops to --user/--group and each thread installs
// its seccomp filter (vmm/process/seccomp.h); a failure there stops it.
//
// Threads: one per vCPU; the event loop, which runs every device callback
// (polled notifies, the tap, the relay, console output, re-queued work),
// each within its work budget; and the control loop, which runs only the
// signal fd (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1), the console
// input with its Ctrl-A x, the console relay, the control socket
// (--api-socket) and the power key's release timer. A stop never waits behind device work: the
// control loop decides it at once, and the orderly stop then waits for
// each vCPU to leave KVM_RUN and for at most one budget of work per device
// (docs/security.md, "Budgets and bounds").
//
// Life cycle (one Machine per process):
//   Machine m(std::move(config)); // everything set up, no guest code run;
//                                // every vCPU ioctl happens on that vCPU's
//                                // own thread (KVM_ARM_VCPU_INIT included)
//   m.add_virtio_mmio(...);      // devices, in slot order
//   RunResult r = m.run();       // boots, returns once stopped and joined
//   MachineStats s = m.stats();
//
// A guest's reboot (PSCI SYSTEM_RESET) with --on-reboot restart happens
// inside run(), on the same VM, threads and fds: once confined and
// possibly without privileges, kvmmio could make none of them again (a
// new thread, a tap re-opened, a new VM). The main thread holds every
// vCPU out of KVM_RUN, resets each device as the host (the PL011, PL061
// and PL031 to power-on; each virtio-mmio transport as if its driver
// wrote 0 to Status, then waits for a disk's requests still running to
// end), clears the vGIC's SPIs, empties guest RAM and loads the kernel,
// initrd and a new device tree (a new rng seed) as at boot; each vCPU's
// thread re-initialises its vCPU (KVM_ARM_VCPU_INIT again), and all are
// released. At most RebootLimit's reboots in a minute (reboot_limit.h);
// --on-reboot exit stops with exit status 3 instead.
// A constructor that throws leaves nothing behind (threads joined, fds
// closed, memory unmapped). On hosts other than arm64 the constructor throws
// a UserError that says where kvmmio can run.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "kvmmio/console/input_sink.h"
#include "kvmmio/base/event_loop.h"
#include "kvmmio/mmio_bus.h"
#include "kvmmio/vm.h"
#include "vmm/boot/boot_layout.h"
#include "vmm/console/console_setup.h"
#include "vmm/control/control_server.h"
#include "vmm/boot/image_loader.h"
#include "vmm/boot/memory_map_arm64.h"
#include "vmm/process/seccomp.h"
#include "vmm/stats/startup_timeline.h"
#include "vmm/stats/stats.h"

namespace kvmmio::vmm {

// --gic: the vGIC the machine asks KVM for (auto: v3, else v2).
enum class GicChoice { kAuto, kV3, kV2 };
// --on-reboot: what the guest's reboot (PSCI SYSTEM_RESET) does.
enum class OnReboot { kRestart, kExit };

// What the machine is made of, handed over whole: the Machine owns the
// boot files, the console's ends and the control socket for its life, so
// nothing it uses can go before it does.
struct MachineConfig {
  uint64_t mem = 0;
  int cpus = 1;
  GicChoice gic = GicChoice::kAuto;
  std::string bootargs;
  std::unique_ptr<const KernelImage> kernel;  // required
  std::unique_ptr<const BootFile> initrd;     // optional
  BootLayout boot;                            // plan_boot() for kernel, initrd, mem
  // The console (console_setup.h): the PL011 writes to console.out, the
  // input is read from console.in (-1: none), and with --console ...,pty
  // or socket=PATH its relay, started on the control thread before the
  // guest runs and stopped with it; its counters go to --stats.
  ConsoleEnds console;
  std::string console_destination = "stdio";  // for --stats
  // --api-socket PATH or a named VM's: served on the control thread while
  // the guest runs (pause, resume, the power key, quit, stats). Optional.
  std::unique_ptr<ControlServer> api;
  // SIGUSR1 while the guest runs: called on the control thread with the
  // statistics so far (run_command writes them to --stats). Empty: ignored.
  std::function<void(const MachineStats&)> on_stats_request;
  // Start-up phases (vm, vcpus, vgic, device_tree, image_load, confine,
  // first_run) are ended on it, and --stats reports it. Optional: main()'s
  // own, made at exec, which outlives every machine.
  StartupTimeline* startup = nullptr;
  // Once set up, before the guest runs: become this user and group
  // (drop_privileges()), then confine every thread (Seccomp).
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  SeccompMode seccomp = SeccompMode::kOn;
  // The guest's reboot: in place (machine.h's life cycle), or a stop with
  // exit status 3.
  OnReboot on_reboot = OnReboot::kRestart;
};

// What a virtio-mmio device factory gets: the VM (for ioeventfds, irqfds,
// guest memory), the event loop (for backend fds) and its slot (base and
// SPI == GSI).
struct DeviceContext {
  Vm& vm;
  EventLoop& loop;
  layout::VirtioMmioSlot slot;
  // Installs the block I/O threads' seccomp filter (ThreadClass::kBlockIo)
  // on the calling thread; a disk's I/O thread calls it before its first
  // request, which is after the machine is set up and privileges dropped.
  std::function<void()> confine_block_io;
  // The same for a disk's io_uring thread (ThreadClass::kBlockUring).
  std::function<void()> confine_block_uring;
};
struct AttachedDevice {
  std::unique_ptr<MmioDevice> device;  // claimed on the bus at slot.base
  std::function<Counters()> counters;  // for --stats; include "guest_errors"
  // Set by the guest's console device (virtio-console): the console input
  // (stdin) goes here instead of the PL011. Owned by `device`; at most one.
  ConsoleInputSink* console_input = nullptr;
  // A reboot in place: the device reset by the host, as its driver's
  // reset leaves it (virtio_slot_factory sets it: MmioTransport::reset()).
  std::function<void()> reset;
  // After reset: true once nothing the device started before it can still
  // touch guest RAM (a disk's requests still running); empty: at once.
  std::function<bool()> quiesced;
};
using DeviceFactory = std::function<AttachedDevice(DeviceContext&)>;

struct RunResult {
  int exit_status = 0;
  std::string stop_reason;
};

class Machine {
 public:
  explicit Machine(MachineConfig config);
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // Puts a device in the next free virtio-mmio slot; before run() only.
  // Throws UserError when the window is full.
  layout::VirtioMmioSlot add_virtio_mmio(std::string name, std::string type, DeviceFactory factory);

  // Loads kernel, initrd and device tree, starts the vCPUs and the event
  // loop, and returns when the VM has stopped (guest power-off or reset,
  // signal, Ctrl-A x, failure) and every thread is joined.
  RunResult run();

  MachineStats stats() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvmmio::vmm
