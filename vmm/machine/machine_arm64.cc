// SPDX-License-Identifier: BSD-2-Clause
// Machine on an arm64 host: assembly, boot and orderly stop (machine.h).
#include <linux/kvm.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "kvmmio/arch/arm64.h"
#include "kvmmio/base/log.h"
#include "kvmmio/kvm.h"
#include "vmm/boot/device_tree.h"
#include "vmm/boot/host_page.h"
#include "vmm/machine/machine.h"
#include "vmm/machine/platform_devices.h"
#include "vmm/machine/reboot_limit.h"
#include "vmm/machine/vcpu_set_arm64.h"
#include "vmm/process/privileges.h"
#include "vmm/process/signals.h"
#include "vmm/process/stop_request.h"
#include "vmm/stats/device_stats.h"
#include "vmm/stats/footprint.h"

namespace kvmmio::vmm {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t host_ram_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

const char* gic_choice_name(arm64::GicVersion v) {
  return v == arm64::GicVersion::kV3 ? "v3" : "v2";
}

// A virtio-mmio device in its slot.
struct VirtioDevice {
  std::string name;
  std::string type;
  layout::VirtioMmioSlot slot;
  std::unique_ptr<MmioDevice> model;
  std::function<Counters()> counters;
  std::function<void()> reset;      // reboot in place
  std::function<bool()> quiesced;   // after reset; empty: at once
};

// The run's own record: whether and when it ran, and its reboots in place.
struct RunRecord {
  bool ran = false;
  Clock::time_point started{}, stopped{};
  RebootLimit reboot_limit;  // the main thread's
  std::atomic<uint64_t> reboots{0};
};

}  // namespace

class Machine::Impl final : public VmControl {
 public:
  explicit Impl(MachineConfig config);
  ~Impl() override;

  layout::VirtioMmioSlot add_virtio_mmio(std::string name, std::string type, DeviceFactory factory);
  RunResult run();
  MachineStats stats() const;

  // The control socket's view of the machine (control_protocol.h), on the
  // control thread.
  MachineStats stats() override { return std::as_const(*this).stats(); }
  int pause() override { return vcpus_->pause(); }
  void resume() override { vcpus_->resume(); }
  bool paused() const override { return vcpus_->paused(); }
  int vcpu_count() const override { return vcpus_->count(); }
  void press_power_key() override { platform_->power_key().press(); }
  void quit() override {
    // As SIGTERM would: the same exit status, another reason.
    stop_.request(StopCause::kSignal, "quit (control socket)", SIGTERM);
  }

 private:
  arm64::GicVersion choose_gic();
  void check_resources();
  void load_guest();
  BootEntry boot_entry() const { return BootEntry{config_.boot.kernel_entry, config_.boot.dtb}; }
  bool reboot();
  bool reset_devices();
  void empty_guest_ram();
  void confine();
  void shutdown();
  void end_phase(const char* name);  // of config_.startup, if any

  MachineConfig config_;
  // First: blocks the stop signals before any thread exists. Its watch is
  // on control_, which goes before it: shutdown() (run by the destructor
  // too) drops the watch.
  SignalFd signals_;
  StopRequest stop_;
  Kvm kvm_;
  std::unique_ptr<Vm> vm_;
  EventLoop loop_;  // its thread starts here; devices' watches must go before it
  // The control thread: signals and console input (Ctrl-A x), nothing
  // else, so no device work, however long, delays a stop (machine.h).
  EventLoop control_{"control"};
  Seccomp seccomp_;  // log mode: its logging thread exists before any filter
  std::unique_ptr<PlatformDevices> platform_;
  std::vector<VirtioDevice> virtio_;  // in slot order
  std::unique_ptr<VcpuSet> vcpus_;
  RunRecord record_;
};

