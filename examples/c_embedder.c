/* SPDX-License-Identifier: BSD-2-Clause */
/* c_embedder: a VMM in C that owns its VM, as kvmtool or QEMU do, and takes
 * one virtio device from libkvmmio through its C API (kvmmio/kvmmio.h;
 * docs/embedding.md walks through it).
 *
 * The VMM makes everything KVM needs itself with raw ioctls: the VM, its RAM
 * (mmap) as memory slot 0, one vCPU, the vGIC, and the KVM_RUN loop. It
 * hands kvmmio the VM fd (adopted: kvmmio may use memory slot 1, no other)
 * and the RAM's host address, and gets a virtio-mmio transport in front of
 * a device of its own written as C callbacks: an entropy source (virtio
 * device ID 4), which fills the buffers the driver offers from getrandom(2).
 * Its KVM_RUN loop hands kvmmio the exits in the device's register window.
 *
 * The guest (irq_guest.S, shared with the C++ example) sets the device up,
 * then asks for N buffers one at a time and takes the device's interrupt
 * for each: acknowledge at the GIC, read InterruptStatus, write
 * InterruptACK, EOI. The VMM counts its vCPU's exits meanwhile. With the
 * register mirror (KVMMIO_REGS_MIRROR, the default: "regs=mirror" in its
 * output) the read is a memory load and the ACK an ioeventfd in the kernel:
 * 0 exits per interrupt, which the program checks. It then runs the same
 * with KVMMIO_REGS_TRAP ("regs=trap") for contrast: 2 per interrupt.
 *
 * Build it against an installed kvmmio:
 *   cc -std=c11 c_embedder.c irq_guest.S $(pkg-config --cflags --libs kvmmio-c) -o c_embedder
 * Exit status: 0 it worked, 1 it did not, 77 skipped (not arm64, or no
 * usable /dev/kvm), with a line saying why. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <kvmmio/kvmmio.h>

#include "irq_guest.h"

/* Written for ABI 2's typed configs (kvmmio_transport_config):
 * kvmmio/version.h says which the headers describe. */
#if KVMMIO_ABI < 2
#error "c_embedder needs kvmmio's ABI 2 or later (kvmmio_transport_config)"
#endif

#define INTERRUPTS 64u
#define RUN_SECONDS 120u /* the guest's whole run, set-up included; TCG is slow */

