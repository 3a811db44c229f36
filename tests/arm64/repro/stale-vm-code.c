/* SPDX-License-Identifier: BSD-2-Clause */
/* stale-vm-code: does a new VM run its own guest code, or the code of the
 * VM that had the same host pages before it? The nested-L1 "hang" of
 * docs/arm64-platform.md ("Stale guest code"), reduced to raw KVM calls (no
 * kvmmio code).
 *
 * Each VM gets a number N and 2 MiB of anonymous RAM at guest address
 * 0x40000000 holding
 *
 *   0x000  ldr  w5, 0x100      ; data: the word userspace put at 0x100
 *   0x004  movz w6, #N         ; code: this VM's number, in the instruction
 *   0x008  str  w5, [x4]       ; x4 = INFO: exit to userspace, value = data
 *   0x00c  str  w6, [x4, #4]   ; exit to userspace, value = code number
 *   0x010  the body
 *   0x100  0xc0de0000 | N
 *
 * so the first two exits say whose data and whose code the vCPU sees. The
 * bodies:
 *   store loop   x2 stores of w1 to [x0] (swallowed in the kernel by a
 *                datamatched ioeventfd), then a store to [x3] (done: exit)
 *   wfi          wfi; b .-4
 *   irq wait     enables the vGIC distributor and this CPU's interface
 *                (stores KVM completes in the kernel), reports at [x3]
 *                (exit), unmasks IRQs, wfi; b .-4
 *
 * A round: a prelude VM (--prelude irq-wfi-kick: the irq-wait body, run to
 * its report; wfi-kick: the wfi body), whose vCPU then blocks in WFI and is
 * kicked out of KVM_RUN by a signal after 300 ms, as a VMM's watchdog or
 * stop does; the prelude VM is destroyed; then a store-loop VM, in fresh
 * anonymous RAM (the kernel hands out the pages just freed) or, with
 * --reuse-ram, in the prelude's RAM rewritten. The round passes when the
 * store-loop vCPU reports its own code and data and finishes with exactly
 * --stores stores counted by the eventfd; otherwise it says what it ran.
 *
 * On QEMU TCG's emulated arm64 (qemu-system-aarch64 -cpu max, L1 6.1 or
 * 6.12), with --prelude irq-wfi-kick every round fails: the vCPU resumes
 * after its first in-kernel store at +0x18 in the irq-wait body's
 * translated code, which survived glibc's SVE memcpy of the new body
 * (tests/arm64/repro/tcg-smc-repro.c reduces that to one program). With
 * -cpu max,sve=off, or --keep-prelude / --keep-prelude-ram (no page reuse),
 * none does.
 *
 * Options: --rounds N (10), --stores N (20000), --timeout S (10, per
 * store-loop run), --gic 3|2|none (3), --prelude none|wfi-kick|irq-wfi-kick
 * (none), --keep-prelude (destroy the prelude VM only after the round),
 * --keep-prelude-ram (destroy it, keep its RAM mapped), --reuse-ram (the
 * store loop in the prelude's RAM), --pin CPU (vCPU threads on one CPU),
 * --fork (a process per round), --trace-off-on-hang FILE (write 0 to FILE,
 * e.g. tracefs' tracing_on, at the first failure).
 *
 * Build: aarch64-linux-gnu-gcc -O2 -static -pthread -o stale-vm-code stale-vm-code.c
 * Exit status: 0 every round passed, 1 a round failed, 2 usage or KVM error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RAM_BASE 0x40000000ull
#define RAM_SIZE (2u << 20)
#define DATA_OFFSET 0x100
#define NOTIFY_ADDR 0x0a000050ull
#define DONE_ADDR 0x0a000100ull
#define INFO_ADDR 0x0a000200ull
#define GICD_BASE 0x08000000ull
#define GICR_BASE 0x080a0000ull
#define GICC_BASE 0x08010000ull
#define MAGIC 0xc0de0000u

static const uint32_t body_store_loop[] = {
    0xb4000082, /* cbz x2, 2f */
    0xb9000001, /* 1: str w1, [x0] */
    0xf1000442, /* subs x2, x2, #1 */
    0x54ffffc1, /* b.ne 1b */
    0xb900007f, /* 2: str wzr, [x3] */
    0xd503207f, /* 3: wfi */
    0x17ffffff, /* b 3b */
};
static const uint32_t body_wfi[] = {
    0xd503207f, /* wfi */
    0x17ffffff, /* b . - 4 */
};
/* x0 = GICD, x1 = GICR (v3) or GICC (v2), x3 = report. */
static const uint32_t body_irq_wait_v3[] = {
    0x5280024a, /* mov  w10, #0x12        GICD_CTLR: ARE | EnableGrp1 */
    0xb900000a, /* str  w10, [x0] */
    0xb900143f, /* str  wzr, [x1, #0x14]  GICR_WAKER: awake */
    0xd538ccaa, /* mrs  x10, ICC_SRE_EL1 */
    0xb240014a, /* orr  x10, x10, #1 */
    0xd518ccaa, /* msr  ICC_SRE_EL1, x10 */
    0xd5033fdf, /* isb */
    0xd2801fea, /* mov  x10, #0xff */
    0xd518460a, /* msr  ICC_PMR_EL1, x10 */
    0xd280002a, /* mov  x10, #1 */
    0xd518ccea, /* msr  ICC_IGRPEN1_EL1, x10 */
    0xd5033fdf, /* isb */
    0xb900007f, /* str  wzr, [x3]         report */
    0xd50342ff, /* msr  daifclr, #2 */
    0xd503207f, /* wfi */
    0x17ffffff, /* b . - 4 */
};
static const uint32_t body_irq_wait_v2[] = {
    0x5280002a, /* mov  w10, #1           GICD_CTLR */
    0xb900000a, /* str  w10, [x0] */
    0x52801fea, /* mov  w10, #0xff */
    0xb900042a, /* str  w10, [x1, #4]     GICC_PMR */
    0x5280002a, /* mov  w10, #1 */
    0xb900002a, /* str  w10, [x1]         GICC_CTLR */
    0xb900007f, /* str  wzr, [x3]         report */
    0xd50342ff, /* msr  daifclr, #2 */
    0xd503207f, /* wfi */
    0x17ffffff, /* b . - 4 */
};