Machine::Impl::Impl(MachineConfig config)
    : config_(std::move(config)), seccomp_(config_.seccomp) {
  // RAM and the register mirrors are whole host pages in this memory map.
  check_host_page(host_page_size());
  vm_ = std::make_unique<Vm>(kvm_);
  const arm64::GicVersion gic = choose_gic();
  check_resources();
  vm_->add_ram(layout::kRamBase, config_.mem);
  end_phase("vm");
  platform_ = std::make_unique<PlatformDevices>(*vm_, control_, config_.console.out);
  vcpus_ = std::make_unique<VcpuSet>(*vm_, config_.cpus, stop_, config_.on_reboot == OnReboot::kRestart, gic,
                                     [this] { end_phase("vcpus"); });
  end_phase("vgic");
}

void Machine::Impl::end_phase(const char* name) {
  if (config_.startup) config_.startup->end_phase(name);
}

Machine::Impl::~Impl() { shutdown(); }

arm64::GicVersion Machine::Impl::choose_gic() {
  using arm64::GicVersion;
  const bool v3 = arm64::vgic_supported(*vm_, GicVersion::kV3);
  const bool v2 = arm64::vgic_supported(*vm_, GicVersion::kV2);
  GicVersion chosen;
  switch (config_.gic) {
    case GicChoice::kV3:
      if (!v3)
        throw UserError(std::string("--gic v3: this host's KVM cannot create a virtual GICv3") +
                        (v2 ? "; use --gic v2 or --gic auto" : " (nor a GICv2)"));
      chosen = GicVersion::kV3;
      break;
    case GicChoice::kV2:
      if (!v2)
        throw UserError(std::string("--gic v2: this host's KVM cannot create a virtual GICv2 "
                                    "(GICv3 hosts without GICv2 compatibility cannot)") +
                        (v3 ? "; use --gic v3 or --gic auto" : ""));
      chosen = GicVersion::kV2;
      break;
    case GicChoice::kAuto:
    default:
      if (!v3 && !v2)
        throw UserError("this host's KVM can create neither a virtual GICv3 nor a GICv2");
      chosen = v3 ? GicVersion::kV3 : GicVersion::kV2;
      break;
  }
  if (config_.cpus > layout::max_cpus(chosen))
    throw UserError("--cpus " + std::to_string(config_.cpus) + ": a " + arm64::gic_name(chosen) +
                    " guest can have at most " + std::to_string(layout::max_cpus(chosen)) +
                    " vCPUs; use fewer" + (chosen == GicVersion::kV2 && v3 ? ", or --gic v3" : ""));
  return chosen;
}

void Machine::Impl::check_resources() {
  int max = kvm_.check_extension(KVM_CAP_MAX_VCPUS);
  if (max <= 0) max = kvm_.check_extension(KVM_CAP_NR_VCPUS);
  if (max > 0 && config_.cpus > max)
    throw UserError("--cpus " + std::to_string(config_.cpus) + ": this host's KVM allows at most " +
                    std::to_string(max) + " vCPUs per VM; use --cpus " + std::to_string(max) +
                    " or fewer");
  // Guest RAM is allocated as the guest touches it, but a VM bigger than the
  // host cannot run well, and is almost always a typo.
  const uint64_t host = host_ram_bytes();
  if (host && config_.mem > host)
    throw UserError("--mem " + std::to_string(config_.mem >> 20) + "M is more than this host's " +
                    std::to_string(host >> 20) + " MiB of RAM; use a smaller --mem");
}

layout::VirtioMmioSlot Machine::Impl::add_virtio_mmio(std::string name, std::string type,
                                                      DeviceFactory factory) {
  if (record_.ran) throw std::logic_error("add_virtio_mmio after run()");
  if (virtio_.size() >= layout::kVirtioMmioSlots)
    throw UserError("too many virtio devices: the virtio-mmio window has " +
                    std::to_string(layout::kVirtioMmioSlots) + " slots; use fewer devices");
  const layout::VirtioMmioSlot slot = layout::virtio_mmio_slot(static_cast<uint32_t>(virtio_.size()));
  DeviceContext context{*vm_, loop_, slot, [this] { seccomp_.confine_this_thread(ThreadClass::kBlockIo); },
                        [this] { seccomp_.confine_this_thread(ThreadClass::kBlockUring); }};
  AttachedDevice attached = factory(context);
  if (attached.console_input) platform_->take_console_input(*attached.console_input);
  vm_->mmio_bus().claim(slot.base, slot.size, *attached.device, name);
  virtio_.push_back(VirtioDevice{std::move(name), std::move(type), slot, std::move(attached.device),
                                 std::move(attached.counters), std::move(attached.reset),
                                 std::move(attached.quiesced)});
  return slot;
}

