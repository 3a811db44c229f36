// SPDX-License-Identifier: BSD-2-Clause
// kvm_notify_bench: what a notification and an interrupt cost through the
// KVM layer, measured in one run on one VM per case, interleaved, medians.
//
//   (a) guest store swallowed by a datamatched ioeventfd (no exit)
//   (b) guest store that exits to userspace, through Vcpu::run + MmioBus
//   (a0) the same as (a) driven by a bare KVM_RUN loop: the floor for (a)
//   (b0) the same store with a bare KVM_RUN loop: the floor (b) is held to
//   (c) interrupt raised through an irqfd
//   (d) interrupt raised by a VMM relay thread with KVM_IRQ_LINE
//       (the eventfd -> thread -> ioctl path QEMU and kvmtool use)
//
// (c) and (d) are round trips: trigger, the guest takes the interrupt and
// reports it with one exit. Only ratios in one run mean anything; under
// nested TCG absolute times are ~100x hardware.
//
// Each measurement runs in a forked child with a VM of its own, so no KVM
// state outlives it. A measurement that does not report in time is killed
// and fails the run.
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../tests/guests/test_machine.h"
#include <nlohmann/json.hpp>

#include "kvmmio/base/error.h"
#include "kvmmio/base/event_fd.h"
#include "vmm/process/parse.h"
#include "kvmmio/base/thread_name.h"
#include "kvmmio/ioeventfd.h"
#include "kvmmio/irqfd.h"

using namespace kvmmio;
using kvmmio::parse_uint;
using namespace kvmmio::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint32_t kGsi = 5;

double us_since(Clock::time_point start, uint64_t ops) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / ops;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "kvm_notify_bench: %s\n", what.c_str());
  std::exit(1);
}

double store_loop(Kvm& kvm, uint32_t stores, bool ioeventfd) {
  TestMachine m(kvm);
  std::optional<IoEventFd> fd;
  if (ioeventfd) fd.emplace(IoEventFd::mmio_datamatch<uint32_t>(m.vm(), m.notify_addr(), 0));
  m.load_store_loop(0, stores);
  const auto start = Clock::now();
  if (m.run_until_report(std::chrono::seconds(30)).kind != Report::Kind::kDone)
    die("store-loop guest did not finish");
  const double per = us_since(start, stores);
  const uint64_t seen = ioeventfd ? fd->event().take().value_or(0) : m.notify_exits();
  if (seen != stores) die("store count mismatch: " + std::to_string(seen));
  return per;
}

// A bare loop over KVM_RUN that only counts exits: no bus, no accounting,
// no watchdog. With `ioeventfd`, every store is expected to be swallowed.
double store_loop_raw(Kvm& kvm, uint32_t stores, bool ioeventfd) {
  TestMachine m(kvm);
  std::optional<IoEventFd> fd;
  if (ioeventfd) fd.emplace(IoEventFd::mmio_datamatch<uint32_t>(m.vm(), m.notify_addr(), 0));
  m.load_store_loop(0, stores);
  kvm_run* run = m.vcpu().run_struct();
  uint32_t exits = 0;
  const double per = m.on_vcpu_thread([&] {
    m.vcpu().complete_pending_io();
    const auto start = Clock::now();
    for (;;) {
      if (::ioctl(m.vcpu().fd(), KVM_RUN, 0) != 0) die("KVM_RUN failed");
      if (run->exit_reason == KVM_EXIT_MMIO && run->mmio.phys_addr == m.notify_addr()) {
        ++exits;
        continue;
      }
      break;  // the done report
    }
    return us_since(start, stores);
  });
  if (exits != (ioeventfd ? 0 : stores)) die("raw loop exit count mismatch");
  if (ioeventfd && fd->event().take().value_or(0) != stores) die("raw loop eventfd count mismatch");
  return per;
}

double interrupts(Kvm& kvm, uint32_t count, bool relay) {
  TestMachine m(kvm);
  IrqFd irq(m.vm(), kGsi);
  EventFd call;
  std::atomic<bool> stop{false};
  std::thread relay_thread;
  if (relay) {
    relay_thread = std::thread([&] {
      name_this_thread("relay");
      while (!stop)
        if (call.wait_readable(20) && call.take()) m.pulse_irq_line(kGsi);
    });
  }
  m.load_irq_guest(kGsi);
  if (m.run_until_report().kind != Report::Kind::kReady) die("irq guest not ready");
  // The whole loop runs on the vCPU thread under one watchdog, so each
  // round trip is trigger -> guest takes it -> report exit, nothing more.
  const double per = m.on_vcpu_thread([&] {
    KickAfter watchdog(m.vcpu(), std::chrono::seconds(300));
    const auto start = Clock::now();
    for (uint32_t i = 0; i < count; ++i) {
      relay ? call.signal() : irq.trigger();
      const Report r = m.next_report(&watchdog);
      if (r.kind != Report::Kind::kIrq || r.value != TestMachine::expected_irq_report(kGsi))
        die("interrupt " + std::to_string(i) + " not delivered");
    }
    return us_since(start, count);
  });
  stop = true;
  if (relay_thread.joinable()) relay_thread.join();
  return per;
}

// A measurement that has not reported by then is taken as hung (a guest
// stuck inside KVM_RUN, which no kick reaches in the bare loop) and its
// process killed. (On the nested platform this once happened when QEMU ran a
// previous guest's stale code: docs/arm64-platform.md, "Known L1 issues".)
constexpr int kMeasurementTimeoutMs = 120'000;

