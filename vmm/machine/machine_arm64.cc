// SPDX-License-Identifier: BSD-2-Clause
// Machine on an arm64 host: assembly, boot and orderly stop (machine.h).
#include <linux/kvm.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "kvmmio/console/pl011.h"
#include "kvmmio/gpio/pl061.h"
#include "kvmmio/rtc/pl031.h"
#include "kvmmio/arch/arm64.h"
#include "kvmmio/kvm.h"
#include "kvmmio/base/log.h"
#include "vmm/console/console.h"
#include "vmm/stats/device_stats.h"
#include "vmm/boot/device_tree.h"
#include "vmm/stats/footprint.h"
#include "vmm/boot/host_page.h"
#include "vmm/machine/power_key.h"
#include "vmm/machine/machine.h"
#include "vmm/process/privileges.h"
#include "vmm/machine/reboot_limit.h"
#include "vmm/machine/rtc_alarm.h"
#include "vmm/process/signals.h"
#include "vmm/process/stop_request.h"
#include "vmm/machine/vcpu_runner_arm64.h"

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

struct Device {
  std::string name;
  std::string type;
  uint64_t base;
  uint64_t size;
  uint32_t spi;
  std::unique_ptr<MmioDevice> model;
  std::function<Counters()> counters;
  std::function<void()> reset;      // reboot in place; empty: the PrimeCells (reset by name)
  std::function<bool()> quiesced;   // after reset; empty: at once
};

// The --stats counters of a device that reports its own table, nothing
// added (the PL061, the PL031).
template <typename Model>
std::function<Counters()> table_counters(const std::unique_ptr<Model>& model) {
  return [&model] {
    Counters c;
    append_counters(c, model->counters());
    return c;
  };
}

}  // namespace

class Machine::Impl {
 public:
  explicit Impl(const MachineConfig& config);
  ~Impl();

  layout::VirtioMmioSlot add_virtio_mmio(std::string name, std::string type, DeviceFactory factory);
  RunResult run();
  MachineStats stats() const;

 private:
  arm64::GicVersion choose_gic();
  void check_resources();
  void load_guest();
  bool reboot();
  bool hold_vcpus();
  bool reset_devices();
  void empty_guest_ram();
  void confine();
  void shutdown();
  void end_phase(const char* name);  // of config_.startup, if any

  // The control socket's view of the machine (control_protocol.h), on the
  // control thread.
  class Control final : public VmControl {
   public:
    explicit Control(Impl& m) : m_(m) {}
    MachineStats stats() override { return m_.stats(); }
    int pause() override { return m_.pause(); }
    void resume() override { m_.resume(); }
    bool paused() const override { return m_.paused_.load(); }
    int vcpu_count() const override { return static_cast<int>(m_.runners_.size()); }
    void press_power_key() override { m_.power_key_->press(); }
    void quit() override {
      // As SIGTERM would: the same exit status, another reason.
      m_.stop_.request(StopCause::kSignal, "quit (control socket)", SIGTERM);
    }

   private:
    Impl& m_;
  };
  int pause();
  void resume();

