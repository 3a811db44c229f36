// SPDX-License-Identifier: BSD-2-Clause
// The control socket's protocol (--api-socket; docs/usage.md, "Control
// socket"): one JSON object per line, each answered with one JSON line.
//
//   {"cmd":"stats"}     the --stats document, on one line
//   {"cmd":"pause"}     vCPUs parked outside KVM_RUN: {"result":"paused",...}
//   {"cmd":"resume"}    released again:               {"result":"resumed",...}
//   {"cmd":"shutdown"}  the guest's power key pressed: {"result":"shutdown requested"}
//   {"cmd":"quit"}      the VM stopped as by SIGTERM:  {"result":"quitting"}
//   {"cmd":"info"}      who it is: {"name":...,"pid":...,"state":"running"
//                       or "paused","uptime_s":...,"vcpus":...,"mem_mib":...,
//                       "macs":[...],"cid":N or null} (`kvmmio list` shows it)
//
// Anything else (not JSON, not an object, no "cmd", a "cmd" that is not a
// string or not one of these, any other key) is answered {"error":"..."}
// saying what was wrong, and the VM is not touched. The parser holds no
// state between lines and allocates in proportion to the line, which the
// server bounds (control_server.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vmm/stats/stats.h"

namespace kvmmio::vmm {

// What the control socket acts on: the Machine, or a fake in tests and in
// the fuzz target. Called on the control thread, one request at a time.
class VmControl {
 public:
  virtual ~VmControl() = default;
  virtual MachineStats stats() = 0;
  // Parks (resumes) every vCPU outside KVM_RUN; returns how many are
  // parked once it returns (pause waits a bounded time for them).
  virtual int pause() = 0;
  virtual void resume() = 0;
  virtual bool paused() const = 0;
  virtual int vcpu_count() const = 0;
  // Presses the guest's power key (shutdown) / stops the VM (quit).
  virtual void press_power_key() = 0;
  virtual void quit() = 0;
};

// What `info` says besides the VM's state: fixed for its life.
struct VmIdentity {
  std::string name;  // --name; empty for an unnamed VM (null in the answer)
  pid_t pid = 0;
  uint64_t mem_bytes = 0;
  std::vector<std::string> macs;  // one per --net, in order
  std::optional<uint32_t> cid;     // --vsock cid=N (null in the answer without one)
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

struct ControlReply {
  std::string line;  // one JSON object, no newline
  bool error = false;
};

// Answers one request line (without its newline). Never throws for any
// input; the reply of a malformed one has error set.
ControlReply handle_control_request(std::string_view line, VmControl& vm, const VmIdentity& identity = {});

// `{"error":MESSAGE}` as a line, MESSAGE escaped.
std::string control_error_line(std::string_view message);

}  // namespace kvmmio::vmm