static int kvm_fd;
static int opt_gic = 3;
static unsigned opt_stores = 20000, opt_timeout = 10;
static const char *opt_trace_off; /* write "0" here at the first failure */
static unsigned next_vm_number = 1;
static int opt_keep_prelude, opt_keep_prelude_ram, opt_reuse_ram, opt_pin = -1;

static void die(const char *what) {
  fprintf(stderr, "stale-vm-code: %s: %s\n", what, strerror(errno));
  exit(2);
}

static uint64_t core_reg(size_t off) {
  return KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | (off / sizeof(uint32_t));
}
#define REG_X(n) core_reg(offsetof(struct kvm_regs, regs.regs) + (n) * 8)
#define REG_PC core_reg(offsetof(struct kvm_regs, regs.pc))
#define REG_PSTATE core_reg(offsetof(struct kvm_regs, regs.pstate))

static void set_reg(int vcpu, uint64_t id, uint64_t v) {
  struct kvm_one_reg r = {.id = id, .addr = (uintptr_t)&v};
  if (ioctl(vcpu, KVM_SET_ONE_REG, &r)) die("KVM_SET_ONE_REG");
}
static uint64_t get_reg(int vcpu, uint64_t id) {
  uint64_t v = 0;
  struct kvm_one_reg r = {.id = id, .addr = (uintptr_t)&v};
  if (ioctl(vcpu, KVM_GET_ONE_REG, &r)) die("KVM_GET_ONE_REG");
  return v;
}
static void set_attr(int dev, uint32_t group, uint64_t attr, uint64_t val) {
  struct kvm_device_attr a = {.group = group, .attr = attr, .addr = (uintptr_t)&val};
  if (ioctl(dev, KVM_SET_DEVICE_ATTR, &a)) die("KVM_SET_DEVICE_ATTR");
}

