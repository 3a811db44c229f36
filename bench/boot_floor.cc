// SPDX-License-Identifier: BSD-2-Clause
// boot_floor: the least a VMM must do before a guest kernel can run, timed
// the way kvmmio times its own start-up (--stats "startup_ms"), so that
// kvmmio's start-up has a floor to be held to in the same run
// (bench/startup.sh; docs/benchmarks.md, "Start-up").
//
//   boot_floor --kernel Image [--initrd FILE] [--mem MiB] [--gic auto|3|2]
//              [--run CMDLINE] [--json FILE]
//
// --gic auto (the default, as kvmmio's): a GICv3 where KVM can make one,
// else a GICv2. --json FILE: the JSON object goes there, not to stdout.
//
// Raw KVM ioctls: /dev/kvm, a VM, guest RAM (a memfd mapped shared, with
// MADV_HUGEPAGE, as kvmmio's), one vCPU, the vGIC, the kernel and the
// initrd read into RAM where kvmmio puts them (vmm/boot/boot_layout.h), the
// boot registers, then vCPU 0's first KVM_RUN. Its time is taken just
// before the call, as kvmmio's first_run is.
//
// Without --run there is no device tree and no device: the first KVM_RUN
// is made with immediate_exit set, so KVM returns at once without entering
// the guest (there is nothing the guest could boot with), and the JSON
// object goes to stdout.
//
// With --run CMDLINE (and --json FILE: stdout is the guest's console) the
// floor boots the same kernel for real, so that a benchmark can compare
// the time from exec to the guest kernel's clock of kvmmio, QEMU and the
// floor. The guest gets kvmmio's own device tree (vmm/boot/device_tree.h,
// without virtio devices; CMDLINE as bootargs), built in a phase of its
// own, "device_tree", before image_load, as kvmmio builds it. The first
// KVM_RUN enters the guest; the JSON is written when it first returns (all
// its times are taken before the call). Then the floor serves the guest as
// little as a console needs: bytes written to the PL011's data register go
// to stdout at once; reads of the PL011 return 0 (the transmitter is never
// full), except its ID registers, which Linux's AMBA bus reads to bind
// amba-pl011; any other MMIO reads 0 and ignores writes. The guest's PSCI
// SYSTEM_OFF or SYSTEM_RESET, SIGTERM and SIGINT end it with status 0; any
// other exit is an error (status 1).
//
// Of kvmmio's code only its start-up timeline (vmm/stats/startup_timeline.h),
// so both are timed by one rule, and its boot placement and device tree,
// so both boot the guest alike. The JSON object: exec_to_main (from
// /proc/self/stat, clock-tick steps), the phases (setup, vm, vcpus, vgic,
// [device_tree,] image_load, first_run) and to_first_run, in
// milliseconds. arm64 hosts only; elsewhere it says so and exits 2.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#if defined(__aarch64__)
#include <linux/kvm.h>
#endif

#include "kvmmio/amba/primecell.h"
#include "kvmmio/base/unique_fd.h"
#include "kvmmio/console/pl011.h"
#include "vmm/boot/boot_layout.h"
#include "vmm/boot/device_tree.h"
#include "vmm/boot/memory_map_arm64.h"
#include "vmm/stats/startup_timeline.h"

namespace {

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "boot_floor: %s\nusage: boot_floor --kernel Image [--initrd FILE] [--mem MiB] "
               "[--gic auto|3|2] [--run CMDLINE] [--json FILE]\n",
               what.c_str());
  std::exit(2);
}

struct Options {
  std::string kernel, initrd;
  uint64_t mem_mib = 128;
  int gic = 0;                     // 0: auto
  std::optional<std::string> run;  // the guest's command line: boot it
  std::string json;                // empty: stdout
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage_error(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--kernel") {
      o.kernel = v;
    } else if (a == "--initrd") {
      o.initrd = v;
    } else if (a == "--mem") {
      char* end = nullptr;
      o.mem_mib = std::strtoull(v.c_str(), &end, 10);
      if (*end || o.mem_mib < 64 || o.mem_mib > 65536) usage_error("--mem " + v + ": want 64-65536 (MiB)");
    } else if (a == "--gic") {
      if (v != "3" && v != "2" && v != "auto") usage_error("--gic " + v + ": want auto, 3 or 2");
      o.gic = v == "auto" ? 0 : v[0] - '0';
    } else if (a == "--run") {
      o.run = v;
    } else if (a == "--json") {
      if (v.empty()) usage_error("--json needs a file name");
      o.json = v;
    } else {
      usage_error("unknown argument " + a);
    }
  }
  if (o.kernel.empty()) usage_error("--kernel is required");
  if (o.run && o.json.empty()) usage_error("--run needs --json FILE (stdout is the guest's console)");
  return o;
}