static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("c_embedder: FAIL: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* A kvmmio call that must work: its message otherwise. */
static void check(kvmmio_status status, const char* what) {
  if (status != KVMMIO_OK) die("%s: %s", what, kvmmio_last_error());
}

/* Library messages into this program's output. */
static void log_line(void* opaque, int level, const char* message) {
  (void)opaque;
  printf("c_embedder: kvmmio%s: %s\n", level >= KVMMIO_LOG_WARN ? " warning" : "", message);
}

#if defined(__aarch64__)

/* ---- The device: C callbacks ------------------------------------------------ */

struct entropy {
  uint64_t buffers;  /* served */
  uint64_t bytes;
};

/* The driver made buffers available: fill each one's writable part with
 * random bytes, return it, and interrupt the driver if it wants that. Runs
 * on kvmmio's event-loop thread (the notify is an ioeventfd it polls), under
 * the device's lock. */
static void entropy_notify(void* opaque, kvmmio_queue* queue) {
  struct entropy* e = opaque;
  kvmmio_chain* chain;
  while ((chain = kvmmio_queue_pop(queue)) != NULL) {
    uint8_t bytes[256];
    uint64_t want = kvmmio_chain_writable(chain), written = 0;
    while (written < want) {
      size_t n = want - written < sizeof bytes ? (size_t)(want - written) : sizeof bytes;
      ssize_t got = getrandom(bytes, n, 0);
      if (got <= 0) break;
      written += kvmmio_chain_write(chain, written, bytes, (size_t)got);
    }
    kvmmio_queue_push(queue, chain, (uint32_t)written);
    e->buffers++;
    e->bytes += written;
  }
  kvmmio_queue_interrupt(queue);
}

static const kvmmio_device_ops entropy_ops = {
    .name = "entropy0",
    .device_id = 4, /* entropy source, virtio 1.2 section 5.4 */
    .num_queues = 1,
    .queue_max_size = 64,
    .queue_notify = entropy_notify,
};

/* ---- The VMM's own KVM plumbing ---------------------------------------------- */

static int kvm_ioctl(int fd, unsigned long request, void* arg, const char* what) {
  int r = ioctl(fd, request, arg);
  if (r < 0) die("%s: %s", what, strerror(errno));
  return r;
}

static uint64_t core_reg(size_t offset) {
  return KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | (offset / sizeof(uint32_t));
}

static void set_reg(int vcpu, uint64_t id, uint64_t value) {
  struct kvm_one_reg reg = {.id = id, .addr = (uint64_t)(uintptr_t)&value};
  kvm_ioctl(vcpu, KVM_SET_ONE_REG, &reg, "KVM_SET_ONE_REG");
}

static void set_attr(int dev, uint32_t group, uint64_t attr, const void* value) {
  struct kvm_device_attr a = {.group = group, .attr = attr, .addr = (uint64_t)(uintptr_t)value};
  kvm_ioctl(dev, KVM_SET_DEVICE_ATTR, &a, "KVM_SET_DEVICE_ATTR (vGIC)");
}

/* The vGIC, after the vCPU: v3 where the host offers it, else v2. Returns
 * its version. */
static int create_vgic(int vm, int* gic_fd) {
  static const uint64_t dist = IRQ_GUEST_GICD, redist = IRQ_GUEST_GICR, cpu = IRQ_GUEST_GICC;
  static const uint32_t nr_irqs = IRQ_GUEST_NR_IRQS;
  struct kvm_create_device cd = {.type = KVM_DEV_TYPE_ARM_VGIC_V3};
  int version = 3;
  if (ioctl(vm, KVM_CREATE_DEVICE, &cd) != 0) {
    cd.type = KVM_DEV_TYPE_ARM_VGIC_V2;
    version = 2;
    kvm_ioctl(vm, KVM_CREATE_DEVICE, &cd, "KVM_CREATE_DEVICE (vGICv3, then vGICv2)");
  }
  *gic_fd = (int)cd.fd;
  if (version == 3) {
    set_attr(*gic_fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_DIST, &dist);
    set_attr(*gic_fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_REDIST, &redist);
  } else {
    set_attr(*gic_fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V2_ADDR_TYPE_DIST, &dist);
    set_attr(*gic_fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V2_ADDR_TYPE_CPU, &cpu);
  }
  set_attr(*gic_fd, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, &nr_irqs);
  set_attr(*gic_fd, KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT, NULL);
  return version;
}

static void on_alarm(int sig) { (void)sig; /* interrupts KVM_RUN: the loop sees EINTR */ }

/* What one run of the guest cost. */
struct run_result {
  uint64_t setup_exits;    /* KVM_EXIT_MMIO in the window while the guest set the device up */
  uint64_t traffic_exits;  /* every vCPU exit while it took the interrupts */
  uint64_t window_exits;   /* of those, KVM_EXIT_MMIO in the device's window */
  uint64_t acks_in_kernel, interrupts_injected, register_reads;
  int mirror;
};

static uint64_t counter(const kvmmio_transport* t, const char* name) {
  uint64_t v = 0;
  check(kvmmio_transport_counter(t, name, &v), name);
  return v;
}

/* One VM, one device, one guest run with the transport's registers as
 * `regs` says (`options`, its name in messages: "regs=mirror"). */
static struct run_result run(int kvm, kvmmio_regs regs, const char* options) {
  struct run_result res;
  memset(&res, 0, sizeof res);

  /* The VMM's VM: RAM as memory slot 0, one vCPU, the vGIC. */
  int vm = kvm_ioctl(kvm, KVM_CREATE_VM, 0, "KVM_CREATE_VM");
  uint8_t* ram = mmap(NULL, IRQ_GUEST_RAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ram == MAP_FAILED) die("mmap RAM: %s", strerror(errno));
  struct kvm_userspace_memory_region slot0 = {
      .slot = 0, .guest_phys_addr = IRQ_GUEST_RAM, .memory_size = IRQ_GUEST_RAM_SIZE,
      .userspace_addr = (uint64_t)(uintptr_t)ram};
  kvm_ioctl(vm, KVM_SET_USER_MEMORY_REGION, &slot0, "KVM_SET_USER_MEMORY_REGION");
  int vcpu = kvm_ioctl(vm, KVM_CREATE_VCPU, 0, "KVM_CREATE_VCPU");
  int run_size = kvm_ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0, "KVM_GET_VCPU_MMAP_SIZE");
  struct kvm_run* kr = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
  if (kr == MAP_FAILED) die("mmap kvm_run: %s", strerror(errno));
  struct kvm_vcpu_init init;
  memset(&init, 0, sizeof init);
  kvm_ioctl(vm, KVM_ARM_PREFERRED_TARGET, &init, "KVM_ARM_PREFERRED_TARGET");
  init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
  kvm_ioctl(vcpu, KVM_ARM_VCPU_INIT, &init, "KVM_ARM_VCPU_INIT");
  int gic_fd;
  int gic = create_vgic(vm, &gic_fd);

  /* kvmmio on it: the VM (slot 1 is kvmmio's: the mirror), the RAM. */
  kvmmio_vm* kv;
  check(kvmmio_vm_adopt(vm, 1, 1, KVMMIO_ADOPT_IRQCHIP_READY, &kv), "kvmmio_vm_adopt");
  check(kvmmio_vm_add_ram_host(kv, IRQ_GUEST_RAM, IRQ_GUEST_RAM_SIZE, ram, 0), "kvmmio_vm_add_ram_host");
  struct entropy state = {0, 0};
  kvmmio_device* dev;
  check(kvmmio_device_create(kv, &entropy_ops, sizeof entropy_ops, &state, &dev), "kvmmio_device_create");
  kvmmio_transport_config config = KVMMIO_TRANSPORT_CONFIG_INIT; /* the defaults, then what differs */
  config.regs = regs;
  kvmmio_transport* t;
  check(kvmmio_transport_create(kv, dev, IRQ_GUEST_VIRTIO, IRQ_GUEST_GSI, &config, &t), "kvmmio_transport_create");
  res.mirror = kvmmio_transport_mirror_mapped(t) == 1;
  const uint64_t window = kvmmio_transport_window_size();

  /* The guest. */
  struct irq_guest_start start;
  irq_guest_load(ram, gic, INTERRUPTS, &start);
  for (int i = 0; i < 7; i++) set_reg(vcpu, core_reg(offsetof(struct kvm_regs, regs.regs) + 8 * (size_t)i), start.x[i]);
  set_reg(vcpu, core_reg(offsetof(struct kvm_regs, regs.pc)), start.pc);
  set_reg(vcpu, core_reg(offsetof(struct kvm_regs, regs.pstate)), start.pstate);

  /* The KVM_RUN loop: exits in the window go to kvmmio; each is counted
   * against the phase the guest is in. */
  alarm(RUN_SECONDS);
  for (;;) {
    if (ioctl(vcpu, KVM_RUN, 0) < 0) {
      if (errno == EINTR)
        die("%s: the guest took %u of %u interrupts in %u s", options,
            irq_guest_mailbox(ram).interrupts, INTERRUPTS, RUN_SECONDS);
      die("KVM_RUN: %s", strerror(errno));
    }
    const int traffic = irq_guest_mailbox(ram).phase == IRQ_GUEST_TRAFFIC;
    if (traffic) res.traffic_exits++;
    if (kr->exit_reason == KVM_EXIT_SYSTEM_EVENT) break;  /* PSCI SYSTEM_OFF */
    if (kr->exit_reason != KVM_EXIT_MMIO) die("unexpected exit %u", kr->exit_reason);
    const uint64_t offset = kr->mmio.phys_addr - IRQ_GUEST_VIRTIO;
    if (kr->mmio.phys_addr < IRQ_GUEST_VIRTIO || offset >= window)
      die("the guest reached 0x%" PRIx64 ", where this VMM has no device", (uint64_t)kr->mmio.phys_addr);
    check(kvmmio_transport_mmio(t, offset, kr->mmio.data, kr->mmio.len, kr->mmio.is_write),
          "kvmmio_transport_mmio");
    if (traffic) res.window_exits++;
    else res.setup_exits++;
  }
  alarm(0);

  /* What the guest, the device and the transport say. */
  const struct irq_guest_mailbox box = irq_guest_mailbox(ram);
  if (box.esr) die("%s: the guest took an exception, ESR 0x%" PRIx64, options, box.esr);
  if (box.phase != IRQ_GUEST_DONE || box.interrupts != INTERRUPTS || box.unexpected_irqs)
    die("%s: the guest took %u interrupts of %u (%u unexpected)", options, box.interrupts, INTERRUPTS,
        box.unexpected_irqs);
  /* The device's state is its event-loop thread's: read it under its lock. */
  check(kvmmio_device_lock(dev), "kvmmio_device_lock");
  const uint64_t served = state.buffers;
  check(kvmmio_device_unlock(dev), "kvmmio_device_unlock");
  if (served != INTERRUPTS || irq_guest_used(ram) != (uint16_t)INTERRUPTS)
    die("%s: the device served %" PRIu64 " buffers of %u", options, served, INTERRUPTS);
  res.acks_in_kernel = counter(t, "interrupt_acks_in_kernel");
  res.interrupts_injected = counter(t, "interrupts_injected");
  res.register_reads = counter(t, "register_reads");
  if (counter(t, "guest_errors")) die("%s: the transport counted guest errors", options);

  kvmmio_transport_destroy(t);
  check(kvmmio_device_destroy(dev), "kvmmio_device_destroy");
  check(kvmmio_vm_destroy(kv), "kvmmio_vm_destroy");
  close(gic_fd);
  munmap(kr, (size_t)run_size);
  close(vcpu);
  close(vm);
  munmap(ram, IRQ_GUEST_RAM_SIZE);
  return res;
}