struct vm {
  unsigned number;
  int fd, vcpu, gic;
  struct kvm_run *run;
  size_t run_size;
  uint32_t *ram;
};

/* VM number N: RAM with the prologue, `body` and the data word; one vCPU
 * (PSCI 0.2) at the start of RAM, EL1h with DAIF masked; the vGIC. */
static uint32_t *reuse_ram; /* --reuse-ram: the next VM's RAM */
static void vm_create(struct vm *m, const uint32_t *body, size_t body_bytes) {
  m->number = next_vm_number++;
  m->fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
  if (m->fd < 0) die("KVM_CREATE_VM");
  if (reuse_ram) {
    m->ram = reuse_ram;
    reuse_ram = NULL;
  } else {
    m->ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m->ram == MAP_FAILED) die("mmap RAM");
  }
  m->ram[0] = 0x18000805;                                /* ldr w5, 0x100 */
  m->ram[1] = 0x52800006 | (m->number & 0xffff) << 5;    /* movz w6, #N */
  m->ram[2] = 0xb9000085;                                /* str w5, [x4] */
  m->ram[3] = 0xb9000486;                                /* str w6, [x4, #4] */
  memcpy(&m->ram[4], body, body_bytes);
  m->ram[DATA_OFFSET / 4] = MAGIC | (m->number & 0xffff);
  struct kvm_userspace_memory_region mr = {
      .slot = 0, .guest_phys_addr = RAM_BASE, .memory_size = RAM_SIZE, .userspace_addr = (uintptr_t)m->ram};
  if (ioctl(m->fd, KVM_SET_USER_MEMORY_REGION, &mr)) die("KVM_SET_USER_MEMORY_REGION");
  m->vcpu = ioctl(m->fd, KVM_CREATE_VCPU, 0);
  if (m->vcpu < 0) die("KVM_CREATE_VCPU");
  struct kvm_vcpu_init init;
  if (ioctl(m->fd, KVM_ARM_PREFERRED_TARGET, &init)) die("KVM_ARM_PREFERRED_TARGET");
  init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
  if (ioctl(m->vcpu, KVM_ARM_VCPU_INIT, &init)) die("KVM_ARM_VCPU_INIT");
  m->run_size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
  m->run = mmap(NULL, m->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, m->vcpu, 0);
  if (m->run == MAP_FAILED) die("mmap kvm_run");
  m->gic = -1;
  if (opt_gic) {
    struct kvm_create_device cd = {
        .type = opt_gic == 3 ? KVM_DEV_TYPE_ARM_VGIC_V3 : KVM_DEV_TYPE_ARM_VGIC_V2};
    if (ioctl(m->fd, KVM_CREATE_DEVICE, &cd)) die("KVM_CREATE_DEVICE (vGIC)");
    m->gic = cd.fd;
    if (opt_gic == 3) {
      set_attr(m->gic, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_DIST, GICD_BASE);
      set_attr(m->gic, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_REDIST, GICR_BASE);
    } else {
      set_attr(m->gic, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V2_ADDR_TYPE_DIST, GICD_BASE);
      set_attr(m->gic, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V2_ADDR_TYPE_CPU, GICC_BASE);
    }
    uint32_t nr = 128;
    struct kvm_device_attr a = {.group = KVM_DEV_ARM_VGIC_GRP_NR_IRQS, .addr = (uintptr_t)&nr};
    if (ioctl(m->gic, KVM_SET_DEVICE_ATTR, &a)) die("KVM_DEV_ARM_VGIC_GRP_NR_IRQS");
    struct kvm_device_attr c = {.group = KVM_DEV_ARM_VGIC_GRP_CTRL, .attr = KVM_DEV_ARM_VGIC_CTRL_INIT};
    if (ioctl(m->gic, KVM_SET_DEVICE_ATTR, &c)) die("KVM_DEV_ARM_VGIC_CTRL_INIT");
  }
  set_reg(m->vcpu, REG_PC, RAM_BASE);
  set_reg(m->vcpu, REG_PSTATE, 0x3c5); /* EL1h, DAIF masked */
  set_reg(m->vcpu, REG_X(0), GICD_BASE);
  set_reg(m->vcpu, REG_X(1), opt_gic == 2 ? GICC_BASE : GICR_BASE);
  set_reg(m->vcpu, REG_X(3), DONE_ADDR);
  set_reg(m->vcpu, REG_X(4), INFO_ADDR);
}