void Machine::Impl::load_guest() {
  DeviceTreeSpec spec;
  spec.ram_base = layout::kRamBase;
  spec.ram_size = config_.mem;
  spec.cpu_mpidrs = vcpus_->mpidrs();
  spec.gic = vcpus_->gic();
  spec.bootargs = config_.bootargs;
  spec.initrd = config_.boot.initrd;
  for (const VirtioDevice& d : virtio_) spec.virtio_mmio.push_back(d.slot);
  add_random_seeds(spec);
  const std::vector<uint8_t> dtb = build_device_tree(spec);
  // The start-up timeline is the first boot's: a reboot ends no phase.
  const bool first_boot = record_.started == Clock::time_point{};
  if (first_boot) end_phase("device_tree");

  config_.kernel->load(vm_->memory(), config_.boot.kernel_entry);
  if (config_.initrd) config_.initrd->load(vm_->memory(), config_.boot.initrd->start);
  if (!vm_->memory().write(config_.boot.dtb, dtb.data(), dtb.size()))
    throw std::runtime_error("device tree does not fit at its planned address");
  if (first_boot) end_phase("image_load");
}

RunResult Machine::Impl::run() {
  if (record_.ran) throw std::logic_error("Machine::run() twice");
  record_.ran = true;
  load_guest();

  // Input goes to one device: the one the guest's console is on. The PL011
  // still prints (earlycon) when it is not the console.
  if (config_.console.in >= 0)
    platform_->start_console_input(control_, config_.console.in, config_.console.escapes,
                                   [this] { stop_.request(StopCause::kUserQuit, "Ctrl-A x"); });
  // The sockets appear at their paths now, while kvmmio may still create
  // files there (before --user), but are served only once the control
  // thread is confined: a client never talks to an unconfined kvmmio.
  if (config_.console.relay) config_.console.relay->publish();
  if (config_.api) config_.api->publish();
  signals_.watch(control_, [this](int sig) {
    if (sig == SIGUSR1) {
      if (config_.on_stats_request) config_.on_stats_request(std::as_const(*this).stats());
      return;
    }
    stop_.request(StopCause::kSignal, std::string("signal ") + signal_name(sig), sig);
  });

  confine();
  end_phase("confine");
  // From the main thread, not yet confined: the watches are added here,
  // the clients served on the control thread under its filter.
  if (config_.console.relay) config_.console.relay->start(control_);
  if (config_.api) config_.api->start(control_, *this);
  record_.started = Clock::now();
  vcpus_->start(boot_entry(), [this](bool boot_cpu) {
    seccomp_.confine_this_thread(ThreadClass::kVcpu);
    // The last step before the guest's first instruction.
    if (boot_cpu && config_.startup) config_.startup->first_run();
  });
  seccomp_.confine_this_thread(ThreadClass::kMain);
  // Each reboot in place is done here, on the main thread; a stop ends it.
  while (stop_.wait_for_stop_or_reboot())
    if (!reboot()) break;
  shutdown();
  record_.stopped = Clock::now();

  RunResult result{stop_.exit_status(), stop_.reason()};
  return result;
}