#if defined(__aarch64__)

namespace layout = kvmmio::vmm::layout;
using kvmmio::UniqueFd;

// One JSON object: kvmmio's --stats "startup_ms" shape, from the same
// timeline kvmmio keeps (vmm/stats/startup_timeline.h), so both are timed alike.
std::string json(const kvmmio::vmm::StartupStats& st) {
  std::string s = "{\"startup_ms\":{";
  char buf[128];
  if (st.exec_to_main_ms) {
    std::snprintf(buf, sizeof buf, "\"exec_to_main\":%.3f,", *st.exec_to_main_ms);
    s += buf;
  }
  for (const auto& [name, ms] : st.phases_ms) {
    std::snprintf(buf, sizeof buf, "\"%s\":%.3f,", name.c_str(), ms);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "\"to_first_run\":%.3f}}\n", st.to_first_run_ms.value_or(0));
  return s + buf;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "boot_floor: %s\n", what.c_str());
  std::exit(1);
}
[[noreturn]] void die_errno(const std::string& what) { die(what + ": " + std::strerror(errno)); }

UniqueFd open_or_die(const std::string& path, int flags) {
  UniqueFd fd(open(path.c_str(), flags | O_CLOEXEC, 0644));
  if (!fd) die_errno("open " + path);
  return fd;
}

// write(2) all of [data, data + size) to FD, as it comes: no stdio buffer.
bool write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t r = write(fd, p, size);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    size -= static_cast<size_t>(r);
  }
  return true;
}

int xioctl(int fd, unsigned long req, const void* arg, const char* what) {
  int r;
  do r = ioctl(fd, req, arg);
  while (r < 0 && errno == EINTR);
  if (r < 0) die_errno(what);
  return r;
}

// Reads all of FD (PATH) into DST (at most CAP bytes); returns its size.
uint64_t read_into(int fd, const std::string& path, uint8_t* dst, uint64_t cap) {
  const off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0 || static_cast<uint64_t>(size) > cap) die(path + ": empty, or larger than its room in RAM");
  uint64_t done = 0;
  while (done < static_cast<uint64_t>(size)) {
    const ssize_t r = pread(fd, dst + done, size - done, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) die_errno("read " + path);
    done += static_cast<uint64_t>(r);
  }
  return done;
}

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void set_core_reg(int vcpu, uint64_t offset_bytes, uint64_t value) {
  kvm_one_reg reg{};
  reg.id = KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | (offset_bytes / sizeof(uint32_t));
  reg.addr = reinterpret_cast<uint64_t>(&value);
  xioctl(vcpu, KVM_SET_ONE_REG, &reg, "KVM_SET_ONE_REG");
}

void gic_attr(int dev, uint32_t group, uint64_t attr, const void* value) {
  kvm_device_attr a{};
  a.group = group;
  a.attr = attr;
  a.addr = reinterpret_cast<uint64_t>(value);
  xioctl(dev, KVM_SET_DEVICE_ATTR, &a, "KVM_SET_DEVICE_ATTR (vGIC)");
}

// --run: the guest's console, and the way out. A stop signal sets
// immediate_exit, so a KVM_RUN about to start returns at once, and one
// already running returns EINTR (the handler interrupts it: no SA_RESTART).
kvm_run* volatile g_run = nullptr;
volatile sig_atomic_t g_stop = 0;

void on_stop_signal(int) {
  g_stop = 1;
  if (g_run) g_run->immediate_exit = 1;
}

// The PL011 as far as a console needs (see the header comment).
void serve_mmio(decltype(kvm_run::mmio)& m) {
  using kvmmio::console::Pl011;
  const uint64_t off = m.phys_addr - layout::kUartBase;
  const bool uart = m.phys_addr >= layout::kUartBase && off < layout::kUartSize;
  if (m.is_write) {
    if (uart && off == Pl011::kDR) (void)write_all(STDOUT_FILENO, m.data, 1);
    return;
  }
  std::memset(m.data, 0, sizeof m.data);
  if (uart && off % 4 == 0)
    if (const auto id = kvmmio::amba::id_register(off, Pl011::kPeriphId)) m.data[0] = static_cast<uint8_t>(*id);
}