static void vm_destroy_keep_ram(struct vm *m) {
  if (m->gic >= 0) close(m->gic);
  munmap(m->run, m->run_size);
  close(m->vcpu);
  close(m->fd);
}
static void vm_destroy(struct vm *m) {
  vm_destroy_keep_ram(m);
  munmap(m->ram, RAM_SIZE);
}

/* --- a vCPU thread, and a kick ------------------------------------------------- */
static void on_kick(int sig) { (void)sig; }

struct runner {
  struct vm *m;
  pthread_t thread;
  volatile int stopped;
  int done;           /* the guest stored to DONE_ADDR */
  int err;            /* errno of KVM_RUN (EINTR: kicked), or -exit_reason */
  uint64_t other_mmio; /* the last exit that was neither INFO nor DONE */
  unsigned infos;
  uint32_t info[2];   /* the data word and the code number the guest reported */
};

/* Runs until the guest's report at DONE_ADDR, an unexpected exit, or a kick. */
static void *run_thread(void *arg) {
  struct runner *r = arg;
  for (;;) {
    if (ioctl(r->m->vcpu, KVM_RUN, 0) < 0) {
      r->err = errno;
      break;
    }
    struct kvm_run *run = r->m->run;
    if (run->exit_reason == KVM_EXIT_MMIO && run->mmio.is_write &&
        (run->mmio.phys_addr == INFO_ADDR || run->mmio.phys_addr == INFO_ADDR + 4)) {
      uint32_t v;
      memcpy(&v, run->mmio.data, 4);
      r->info[run->mmio.phys_addr == INFO_ADDR ? 0 : 1] = v;
      r->infos++;
      continue;
    }
    if (run->exit_reason == KVM_EXIT_MMIO && run->mmio.phys_addr == DONE_ADDR) {
      r->done = 1;
      break;
    }
    r->err = -(int)run->exit_reason;
    if (run->exit_reason == KVM_EXIT_MMIO) r->other_mmio = run->mmio.phys_addr;
    break;
  }
  r->stopped = 1;
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs the vCPU on a new thread, waits up to `ms` for it to stop by itself,
 * then kicks it out. Returns 1 if it stopped by itself. */
static int run_for(struct vm *m, unsigned ms, struct runner *r) {
  memset(r, 0, sizeof(*r));
  r->m = m;
  if (pthread_create(&r->thread, NULL, run_thread, r)) die("pthread_create");
  if (opt_pin >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(opt_pin, &set);
    pthread_setaffinity_np(r->thread, sizeof(set), &set);
  }
  double end = now() + ms / 1000.0;
  while (!r->stopped && now() < end) usleep(1000);
  int by_itself = r->stopped;
  while (!r->stopped) {
    pthread_kill(r->thread, SIGUSR1);
    usleep(1000);
  }
  pthread_join(r->thread, NULL);
  return by_itself;
}

/* "VM 7's" or "VM 7's (its own)": whose number a reported value carries. */
static const char *whose(uint32_t v, unsigned own, int is_data, char *buf, size_t n) {
  if (is_data && (v & 0xffff0000u) != MAGIC) {
    snprintf(buf, n, "0x%08x (no VM's)", v);
    return buf;
  }
  unsigned who = v & 0xffff;
  snprintf(buf, n, "VM %u's%s", who, who == (own & 0xffff) ? " (its own)" : " (STALE)");
  return buf;
}

/* --- the rounds ------------------------------------------------------------------ */
enum prelude { kNone, kWfiKick, kIrqWfiKick };
static enum prelude opt_prelude = kNone;

/* A VM whose vCPU blocks in WFI and is kicked out by a signal. */
static int prelude(struct vm *m) {
  struct runner r;
  if (opt_prelude == kIrqWfiKick && opt_gic) {
    if (opt_gic == 3) vm_create(m, body_irq_wait_v3, sizeof(body_irq_wait_v3));
    else vm_create(m, body_irq_wait_v2, sizeof(body_irq_wait_v2));
    if (!run_for(m, 10000, &r) || !r.done) {
      fprintf(stderr, "prelude: VM %u did not report ready (err %d)\n", m->number, r.err);
      exit(2);
    }
  } else {
    vm_create(m, body_wfi, sizeof(body_wfi));
  }
  if (run_for(m, 300, &r)) {
    fprintf(stderr, "prelude: VM %u left WFI by itself (err %d)\n", m->number, r.err);
    exit(2);
  }
  return r.err == EINTR ? 0 : -1;
}

static uint64_t take(int efd) {
  uint64_t n = 0;
  if (read(efd, &n, sizeof(n)) != sizeof(n)) n = 0;
  return n;
}

static void trace_off(void) {
  if (!opt_trace_off) return;
  FILE *f = fopen(opt_trace_off, "w");
  if (f) fputs("0\n", f), fclose(f);
  opt_trace_off = NULL;
}

/* One round. Returns 0 if the store-loop VM ran its own code to the end. */
static int round_once(int round) {
  struct vm pre = {0};
  if (opt_prelude != kNone) {
    prelude(&pre);
    if (opt_reuse_ram) {
      vm_destroy_keep_ram(&pre);
      reuse_ram = pre.ram;
    } else if (opt_keep_prelude_ram) vm_destroy_keep_ram(&pre);
    else if (!opt_keep_prelude) vm_destroy(&pre);
  }
  struct vm m;
  vm_create(&m, body_store_loop, sizeof(body_store_loop));
  int efd = eventfd(0, EFD_NONBLOCK);
  if (efd < 0) die("eventfd");
  struct kvm_ioeventfd io = {.datamatch = 0, .addr = NOTIFY_ADDR, .len = 4, .fd = efd,
                             .flags = KVM_IOEVENTFD_FLAG_DATAMATCH};
  if (ioctl(m.fd, KVM_IOEVENTFD, &io)) die("KVM_IOEVENTFD");
  set_reg(m.vcpu, REG_X(0), NOTIFY_ADDR);
  set_reg(m.vcpu, REG_X(1), 0);
  set_reg(m.vcpu, REG_X(2), opt_stores);

  struct runner r;
  double t0 = now();
  run_for(&m, opt_timeout * 1000, &r);
  double secs = now() - t0;
  uint64_t count = take(efd);
  int ok = r.done && r.infos == 2 && r.info[0] == (MAGIC | (m.number & 0xffff)) &&
           r.info[1] == (m.number & 0xffff) && count == opt_stores;
  char b1[48], b2[48];
  if (ok) {
    printf("round %d: VM %u ran its own code: %u stores in %.2f s\n", round, m.number, opt_stores, secs);
  } else {
    trace_off();
    uint64_t pc = get_reg(m.vcpu, REG_PC), x2 = get_reg(m.vcpu, REG_X(2));
    printf("FAIL round %d: VM %u (prelude VM %u %s) after %.1f s: %s; eventfd %llu of %u stores; "
           "pc=+0x%llx x2=%llu\n",
           round, m.number, pre.number, opt_prelude == kNone ? "none" : opt_keep_prelude ? "kept" : "destroyed",
           secs,
           r.done ? "reported done" : r.err == EINTR ? "no report (kicked)" : r.other_mmio ? "exit to an unexpected address" : "unexpected exit",
           (unsigned long long)count, opt_stores, (unsigned long long)(pc - RAM_BASE), (unsigned long long)x2);
    if (r.other_mmio) printf("  unexpected MMIO exit at 0x%llx\n", (unsigned long long)r.other_mmio);
    if (r.infos >= 1) printf("  data seen: %s\n", whose(r.info[0], m.number, 1, b1, sizeof(b1)));
    if (r.infos >= 2) printf("  code seen: %s\n", whose(r.info[1], m.number, 0, b2, sizeof(b2)));
    if (r.infos < 2) printf("  the guest never ran its prologue (%u info exits)\n", r.infos);
  }
  fflush(stdout);
  close(efd);
  vm_destroy(&m);
  if (opt_prelude != kNone && opt_keep_prelude) vm_destroy(&pre);
  if (opt_prelude != kNone && opt_keep_prelude_ram) munmap(pre.ram, RAM_SIZE);
  return !ok;
}

static void usage(void) {
  fprintf(stderr,
          "usage: stale-vm-code [--rounds N] [--stores N] [--timeout S] [--gic 3|2|none]\n"
          "                     [--prelude none|wfi-kick|irq-wfi-kick] [--keep-prelude]\n"
          "                     [--keep-prelude-ram] [--reuse-ram] [--pin CPU] [--fork]\n"
          "                     [--trace-off-on-hang FILE]\n");
  exit(2);
}

int main(int argc, char **argv) {
  unsigned rounds = 10;
  int use_fork = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--rounds") && v) rounds = atoi(argv[++i]);
    else if (!strcmp(a, "--stores") && v) opt_stores = atoi(argv[++i]);
    else if (!strcmp(a, "--timeout") && v) opt_timeout = atoi(argv[++i]);
    else if (!strcmp(a, "--gic") && v) opt_gic = !strcmp(v, "none") ? 0 : atoi(v), i++;
    else if (!strcmp(a, "--prelude") && v) {
      i++;
      if (!strcmp(v, "none")) opt_prelude = kNone;
      else if (!strcmp(v, "wfi-kick")) opt_prelude = kWfiKick;
      else if (!strcmp(v, "irq-wfi-kick")) opt_prelude = kIrqWfiKick;
      else usage();
    } else if (!strcmp(a, "--keep-prelude")) opt_keep_prelude = 1;
    else if (!strcmp(a, "--keep-prelude-ram")) opt_keep_prelude_ram = 1;
    else if (!strcmp(a, "--reuse-ram")) opt_reuse_ram = 1;
    else if (!strcmp(a, "--pin") && v) opt_pin = atoi(argv[++i]);
    else if (!strcmp(a, "--fork")) use_fork = 1;
    else if (!strcmp(a, "--trace-off-on-hang") && v) opt_trace_off = argv[++i];
    else usage();
  }
  if (opt_gic != 0 && opt_gic != 2 && opt_gic != 3) usage();
  struct sigaction sa = {.sa_handler = on_kick}; /* no SA_RESTART: KVM_RUN returns EINTR */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm_fd < 0) die("/dev/kvm");

  unsigned failed = 0;
  for (unsigned i = 1; i <= rounds; i++) {
    int st;
    if (use_fork) {
      fflush(stdout);
      pid_t pid = fork();
      if (pid < 0) die("fork");
      if (pid == 0) _exit(round_once(i));
      int ws;
      waitpid(pid, &ws, 0);
      st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 2;
      if (st == 2) return 2;
      next_vm_number += opt_prelude != kNone ? 2 : 1; /* the child's numbers */
    } else {
      st = round_once(i);
    }
    failed += st != 0;
  }
  printf("stale-vm-code: %u of %u rounds failed (stores %u, gic %d, prelude %s%s, %s)\n", failed,
         rounds, opt_stores, opt_gic,
         opt_prelude == kIrqWfiKick ? "irq-wfi-kick" : opt_prelude == kWfiKick ? "wfi-kick" : "none",
         opt_keep_prelude ? " kept" : opt_keep_prelude_ram ? " (RAM kept)" : "", use_fork ? "a process per round" : "one process");
  return failed ? 1 : 0;
}