  MachineConfig config_;
  SignalFd signals_;  // first: blocks the stop signals before any thread exists
  StopRequest stop_;
  Kvm kvm_;
  std::unique_ptr<Vm> vm_;
  arm64::GicVersion gic_ = arm64::GicVersion::kV3;
  EventLoop loop_;  // its thread starts here; devices' watches must go before it
  // The control thread: signals and console input (Ctrl-A x), nothing
  // else, so no device work, however long, delays a stop (machine.h).
  EventLoop control_{"control"};
  Seccomp seccomp_;  // log mode: its logging thread exists before any filter
  ConsoleOutput console_out_;
  std::unique_ptr<console::Pl011> uart_;
  std::unique_ptr<gpio::Pl061> gpio_;
  std::unique_ptr<PowerKey> power_key_;  // on control_
  std::unique_ptr<rtc::Pl031> rtc_;
  std::unique_ptr<RtcAlarm> rtc_alarm_;  // on control_; after rtc_: dropped first
  std::atomic<bool> paused_{false};
  Control control_api_{*this};
  std::vector<Device> devices_;  // the UART, the GPIO, the RTC, then virtio-mmio in slot order
  uint32_t virtio_count_ = 0;
  std::vector<std::unique_ptr<VcpuRunner>> runners_;
  std::vector<uint64_t> mpidrs_;
  std::unique_ptr<arm64::Vgic> vgic_;
  ConsoleInputSink* console_sink_ = nullptr;  // the console input's device: the UART by default
  std::unique_ptr<ConsoleInput> console_in_;
  EventLoop::Registration signal_watch_;
  bool ran_ = false;
  Clock::time_point started_{}, stopped_{};
  RebootLimit reboot_limit_;      // the main thread's
  std::atomic<uint64_t> reboots_{0};
};

Machine::Impl::Impl(const MachineConfig& config)
    : config_(config), seccomp_(config.seccomp), console_out_(config.console_out) {
  // RAM and the register mirrors are whole host pages in this memory map.
  check_host_page(host_page_size());
  vm_ = std::make_unique<Vm>(kvm_);
  gic_ = choose_gic();
  check_resources();
  vm_->add_ram(layout::kRamBase, config_.mem);
  end_phase("vm");

  // The UART: TX to the console, its level line through KVM_IRQ_LINE (see
  // kvmmio/console/pl011.h for why level).
  uart_ = std::make_unique<console::Pl011>(
      [this](uint8_t byte) { console_out_.put(byte); },
      [this](bool level) { vm_->irq_line(arm64::irq_line_spi(layout::kUartSpi), level); });
  vm_->mmio_bus().claim(layout::kUartBase, layout::kUartSize, *uart_, "pl011");
  devices_.push_back(Device{"uart0", "pl011", layout::kUartBase, layout::kUartSize, layout::kUartSpi, nullptr,
                            [this] { return pl011_counters(uart_->counters()); }, {}, {}});

  // The power key: a PL061 pin the device tree names KEY_POWER; its line
  // is a level, as the UART's.
  gpio_ = std::make_unique<gpio::Pl061>(
      [this](bool level) { vm_->irq_line(arm64::irq_line_spi(layout::kGpioSpi), level); });
  vm_->mmio_bus().claim(layout::kGpioBase, layout::kGpioSize, *gpio_, "pl061");
  devices_.push_back(Device{"gpio0", "pl061", layout::kGpioBase, layout::kGpioSize, layout::kGpioSpi,
                            nullptr, table_counters(gpio_), {}, {}});
  power_key_ = std::make_unique<PowerKey>(*gpio_, layout::kPowerKeyPin, control_);

  // The real-time clock: the host's time; its match alarm a timerfd on
  // the control thread, its line a level, as the UART's.
  rtc_alarm_ = std::make_unique<RtcAlarm>(control_, [this] { rtc_->alarm_due(); });
  rtc_ = std::make_unique<rtc::Pl031>(
      [this](bool level) { vm_->irq_line(arm64::irq_line_spi(layout::kRtcSpi), level); },
      [this](std::optional<int64_t> at) { rtc_alarm_->arm(at); });
  vm_->mmio_bus().claim(layout::kRtcBase, layout::kRtcSize, *rtc_, "pl031");
  devices_.push_back(Device{"rtc0", "pl031", layout::kRtcBase, layout::kRtcSize, layout::kRtcSpi,
                            nullptr, table_counters(rtc_), {}, {}});

  // vCPUs are created here (KVM_CREATE_VCPU is a VM ioctl) and initialised
  // on their own threads; the vGIC needs all of them initialised.
  for (int i = 0; i < config_.cpus; ++i)
    runners_.push_back(std::make_unique<VcpuRunner>(*vm_, vm_->create_vcpu(i), stop_,
                                                    config_.on_reboot == OnReboot::kRestart));
  for (auto& r : runners_) mpidrs_.push_back(r->wait_initialised());
  end_phase("vcpus");
  vgic_ = std::make_unique<arm64::Vgic>(*vm_, gic_, layout::kGicLayout, layout::kGicNrIrqs);
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
  if (ran_) throw std::logic_error("add_virtio_mmio after run()");
  if (virtio_count_ >= layout::kVirtioMmioSlots)
    throw UserError("too many virtio devices: the virtio-mmio window has " +
                    std::to_string(layout::kVirtioMmioSlots) + " slots; use fewer devices");
  const layout::VirtioMmioSlot slot = layout::virtio_mmio_slot(virtio_count_);
  DeviceContext context{*vm_, loop_, slot, [this] { seccomp_.confine_this_thread(ThreadClass::kBlockIo); },
                        [this] { seccomp_.confine_this_thread(ThreadClass::kBlockUring); }};
  AttachedDevice attached = factory(context);
  if (attached.console_input && console_sink_)
    throw std::logic_error("two devices take the console input");
  vm_->mmio_bus().claim(slot.base, slot.size, *attached.device, name);
  if (attached.console_input) console_sink_ = attached.console_input;
  devices_.push_back(Device{std::move(name), std::move(type), slot.base, slot.size, slot.spi,
                            std::move(attached.device), std::move(attached.counters),
                            std::move(attached.reset), std::move(attached.quiesced)});
  ++virtio_count_;
  return slot;
}

