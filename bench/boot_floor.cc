// SPDX-License-Identifier: BSD-2-Clause
// boot_floor: the least a VMM must do before a guest kernel can run, timed
// the way kvmmio times its own start-up (--stats "startup_ms"), so that
// kvmmio's start-up has a floor to be held to in the same run
// (bench/startup.sh; docs/benchmarks.md, "Start-up").
//
//   boot_floor --kernel Image [--initrd FILE] [--mem MiB] [--gic auto|3|2]
//
// --gic auto (the default, as kvmmio's): a GICv3 where KVM can make one,
// else a GICv2.
//
// Raw KVM ioctls: /dev/kvm, a VM, guest RAM (a memfd mapped shared, with
// MADV_HUGEPAGE, as kvmmio's), one vCPU, the vGIC,
// the kernel and the initrd read into RAM at kvmmio's addresses, the boot
// registers, then vCPU 0's first KVM_RUN. No device tree and no devices:
// the call is made with immediate_exit set, so KVM returns at once
// without entering the guest (there is nothing the guest could boot
// with). Its time is taken just before the call, as kvmmio's first_run is.
//
// Of kvmmio's code only its start-up timeline (vmm/startup_timeline.h), so
// both are timed by one rule. Prints one JSON object: exec_to_main (from
// /proc/self/stat, clock-tick steps), the phases (setup, vm, vcpus, vgic,
// image_load, first_run) and to_first_run, in milliseconds. arm64 hosts only; elsewhere it says so
// and exits 2.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__aarch64__)
#include <linux/kvm.h>
#endif

#include "vmm/startup_timeline.h"

namespace {

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "boot_floor: %s\nusage: boot_floor --kernel Image [--initrd FILE] [--mem MiB] "
               "[--gic auto|3|2]\n",
               what.c_str());
  std::exit(2);
}

struct Options {
  std::string kernel, initrd;
  uint64_t mem_mib = 128;
  int gic = 0;  // 0: auto
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
    } else {
      usage_error("unknown argument " + a);
    }
  }
  if (o.kernel.empty()) usage_error("--kernel is required");
  return o;
}

#if defined(__aarch64__)

// One JSON object: kvmmio's --stats "startup_ms" shape, from the same
// timeline kvmmio keeps (vmm/startup_timeline.h), so both are timed alike.
void print(const kvmmio::vmm::StartupStats& st) {
  std::printf("{\"startup_ms\":{");
  if (st.exec_to_main_ms) std::printf("\"exec_to_main\":%.3f,", *st.exec_to_main_ms);
  for (const auto& [name, ms] : st.phases_ms) std::printf("\"%s\":%.3f,", name.c_str(), ms);
  std::printf("\"to_first_run\":%.3f}}\n", st.to_first_run_ms.value_or(0));
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "boot_floor: %s\n", what.c_str());
  std::exit(1);
}
[[noreturn]] void die_errno(const std::string& what) { die(what + ": " + std::strerror(errno)); }

// kvmmio's layout (vmm/memory_map_arm64.h): QEMU virt's.
constexpr uint64_t kRamBase = 0x40000000;
constexpr uint64_t kGicDist = 0x08000000;
constexpr uint64_t kGicV2Cpu = 0x08010000;
constexpr uint64_t kGicV3Redist = 0x080a0000;

int xioctl(int fd, unsigned long req, const void* arg, const char* what) {
  int r;
  do r = ioctl(fd, req, arg);
  while (r < 0 && errno == EINTR);
  if (r < 0) die_errno(what);
  return r;
}

// Reads all of PATH into DST (at most CAP bytes); returns its size.
uint64_t read_into(const std::string& path, uint8_t* dst, uint64_t cap) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die_errno("open " + path);
  const off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0 || static_cast<uint64_t>(size) > cap) die(path + ": empty, or larger than its room in RAM");
  uint64_t done = 0;
  while (done < static_cast<uint64_t>(size)) {
    const ssize_t r = pread(fd, dst + done, size - done, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) die_errno("read " + path);
    done += static_cast<uint64_t>(r);
  }
  close(fd);
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