// The guest asked for a reset (PSCI SYSTEM_RESET), --on-reboot restart:
// on the main thread, confined, the machine back to power-on and the guest
// booted again (machine.h, "Life cycle"). Returns false when the VM stops
// instead, the cause decided: a stop asked for meanwhile, the reboot
// bound, or a reboot that failed.
bool Machine::Impl::reboot() {
  if (!record_.reboot_limit.allow(Clock::now())) {
    KVMMIO_LOG_ERROR("the guest rebooted more than %d times in %lld s: taken for a reboot loop, "
                     "kvmmio stops (exit status 3)",
                     RebootLimit::kMaxReboots, static_cast<long long>(RebootLimit::kWindow.count()));
    stop_.request(StopCause::kReset, "reset (more than " + std::to_string(RebootLimit::kMaxReboots) +
                                         " reboots in " + std::to_string(RebootLimit::kWindow.count()) + " s)");
    return false;
  }
  try {
    if (!vcpus_->hold(stop_) || !reset_devices()) return false;
    // The SPIs' state, after the devices lowered their level lines. Linux's
    // own GIC set-up on boot disables and deactivates every SPI as well
    // (what kexec relies on), so a kernel that refuses these accesses costs
    // at most a spurious interrupt the guest ignores: said, not fatal.
    try {
      vcpus_->clear_spis();
    } catch (const std::exception& e) {
      KVMMIO_LOG_WARN("reboot: %s; the guest's GIC set-up clears them", e.what());
    }
    empty_guest_ram();
    load_guest();
    if (!vcpus_->reinitialise(boot_entry())) return false;  // a vCPU's thread failed and said why
  } catch (const std::exception& e) {
    KVMMIO_LOG_ERROR("reboot: %s", e.what());
    stop_.request(StopCause::kFailure, std::string("reboot: ") + e.what());
    return false;
  }
  const uint64_t n = record_.reboots.fetch_add(1) + 1;
  KVMMIO_LOG_INFO("the guest rebooted (PSCI SYSTEM_RESET): booting it again in place (reboot %llu)",
                  static_cast<unsigned long long>(n));
  vcpus_->release();
  return true;
}