static void report(const char* options, const struct run_result* r) {
  printf("c_embedder: %s: %u interrupts taken by the guest; vCPU exits while it took them: %" PRIu64
         " (%.2f per interrupt), %" PRIu64 " of them in the device's window; InterruptACKs taken in the kernel: %" PRIu64
         "; interrupts injected: %" PRIu64 "; register reads the VMM served: %" PRIu64 "; set-up exits: %" PRIu64 "\n",
         options, INTERRUPTS, r->traffic_exits, (double)r->traffic_exits / INTERRUPTS, r->window_exits,
         r->acks_in_kernel, r->interrupts_injected, r->register_reads, r->setup_exits);
}

int main(void) {
  check(kvmmio_set_log_sink(log_line, NULL), "kvmmio_set_log_sink");
  int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm < 0) {
    printf("c_embedder: SKIP: no usable /dev/kvm on this host (%s)\n", strerror(errno));
    return 77;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;  /* no SA_RESTART: KVM_RUN returns EINTR */
  sigaction(SIGALRM, &sa, NULL);
  printf("c_embedder: kvmmio %s; the VM, its RAM, vCPU and vGIC are this program's, kvmmio adopts the VM\n",
         kvmmio_version());

  const struct run_result mirror = run(kvm, KVMMIO_REGS_MIRROR, "regs=mirror");
  report("regs=mirror", &mirror);
  if (!mirror.mirror) die("regs=mirror: KVM here lacks read-only memory slots, so there is no mirror to show");
  if (mirror.traffic_exits != 0) die("regs=mirror: %" PRIu64 " vCPU exits while the guest took its interrupts, not 0",
                                     mirror.traffic_exits);
  if (mirror.acks_in_kernel != INTERRUPTS || mirror.register_reads != 0)
    die("regs=mirror: %" PRIu64 " ACKs in the kernel and %" PRIu64 " register reads served, not %u and 0",
        mirror.acks_in_kernel, mirror.register_reads, INTERRUPTS);

  const struct run_result trap = run(kvm, KVMMIO_REGS_TRAP, "regs=trap");
  report("regs=trap", &trap);
  if (trap.window_exits != 2 * INTERRUPTS)
    die("regs=trap: %" PRIu64 " exits in the window, not 2 per interrupt", trap.window_exits);

  printf("c_embedder: PASS: 0 vCPU exits per guest interrupt with the register mirror, %.2f without\n",
         (double)trap.traffic_exits / INTERRUPTS);
  close(kvm);
  return 0;
}

#else

int main(void) {
  check(kvmmio_set_log_sink(log_line, NULL), "kvmmio_set_log_sink");
  printf("c_embedder: SKIP: its guest is arm64 code, and this host is not arm64 (kvmmio %s)\n", kvmmio_version());
  return 77;
}

#endif