int run(const Options& o, kvmmio::vmm::StartupTimeline& t) {
  const int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm < 0) die_errno("open /dev/kvm");
  const int vm = xioctl(kvm, KVM_CREATE_VM, nullptr, "KVM_CREATE_VM");
  const uint64_t ram_size = o.mem_mib << 20;
  const int memfd = memfd_create("boot-floor-ram", MFD_CLOEXEC);
  if (memfd < 0 || ftruncate(memfd, static_cast<off_t>(ram_size)) != 0) die_errno("guest RAM memfd");
  auto* ram = static_cast<uint8_t*>(
      mmap(nullptr, ram_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd, 0));
  if (ram == MAP_FAILED) die_errno("mmap guest RAM");
  (void)madvise(ram, ram_size, MADV_HUGEPAGE);
  kvm_userspace_memory_region region{};
  region.guest_phys_addr = kRamBase;
  region.memory_size = ram_size;
  region.userspace_addr = reinterpret_cast<uint64_t>(ram);
  xioctl(vm, KVM_SET_USER_MEMORY_REGION, &region, "KVM_SET_USER_MEMORY_REGION");
  t.end_phase("vm");

  const int vcpu = xioctl(vm, KVM_CREATE_VCPU, reinterpret_cast<void*>(0), "KVM_CREATE_VCPU");
  kvm_vcpu_init init{};
  xioctl(vm, KVM_ARM_PREFERRED_TARGET, &init, "KVM_ARM_PREFERRED_TARGET");
  init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
  xioctl(vcpu, KVM_ARM_VCPU_INIT, &init, "KVM_ARM_VCPU_INIT");
  const int run_size = xioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, nullptr, "KVM_GET_VCPU_MMAP_SIZE");
  auto* run = static_cast<kvm_run*>(mmap(nullptr, static_cast<size_t>(run_size), PROT_READ | PROT_WRITE,
                                         MAP_SHARED, vcpu, 0));
  if (run == MAP_FAILED) die_errno("mmap kvm_run");
  t.end_phase("vcpus");

  kvm_create_device dev{};
  int gic = o.gic;
  if (gic == 0) {  // auto: a GICv3 where KVM makes one
    dev.type = KVM_DEV_TYPE_ARM_VGIC_V3;
    gic = ioctl(vm, KVM_CREATE_DEVICE, &dev) == 0 ? 3 : 2;
  }
  if (dev.fd == 0) {  // not made yet (fd 0 is stdin, never a new device's)
    dev.type = gic == 3 ? KVM_DEV_TYPE_ARM_VGIC_V3 : KVM_DEV_TYPE_ARM_VGIC_V2;
    xioctl(vm, KVM_CREATE_DEVICE, &dev, gic == 3 ? "KVM_CREATE_DEVICE (vGICv3)" : "KVM_CREATE_DEVICE (vGICv2)");
  }
  const uint64_t dist = kGicDist, second = gic == 3 ? kGicV3Redist : kGicV2Cpu;
  gic_attr(static_cast<int>(dev.fd), KVM_DEV_ARM_VGIC_GRP_ADDR,
           gic == 3 ? KVM_VGIC_V3_ADDR_TYPE_DIST : KVM_VGIC_V2_ADDR_TYPE_DIST, &dist);
  gic_attr(static_cast<int>(dev.fd), KVM_DEV_ARM_VGIC_GRP_ADDR,
           gic == 3 ? KVM_VGIC_V3_ADDR_TYPE_REDIST : KVM_VGIC_V2_ADDR_TYPE_CPU, &second);
  gic_attr(static_cast<int>(dev.fd), KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT, nullptr);
  t.end_phase("vgic");

  // kvmmio's placement (vmm/boot_layout.cc): the kernel at the start of
  // RAM plus its text_offset (booting.rst), the initrd right below the
  // device tree's 2 MiB block at the top of RAM.
  uint8_t head[64] = {};
  {
    const int fd = open(o.kernel.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die_errno("open " + o.kernel);
    if (pread(fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head)) die(o.kernel + ": too short for an Image");
    close(fd);
  }
  if (std::memcmp(head + 56, "ARM\x64", 4) != 0) die(o.kernel + ": not an arm64 Image");
  const uint64_t kernel_off = le64(head + 8), dtb_off = ram_size - (uint64_t{2} << 20);
  uint64_t initrd_off = dtb_off;
  if (!o.initrd.empty()) {
    const int fd = open(o.initrd.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die_errno("open " + o.initrd);
    const off_t size = lseek(fd, 0, SEEK_END);
    close(fd);
    const uint64_t rounded = (static_cast<uint64_t>(size) + 4095) / 4096 * 4096;
    if (size <= 0 || rounded >= dtb_off / 2) die(o.initrd + ": empty, or too large for --mem");
    initrd_off = dtb_off - rounded;
  }
  read_into(o.kernel, ram + kernel_off, initrd_off - kernel_off);  // first, as kvmmio
  if (!o.initrd.empty()) read_into(o.initrd, ram + initrd_off, dtb_off - initrd_off);
  t.end_phase("image_load");

  set_core_reg(vcpu, offsetof(kvm_regs, regs.pc), kRamBase + kernel_off);
  set_core_reg(vcpu, offsetof(kvm_regs, regs.regs[0]), 0);  // no device tree
  run->immediate_exit = 1;
  t.first_run();
  const int r = ioctl(vcpu, KVM_RUN, nullptr);
  if (r == 0 || errno != EINTR) die("KVM_RUN with immediate_exit did not return EINTR");
  print(t.stats());
  return 0;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  kvmmio::vmm::StartupTimeline t;  // first, as kvmmio's main() starts its own
  const Options o = parse(argc, argv);
  t.end_phase("setup");
#if defined(__aarch64__)
  return run(o, t);
#else
  (void)o;
  (void)t;
  std::fprintf(stderr, "boot_floor: arm64 hosts only (it boots an arm64 kernel's first instruction)\n");
  return 2;
#endif
}