void Machine::Impl::load_guest() {
  DeviceTreeSpec spec;
  spec.ram_base = layout::kRamBase;
  spec.ram_size = config_.mem;
  spec.cpu_mpidrs = mpidrs_;
  spec.gic = gic_;
  spec.bootargs = config_.bootargs;
  spec.initrd = config_.boot.initrd;
  for (uint32_t i = 0; i < virtio_count_; ++i)
    spec.virtio_mmio.push_back(layout::virtio_mmio_slot(i));
  add_random_seeds(spec);
  const std::vector<uint8_t> dtb = build_device_tree(spec);
  // The start-up timeline is the first boot's: a reboot ends no phase.
  const bool first_boot = started_ == Clock::time_point{};
  if (first_boot) end_phase("device_tree");

  config_.kernel->load(vm_->memory(), config_.boot.kernel_entry);
  if (config_.initrd) config_.initrd->load(vm_->memory(), config_.boot.initrd->start);
  if (!vm_->memory().write(config_.boot.dtb, dtb.data(), dtb.size()))
    throw std::runtime_error("device tree does not fit at its planned address");
  if (first_boot) end_phase("image_load");
}

RunResult Machine::Impl::run() {
  if (ran_) throw std::logic_error("Machine::run() twice");
  ran_ = true;
  load_guest();

  // Input goes to one device: the one the guest's console is on. The PL011
  // still prints (earlycon) when it is not the console.
  ConsoleInputSink& sink = console_sink_ ? *console_sink_ : *uart_;
  if (config_.console_in >= 0)
    console_in_ =
        std::make_unique<ConsoleInput>(control_, config_.console_in, sink, config_.console_escapes,
                                       [this] { stop_.request(StopCause::kUserQuit, "Ctrl-A x"); });
  // The sockets appear at their paths now, while kvmmio may still create
  // files there (before --user), but are served only once the control
  // thread is confined: a client never talks to an unconfined kvmmio.
  if (config_.console_relay) config_.console_relay->publish();
  if (config_.api) config_.api->publish();
  signal_watch_ = control_.watch(signals_.fd(), [this] {
    while (auto sig = signals_.take()) {
      if (*sig == SIGUSR1) {
        if (config_.on_stats_request) config_.on_stats_request(stats());
        continue;
      }
      stop_.request(StopCause::kSignal, std::string("signal ") + signal_name(*sig), *sig);
    }
  });

  confine();
  end_phase("confine");
  // From the main thread, not yet confined: the watches are added here,
  // the clients served on the control thread under its filter.
  if (config_.console_relay) config_.console_relay->start(control_);
  if (config_.api) config_.api->start(control_, control_api_);
  started_ = Clock::now();
  for (auto& r : runners_) {
    const bool boot_cpu = &r == &runners_.front();
    r->start(boot_cpu ? std::optional<BootEntry>(BootEntry{config_.boot.kernel_entry, config_.boot.dtb})
                      : std::nullopt,
             [this, boot_cpu] {
               seccomp_.confine_this_thread(ThreadClass::kVcpu);
               // The last step before the guest's first instruction.
               if (boot_cpu && config_.startup) config_.startup->first_run();
             });
  }
  seccomp_.confine_this_thread(ThreadClass::kMain);
  // Each reboot in place is done here, on the main thread; a stop ends it.
  while (stop_.wait_for_stop_or_reboot())
    if (!reboot()) break;
  shutdown();
  stopped_ = Clock::now();

  RunResult result{stop_.exit_status(), stop_.reason()};
  return result;
}