// Runs `measure` in a child process and returns what it measured.
double isolated(const std::function<double()>& measure) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) die("pipe");
  const pid_t pid = ::fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    ::close(pipefd[0]);
    const double v = measure();  // dies with a message on failure
    if (::write(pipefd[1], &v, sizeof(v)) != sizeof(v)) _exit(1);
    _exit(0);
  }
  ::close(pipefd[1]);
  double v = 0;
  ssize_t n = -1;
  pollfd pfd{pipefd[0], POLLIN, 0};
  if (::poll(&pfd, 1, kMeasurementTimeoutMs) == 1) {
    n = ::read(pipefd[0], &v, sizeof(v));
  } else {
    std::fprintf(stderr, "kvm_notify_bench: no result after %d s: killing the measurement\n",
                 kMeasurementTimeoutMs / 1000);
    ::kill(pid, SIGKILL);
  }
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (n != sizeof(v) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) die("a measurement failed");
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t stores = 20000, irqs = 2000, repeats = 3;
  std::optional<std::string> json;
  bool help = false;
  auto count = [](const char* name, uint32_t* out) {
    return [name, out](const std::string& v) {
      *out = static_cast<uint32_t>(parse_uint(v, std::string(name) + " " + v, 1, 100'000'000));
    };
  };
  const std::vector<CliOption> options = {
      {"--stores", "a number of guest stores, e.g. --stores 20000", count("--stores", &stores)},
      {"--irqs", "a number of interrupts, e.g. --irqs 2000", count("--irqs", &irqs)},
      {"--repeats", "a number of interleaved runs, e.g. --repeats 3", count("--repeats", &repeats)},
      {"--json", "an output file, e.g. --json kvm-bench.json",
       [&json](const std::string& v) { json = v; }},
      {"--help", "", [&help](const std::string&) { help = true; }},
  };
  try {
    parse_cli(options, std::vector<std::string>(argv + 1, argv + argc), 0);
  } catch (const UserError& e) {
    std::fprintf(stderr, "kvm_notify_bench: %s\n", e.what());
    return 2;
  }
  if (help) {
    std::printf("usage: kvm_notify_bench [--stores N] [--irqs N] [--repeats N] [--json FILE]\n");
    return 0;
  }

  // A clear error now if /dev/kvm is unusable: the benchmark needs KVM.
  try {
    Kvm probe;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvm_notify_bench: %s: this benchmark needs KVM\n", e.what());
    return 2;
  }
  std::vector<double> a, a0, b, b0, c, d;
  auto run = [](const std::function<double(Kvm&)>& fn) {
    return isolated([&] {
      Kvm kvm;
      return fn(kvm);
    });
  };
  for (uint32_t r = 0; r < repeats; ++r) {  // interleaved, so drift hits all cases alike
    a.push_back(run([&](Kvm& k) { return store_loop(k, stores, true); }));
    b.push_back(run([&](Kvm& k) { return store_loop(k, stores, false); }));
    a0.push_back(run([&](Kvm& k) { return store_loop_raw(k, stores, true); }));
    b0.push_back(run([&](Kvm& k) { return store_loop_raw(k, stores, false); }));
    c.push_back(run([&](Kvm& k) { return interrupts(k, irqs, false); }));
    d.push_back(run([&](Kvm& k) { return interrupts(k, irqs, true); }));
  }
  const double ma = median(a), ma0 = median(a0), mb = median(b), mb0 = median(b0), mc = median(c), md = median(d);
#if defined(__aarch64__)
  const char* arch = "arm64";
#else
  const char* arch = "x86_64";
#endif
  std::printf("kvm_notify_bench (%s): %u stores, %u interrupts, median of %u interleaved runs\n",
              arch, stores, irqs, repeats);
  std::printf("  %-52s %10.2f us\n", "(a) notify via datamatched ioeventfd", ma);
  std::printf("  %-52s %10.2f us\n", "(a0) notify via ioeventfd (bare KVM_RUN loop)", ma0);
  std::printf("  %-52s %10.2f us\n", "(b) notify via MMIO exit (Vcpu::run + MmioBus)", mb);
  std::printf("  %-52s %10.2f us\n", "(b0) notify via MMIO exit (bare KVM_RUN loop)", mb0);
  std::printf("  %-52s %10.2f us\n", "(c) interrupt via irqfd (round trip)", mc);
  std::printf("  %-52s %10.2f us\n", "(d) interrupt via relay thread + KVM_IRQ_LINE", md);
  std::printf("  ratio exit/ioeventfd (b/a)        %6.2fx\n", mb / ma);
  std::printf("  layer overhead on ioeventfd (a/a0) %5.3fx\n", ma / ma0);
  std::printf("  layer overhead on exits (b/b0)    %6.3fx\n", mb / mb0);
  std::printf("  ratio relay/irqfd (d/c)           %6.2fx\n", md / mc);
  if (json) {
    // Key order as readers have known it (bench/report/micro_file.cc).
    nlohmann::ordered_json doc = {
        {"arch", arch},
        {"stores", stores},
        {"irqs", irqs},
        {"repeats", repeats},
        {"us",
         {{"ioeventfd", ma}, {"ioeventfd_raw", ma0}, {"mmio_exit", mb}, {"mmio_exit_raw", mb0},
          {"irqfd", mc}, {"irq_line_relay", md}}}};
    std::ofstream f(*json);
    f << doc.dump() << "\n";
    f.close();
    if (!f) {
      std::fprintf(stderr, "kvm_notify_bench: --json %s: cannot write: %s\n", json->c_str(),
                   std::strerror(errno));
      return 2;
    }
  }
  return 0;
}