// Enters the guest and serves it until it powers off or a stop signal.
int serve(const Options& o, int vcpu, kvm_run* run, kvmmio::vmm::StartupTimeline& t) {
  for (bool first = true;; first = false) {
    const int r = ioctl(vcpu, KVM_RUN, nullptr);
    const int err = errno;
    if (first) {  // the guest has run: nothing from here on is on the timeline
      const std::string out = json(t.stats());
      if (!write_all(open_or_die(o.json, O_WRONLY | O_CREAT | O_TRUNC).get(), out.data(), out.size()))
        die_errno("write " + o.json);
    }
    if (g_stop) return 0;
    if (r < 0) {
      if (err == EINTR || err == EAGAIN) continue;
      errno = err;
      die_errno("KVM_RUN");
    }
    switch (run->exit_reason) {
      case KVM_EXIT_MMIO:
        serve_mmio(run->mmio);
        break;
      case KVM_EXIT_SYSTEM_EVENT:  // PSCI SYSTEM_OFF or SYSTEM_RESET
        return 0;
      default:
        die("KVM_RUN: unexpected exit reason " + std::to_string(run->exit_reason));
    }
  }
}

int run(const Options& o, kvmmio::vmm::StartupTimeline& t) {
  const UniqueFd kvm = open_or_die("/dev/kvm", O_RDWR);
  const UniqueFd vm(xioctl(kvm.get(), KVM_CREATE_VM, nullptr, "KVM_CREATE_VM"));
  const uint64_t ram_size = o.mem_mib << 20;
  const UniqueFd memfd(memfd_create("boot-floor-ram", MFD_CLOEXEC));
  if (!memfd || ftruncate(memfd.get(), static_cast<off_t>(ram_size)) != 0) die_errno("guest RAM memfd");
  auto* ram = static_cast<uint8_t*>(
      mmap(nullptr, ram_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd.get(), 0));
  if (ram == MAP_FAILED) die_errno("mmap guest RAM");
  (void)madvise(ram, ram_size, MADV_HUGEPAGE);
  kvm_userspace_memory_region region{};
  region.guest_phys_addr = layout::kRamBase;
  region.memory_size = ram_size;
  region.userspace_addr = reinterpret_cast<uint64_t>(ram);
  xioctl(vm.get(), KVM_SET_USER_MEMORY_REGION, &region, "KVM_SET_USER_MEMORY_REGION");
  t.end_phase("vm");

  const UniqueFd vcpu(xioctl(vm.get(), KVM_CREATE_VCPU, reinterpret_cast<void*>(0), "KVM_CREATE_VCPU"));
  kvm_vcpu_init init{};
  xioctl(vm.get(), KVM_ARM_PREFERRED_TARGET, &init, "KVM_ARM_PREFERRED_TARGET");
  init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
  xioctl(vcpu.get(), KVM_ARM_VCPU_INIT, &init, "KVM_ARM_VCPU_INIT");
  const int run_size = xioctl(kvm.get(), KVM_GET_VCPU_MMAP_SIZE, nullptr, "KVM_GET_VCPU_MMAP_SIZE");
  auto* run = static_cast<kvm_run*>(mmap(nullptr, static_cast<size_t>(run_size), PROT_READ | PROT_WRITE,
                                         MAP_SHARED, vcpu.get(), 0));
  if (run == MAP_FAILED) die_errno("mmap kvm_run");
  t.end_phase("vcpus");

  kvm_create_device dev{};
  int gic = o.gic;
  if (gic == 0) {  // auto: a GICv3 where KVM makes one
    dev.type = KVM_DEV_TYPE_ARM_VGIC_V3;
    gic = ioctl(vm.get(), KVM_CREATE_DEVICE, &dev) == 0 ? 3 : 2;
  }
  if (dev.fd == 0) {  // not made yet (fd 0 is stdin, never a new device's)
    dev.type = gic == 3 ? KVM_DEV_TYPE_ARM_VGIC_V3 : KVM_DEV_TYPE_ARM_VGIC_V2;
    xioctl(vm.get(), KVM_CREATE_DEVICE, &dev,
           gic == 3 ? "KVM_CREATE_DEVICE (vGICv3)" : "KVM_CREATE_DEVICE (vGICv2)");
  }
  const UniqueFd vgic(static_cast<int>(dev.fd));
  const uint64_t dist = layout::kGicDistBase, second = gic == 3 ? layout::kGicV3RedistBase : layout::kGicV2CpuBase;
  gic_attr(vgic.get(), KVM_DEV_ARM_VGIC_GRP_ADDR,
           gic == 3 ? KVM_VGIC_V3_ADDR_TYPE_DIST : KVM_VGIC_V2_ADDR_TYPE_DIST, &dist);
  gic_attr(vgic.get(), KVM_DEV_ARM_VGIC_GRP_ADDR,
           gic == 3 ? KVM_VGIC_V3_ADDR_TYPE_REDIST : KVM_VGIC_V2_ADDR_TYPE_CPU, &second);
  gic_attr(vgic.get(), KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT, nullptr);
  t.end_phase("vgic");

  // kvmmio's placement (vmm/boot/boot_layout.h): the kernel at the start of RAM
  // plus its text_offset, the device tree in the last whole 2 MiB block,
  // the initrd right below it. The plan needs the kernel's header and the
  // initrd's size (kvmmio reads them in its setup; here they open the
  // phase that follows, image_load, or device_tree with --run).
  const UniqueFd kernel = open_or_die(o.kernel, O_RDONLY);
  uint8_t head[kvmmio::vmm::ImageHeader::kSize] = {};
  if (pread(kernel.get(), head, sizeof head, 0) != static_cast<ssize_t>(sizeof head))
    die(o.kernel + ": too short for an Image");
  if (std::memcmp(head + kvmmio::vmm::ImageHeader::kMagicOffset, "ARM\x64", 4) != 0)
    die(o.kernel + ": not an arm64 Image");
  kvmmio::vmm::ImageHeader header;
  header.text_offset = le64(head + 8);
  header.image_size = le64(head + 16);
  header.flags = le64(head + 24);
  UniqueFd initrd;
  std::optional<uint64_t> initrd_size;
  if (!o.initrd.empty()) {
    initrd = open_or_die(o.initrd, O_RDONLY);
    const off_t size = lseek(initrd.get(), 0, SEEK_END);
    if (size <= 0) die(o.initrd + ": empty");
    initrd_size = static_cast<uint64_t>(size);
  }
  const kvmmio::vmm::BootLayout boot = kvmmio::vmm::plan_boot(layout::kRamBase, ram_size, header, initrd_size);

  // --run: kvmmio's device tree for this machine, as kvmmio's load_guest()
  // makes it (vmm/machine/machine_arm64.cc), with no virtio device.
  std::vector<uint8_t> dtb;
  if (o.run) {
    kvmmio::vmm::DeviceTreeSpec spec;
    spec.ram_base = layout::kRamBase;
    spec.ram_size = ram_size;
    spec.cpu_mpidrs = {kvmmio::vmm::mpidr_of_vcpu(0)};
    spec.gic = gic == 3 ? kvmmio::arm64::GicVersion::kV3 : kvmmio::arm64::GicVersion::kV2;
    spec.bootargs = *o.run;
    spec.initrd = boot.initrd;
    kvmmio::vmm::add_random_seeds(spec);
    dtb = kvmmio::vmm::build_device_tree(spec);
    t.end_phase("device_tree");
  }

  read_into(kernel.get(), o.kernel, ram + (boot.kernel_entry - layout::kRamBase),
            boot.kernel_end - boot.kernel_entry);  // first, as kvmmio
  if (boot.initrd)
    read_into(initrd.get(), o.initrd, ram + (boot.initrd->start - layout::kRamBase), boot.initrd->size());
  if (!dtb.empty()) std::memcpy(ram + (boot.dtb - layout::kRamBase), dtb.data(), dtb.size());
  t.end_phase("image_load");

  if (o.run) {
    g_run = run;  // before the handlers, which may run from now on
    struct sigaction sa{};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, nullptr) != 0 || sigaction(SIGINT, &sa, nullptr) != 0) die_errno("sigaction");
  }
  set_core_reg(vcpu.get(), offsetof(kvm_regs, regs.pc), boot.kernel_entry);
  set_core_reg(vcpu.get(), offsetof(kvm_regs, regs.regs[0]), o.run ? boot.dtb : 0);  // 0: no device tree
  if (o.run) {
    t.first_run();
    return serve(o, vcpu.get(), run, t);
  }
  run->immediate_exit = 1;
  t.first_run();
  const int r = ioctl(vcpu.get(), KVM_RUN, nullptr);
  if (r == 0 || errno != EINTR) die("KVM_RUN with immediate_exit did not return EINTR");
  const std::string out = json(t.stats());
  const bool written = o.json.empty() ? std::fputs(out.c_str(), stdout) >= 0
                                      : write_all(open_or_die(o.json, O_WRONLY | O_CREAT | O_TRUNC).get(),
                                                  out.data(), out.size());
  if (!written) die_errno("write " + (o.json.empty() ? std::string("stdout") : o.json));
  return 0;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  kvmmio::vmm::StartupTimeline t;  // first, as kvmmio's main() starts its own
  const Options o = parse(argc, argv);
  t.end_phase("setup");
#if defined(__aarch64__)
  try {
    return run(o, t);
  } catch (const std::exception& e) {  // plan_boot's and the device tree's errors
    std::fprintf(stderr, "boot_floor: %s\n", e.what());
    return 1;
  }
#else
  (void)o;
  (void)t;
  std::fprintf(stderr, "boot_floor: arm64 hosts only (it boots an arm64 kernel's first instruction)\n");
  return 2;
#endif
}