// The guest asked for a reset (PSCI SYSTEM_RESET), --on-reboot restart:
// on the main thread, confined, the machine back to power-on and the guest
// booted again (machine.h, "Life cycle"). Returns false when the VM stops
// instead, the cause decided: a stop asked for meanwhile, the reboot
// bound, or a reboot that failed.
bool Machine::Impl::reboot() {
  if (!reboot_limit_.allow(Clock::now())) {
    KVMMIO_LOG_ERROR("the guest rebooted more than %d times in %lld s: taken for a reboot loop, "
                     "kvmmio stops (exit status 3)",
                     RebootLimit::kMaxReboots, static_cast<long long>(RebootLimit::kWindow.count()));
    stop_.request(StopCause::kReset, "reset (more than " + std::to_string(RebootLimit::kMaxReboots) +
                                         " reboots in " + std::to_string(RebootLimit::kWindow.count()) + " s)");
    return false;
  }
  try {
    if (!hold_vcpus() || !reset_devices()) return false;
    // The SPIs' state, after the devices lowered their level lines. Linux's
    // own GIC set-up on boot disables and deactivates every SPI as well
    // (what kexec relies on), so a kernel that refuses these accesses costs
    // at most a spurious interrupt the guest ignores: said, not fatal.
    try {
      vgic_->clear_spis();
    } catch (const std::exception& e) {
      KVMMIO_LOG_WARN("reboot: %s; the guest's GIC set-up clears them", e.what());
    }
    empty_guest_ram();
    load_guest();
    // Every vCPU re-initialised before any runs: a secondary's reset after
    // the boot vCPU's CPU_ON for it would power it off again.
    for (auto& r : runners_) {
      const bool boot_cpu = &r == &runners_.front();
      r->reinitialise(boot_cpu ? std::optional<BootEntry>(BootEntry{config_.boot.kernel_entry, config_.boot.dtb})
                               : std::nullopt);
    }
    for (auto& r : runners_)
      if (!r->wait_reinitialised()) return false;  // its thread failed and said why
  } catch (const std::exception& e) {
    KVMMIO_LOG_ERROR("reboot: %s", e.what());
    stop_.request(StopCause::kFailure, std::string("reboot: ") + e.what());
    return false;
  }
  const uint64_t n = reboots_.fetch_add(1) + 1;
  KVMMIO_LOG_INFO("the guest rebooted (PSCI SYSTEM_RESET): booting it again in place (reboot %llu)",
                  static_cast<unsigned long long>(n));
  for (auto& r : runners_) r->release();
  return true;
}

