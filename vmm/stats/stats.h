// SPDX-License-Identifier: BSD-2-Clause
// The --stats document: what one VM run did, as JSON (schema in
// docs/usage.md, "Statistics"). Plain data plus the writer; the machine
// fills it in at exit.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kvmmio/vcpu.h"

#include "vmm/stats/startup_timeline.h"

namespace kvmmio::vmm {

// Named counters in a fixed order (the JSON keeps it).
using Counters = std::vector<std::pair<std::string, uint64_t>>;

struct VcpuStats {
  int index = 0;
  Counters exits;  // by reason
  uint64_t total_exits = 0;
};

struct DeviceStats {
  std::string name;  // "uart0", "virtio0", ...
  std::string type;  // "pl011", "virtio-console", ...
  uint64_t base = 0;
  uint64_t size = 0;
  uint32_t spi = 0;
  // Every device reports "guest_errors"; virtio devices add the transport's
  // counters (notifies by path, interrupts injected or relayed by the VMM).
  Counters counters;
};

struct MachineStats {
  static constexpr int kSchemaVersion = 1;
  int cpus = 0;
  uint64_t mem_bytes = 0;
  std::string gic;  // "v3" or "v2": what the guest got
  double wall_time_seconds = 0;
  StartupStats startup;  // exec to the first KVM_RUN, by phase
  int exit_status = 0;
  std::string stop_reason;  // "poweroff", "reset", "signal SIGINT", "failure: ...", "running" (a snapshot)
  uint64_t reboots = 0;     // the guest's reboots in place (--on-reboot restart)
  std::vector<VcpuStats> vcpus;
  std::vector<DeviceStats> devices;
  uint64_t unclaimed_mmio = 0;  // guest accesses no device claimed (guest errors)
  // Callbacks the device event-loop thread ran (EventLoop::dispatches()):
  // a polled notify, a relayed interrupt, tap readiness or link change,
  // console output waiting for room, deferred device work. One wake-up of
  // the thread may run several; the control thread's (signals, console
  // input) are not counted.
  uint64_t event_loop_wakeups = 0;
  // Where the console went (--console ...,DEST) and, for pty and socket,
  // the relay's counters (vmm/console/console_relay.h); empty otherwise.
  std::string console_destination = "stdio";
  Counters console;
  // vCPUs parked by the control socket's pause (control_protocol.h).
  bool paused = false;
  // kvmmio's own memory and threads when the stats were taken (footprint.h).
  uint64_t rss_outside_guest_ram_kib = 0;
  uint64_t private_outside_guest_ram_kib = 0;
  uint64_t threads = 0;
  // --api-socket: its path and counters (control_server.h); empty without.
  std::string api_socket;
  Counters api;
};

VcpuStats vcpu_stats(int index, const VcpuExitCounts& counts);

// Pretty-printed (two-space indent), written with nlohmann-json; read it
// with a JSON parser (jq in the scripts), not by line shape.
std::string to_json(const MachineStats& stats);
// The same document on one line, with no newline (the control socket's
// answer to "stats").
std::string to_json_line(const MachineStats& stats);

}  // namespace kvmmio::vmm