// Each device as at power-on, with the vCPUs parked: the PrimeCells
// (lines lowered, the RTC's alarm cancelled, the power key released), then
// each virtio-mmio transport as its driver's reset would, under its device
// lock. A disk's requests still running end off the lock: they are waited
// for (at most kQuiesce), since one could still write guest RAM after it
// is reloaded.
bool Machine::Impl::reset_devices() {
  constexpr auto kQuiesce = std::chrono::seconds(30);
  platform_->reset();
  for (VirtioDevice& d : virtio_)
    if (d.reset) d.reset();
  const auto deadline = Clock::now() + kQuiesce;
  for (VirtioDevice& d : virtio_) {
    if (!d.quiesced) continue;
    while (!d.quiesced()) {
      if (stop_.requested()) return false;
      if (Clock::now() > deadline) {
        stop_.request(StopCause::kFailure, "reboot: " + d.name + "'s requests did not end within " +
                                               std::to_string(kQuiesce.count()) + " s of its reset");
        KVMMIO_LOG_ERROR("%s", stop_.reason().c_str());
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return true;
}

// Guest RAM back to zeros as at boot, and its pages given back to the host:
// MADV_REMOVE punches them out of the memfd behind the shared mapping (KVM
// drops its stage-2 mappings of them). Where that is refused, zeros are
// written.
void Machine::Impl::empty_guest_ram() {
  for (const auto& region : vm_->memory().regions()) {
    if (::madvise(region->host(), region->size(), MADV_REMOVE) == 0) continue;
    KVMMIO_LOG_WARN("reboot: madvise(MADV_REMOVE) on guest RAM: %s; writing zeros instead",
                    std::strerror(errno));
    std::memset(region->host(), 0, region->size());
  }
}

// Everything is set up: drop to --user/--group (every thread at once),
// then each loop thread installs its filter; the vCPUs install theirs
// before their first KVM_RUN, the main thread once they are started.
void Machine::Impl::confine() {
  if (config_.uid || config_.gid)
    drop_privileges(config_.uid.value_or(::getuid()), config_.gid.value_or(::getgid()));
  // Both loops at once: each compiles and installs its own filter, and a
  // round trip to a loop thread is most of what confining it costs (two
  // in turn took 28-41 ms of the nested platform's start-up).
  struct Step {
    EventLoop* loop;
    ThreadClass thread_class;
    EventFd go{};
    std::exception_ptr error{};
    EventLoop::Registration once{};
  };
  Step steps[] = {{&control_, ThreadClass::kControl}, {&loop_, ThreadClass::kDevice}};
  for (Step& st : steps) {
    st.once = st.loop->watch_eventfd(st.go.fd(), [this, &st](uint64_t) {
      try {
        seccomp_.confine_this_thread(st.thread_class);
      } catch (...) {
        st.error = std::current_exception();
      }
    });
    st.go.signal();
  }
  for (Step& st : steps) st.loop->flush();  // each callback has run on its loop's thread
  for (Step& st : steps)
    if (st.error) std::rethrow_exception(st.error);
}

void Machine::Impl::shutdown() {
  // Normally the stop cause is decided by now; otherwise this is a teardown
  // (an error between construction and the end of run()).
  stop_.request(StopCause::kFailure, "machine torn down before the guest stopped");
  platform_->stop_console_output();
  vcpus_->stop_and_join();
  // The guest is gone: no more console input or signal handling (the stop
  // cause is decided).
  platform_->stop_console_input();
  if (config_.console.relay) config_.console.relay->stop();
  if (config_.api) config_.api->stop();
  signals_.unwatch();
}

MachineStats Machine::Impl::stats() const {
  MachineStats s;
  s.cpus = config_.cpus;
  s.mem_bytes = config_.mem;
  s.gic = gic_choice_name(vcpus_->gic());
  if (config_.startup) s.startup = config_.startup->stats();
  if (record_.ran) {
    const auto end = record_.stopped == Clock::time_point{} ? Clock::now() : record_.stopped;
    s.wall_time_seconds = std::chrono::duration<double>(end - record_.started).count();
  }
  s.exit_status = stop_.requested() ? stop_.exit_status() : 0;
  s.stop_reason = stop_.requested() ? stop_.reason() : record_.ran ? "running" : "not started";
  s.reboots = record_.reboots.load();
  s.event_loop_wakeups = loop_.dispatches();
  s.vcpus = vcpus_->stats();
  s.devices = platform_->stats();
  for (const auto& d : virtio_)
    s.devices.push_back(DeviceStats{d.name, d.type, d.slot.base, d.slot.size, d.slot.spi,
                                    d.counters ? d.counters() : Counters{}});
  s.unclaimed_mmio = vm_->mmio_bus().unclaimed_accesses();
  s.console_destination = config_.console_destination;
  if (config_.console.relay) append_counters(s.console, config_.console.relay->counters());
  s.paused = vcpus_->paused();
  if (config_.api) {
    s.api_socket = config_.api->path();
    append_counters(s.api, config_.api->counters());
  }
  // Guest RAM by its memfds (the Machine's RAM is always its own memfds):
  // their allocated size is what is taken from kvmmio's resident memory.
  std::vector<GuestRamFile> guest_ram;
  for (const auto& region : vm_->memory().regions()) guest_ram.push_back({region->memfd(), region->size()});
  const Footprint f = measure_footprint(guest_ram);
  s.rss_outside_guest_ram_kib = f.rss_outside_guest_ram_kib;
  s.private_outside_guest_ram_kib = f.private_outside_guest_ram_kib;
  s.threads = f.threads;
  return s;
}

Machine::Machine(MachineConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Machine::~Machine() = default;

layout::VirtioMmioSlot Machine::add_virtio_mmio(std::string name, std::string type,
                                                DeviceFactory factory) {
  return impl_->add_virtio_mmio(std::move(name), std::move(type), std::move(factory));
}
RunResult Machine::run() { return impl_->run(); }
MachineStats Machine::stats() const { return impl_->stats(); }

}  // namespace kvmmio::vmm
