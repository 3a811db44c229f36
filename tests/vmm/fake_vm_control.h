// SPDX-License-Identifier: BSD-2-Clause
// FakeVmControl: a fake machine behind the control socket (VmControl),
// for the tests and the fuzz target: no KVM, no vCPUs; it records what it
// was asked to do and answers stats with a small fixed document (plus,
// if asked, the real footprint and a real power key, as the Machine's).
#pragma once

#include <atomic>

#include "vmm/control/control_protocol.h"
#include "vmm/stats/footprint.h"
#include "vmm/machine/power_key.h"

namespace kvmmio::vmm::test {

class FakeVmControl final : public VmControl {
 public:
  MachineStats stats() override {
    MachineStats s;
    s.cpus = 2;
    s.mem_bytes = 64 << 20;
    s.gic = "v3";
    s.stop_reason = "running";
    s.paused = paused_;
    if (measure_footprint_too) {  // as the Machine does, /proc/self read
      const Footprint f = measure_footprint({});
      s.rss_outside_guest_ram_kib = f.rss_outside_guest_ram_kib;
      s.private_outside_guest_ram_kib = f.private_outside_guest_ram_kib;
      s.threads = f.threads;
    }
    return s;
  }
  int pause() override {
    paused_ = true;
    ++pauses;
    return vcpu_count();
  }
  void resume() override {
    paused_ = false;
    ++resumes;
  }
  bool paused() const override { return paused_; }
  int vcpu_count() const override { return 2; }
  void press_power_key() override {
    ++power_key_presses;
    if (power_key) power_key->press();
  }
  void quit() override { ++quits; }

  std::atomic<int> pauses{0}, resumes{0}, power_key_presses{0}, quits{0};
  bool measure_footprint_too = false;
  PowerKey* power_key = nullptr;  // optional: pressed as the Machine's is

 private:
  std::atomic<bool> paused_{false};
};

}  // namespace kvmmio::vmm::test