// Every vCPU out of KVM_RUN and parked (the one that saw the reset holds
// itself). A vCPU may be held up in a device (the PL011 waits for a full
// stdout): waited for, but a stop meanwhile wins.
bool Machine::Impl::hold_vcpus() {
  for (auto& r : runners_) r->hold();
  for (auto& r : runners_)
    while (!r->wait_parked(Clock::now() + std::chrono::seconds(1)))
      if (stop_.requested()) return false;
  return !stop_.requested();
}

// Each device as at power-on, with the vCPUs parked: the PrimeCells
// (lines lowered, the RTC's alarm cancelled, the power key released), then
// each virtio-mmio transport as its driver's reset would, under its device
// lock. A disk's requests still running end off the lock: they are waited
// for (at most kQuiesce), since one could still write guest RAM after it
// is reloaded.
bool Machine::Impl::reset_devices() {
  constexpr auto kQuiesce = std::chrono::seconds(30);
  uart_->reset();
  gpio_->reset();
  rtc_->reset();
  for (Device& d : devices_)
    if (d.reset) d.reset();
  const auto deadline = Clock::now() + kQuiesce;
  for (Device& d : devices_) {
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
  console_out_.stop_waiting();
  // Kicks every vCPU out of KVM_RUN (a vCPU may be blocked in WFI).
  for (auto& r : runners_) r->stop();
  for (auto& r : runners_) r->join();
  // The guest is gone: no more console input or signal handling (the stop
  // cause is decided).
  console_in_.reset();
  if (config_.console_relay) config_.console_relay->stop();
  if (config_.api) config_.api->stop();
  signal_watch_ = {};
}

// Every vCPU kicked out of KVM_RUN and parked; returns how many are parked
// within a second (a vCPU may be held in a device: the PL011 waits for a
// full stdout). The control thread waits no longer, so a stop never waits
// behind a pause.
int Machine::Impl::pause() {
  paused_ = true;
  for (auto& r : runners_) r->pause();
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  int parked = 0;
  for (auto& r : runners_) parked += r->wait_parked(deadline) ? 1 : 0;
  return parked;
}

void Machine::Impl::resume() {
  paused_ = false;
  for (auto& r : runners_) r->resume();
}

MachineStats Machine::Impl::stats() const {
  MachineStats s;
  s.cpus = config_.cpus;
  s.mem_bytes = config_.mem;
  s.gic = gic_choice_name(gic_);
  if (config_.startup) s.startup = config_.startup->stats();
  if (ran_) {
    const auto end = stopped_ == Clock::time_point{} ? Clock::now() : stopped_;
    s.wall_time_seconds = std::chrono::duration<double>(end - started_).count();
  }
  s.exit_status = stop_.requested() ? stop_.exit_status() : 0;
  s.stop_reason = stop_.requested() ? stop_.reason() : ran_ ? "running" : "not started";
  s.reboots = reboots_.load();
  s.event_loop_wakeups = loop_.dispatches();
  for (const auto& r : runners_)
    s.vcpus.push_back(vcpu_stats(r->vcpu().index(), r->vcpu().exit_counts()));
  for (const auto& d : devices_)
    s.devices.push_back(
        DeviceStats{d.name, d.type, d.base, d.size, d.spi, d.counters ? d.counters() : Counters{}});
  s.unclaimed_mmio = vm_->mmio_bus().unclaimed_accesses();
  s.console_destination = config_.console_destination;
  if (config_.console_relay) append_counters(s.console, config_.console_relay->counters());
  s.paused = paused_.load();
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

Machine::Machine(const MachineConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Machine::~Machine() = default;

layout::VirtioMmioSlot Machine::add_virtio_mmio(std::string name, std::string type,
                                                DeviceFactory factory) {
  return impl_->add_virtio_mmio(std::move(name), std::move(type), std::move(factory));
}
RunResult Machine::run() { return impl_->run(); }
MachineStats Machine::stats() const { return impl_->stats(); }

}  // namespace kvmmio::vmm
