/* SPDX-License-Identifier: BSD-2-Clause */
/* tcg-smc-repro: QEMU TCG (system emulation, aarch64 guest) keeps running
 * translated code that a guest store has overwritten, when the store is one
 * whose helper probes the page and then writes host memory directly:
 *
 *   sve-st1b  an SVE contiguous store (ST1B), as glibc's __memcpy_sve does.
 *             sve_probe_page() -> probe_access_full(size 0) -> notdirty_write()
 *             of 1 byte: only translations overlapping the store's first
 *             byte are invalidated.
 *   dc-zva    DC ZVA, as the kernel's clear_page() does. probe_write(64)
 *             -> notdirty_write() of 1 byte before QEMU 8.2 (fixed upstream
 *             by e2faabee78ff "accel/tcg: Forward probe size on to
 *             notdirty_write").
 *
 * No KVM involved: a plain Linux program in the emulated machine. Each case
 * puts "mov w0, #OLD; ret" at offset 0x18 of an RWX page and calls it (QEMU
 * translates a block starting at 0x18), then overwrites the page's first 64
 * bytes with the case's store, starting at offset 0, cleans and invalidates
 * the caches as the architecture asks (DC CVAU, DSB, IC IVAU, DSB, ISB), and
 * calls 0x18 again. A correct machine runs the new bytes: "mov w0, #NEW" for
 * sve-st1b, zeros (UDF #0, SIGILL) for dc-zva. A stale translation returns
 * OLD again.
 *
 * Build: aarch64-linux-gnu-gcc -O2 -static -o tcg-smc-repro tcg-smc-repro.c
 * Run:   tcg-smc-repro [ROUNDS]   (in an aarch64 guest of qemu-system-aarch64)
 * Exit status: 0 every case saw the new code, 1 a case ran stale code.
 * Measured (Debian 12 host, QEMU 7.2.22, -cpu max): both cases stale in
 * every round; QEMU 10.0.2: sve-st1b stale, dc-zva correct; with -cpu
 * max,sve=off the SVE case is skipped (no SVE). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif

#define FN_OFFSET 0x18 /* off every 16-byte boundary: no SVE store of any VL starts there */
static const uint32_t kRet = 0xd65f03c0; /* ret */
static uint32_t mov_w0(unsigned imm) { return 0x52800000 | (imm & 0xffff) << 5; }

static sigjmp_buf on_sigill;
static void sigill(int sig) {
  (void)sig;
  siglongjmp(on_sigill, 1);
}

/* The architected sequence that makes new instructions visible. */
static void sync_icache(void *p, size_t n) { __builtin___clear_cache((char *)p, (char *)p + n); }

/* Calls the function at page + FN_OFFSET: its w0, or -1 on SIGILL. */
static long call(uint8_t *page) {
  if (sigsetjmp(on_sigill, 1)) return -1;
  return ((int (*)(void))(page + FN_OFFSET))();
}

static uint8_t *fresh_page(unsigned old) {
  uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  uint32_t *w = (uint32_t *)(page + FN_OFFSET);
  w[0] = mov_w0(old);
  w[1] = kRet;
  sync_icache(page, 4096);
  return page;
}

/* 64 bytes from src to dst with SVE ST1B (one vector if VL >= 64 bytes). */
__attribute__((target("arch=armv8.2-a+sve"))) static void sve_copy64(uint8_t *dst, const uint8_t *src) {
  for (unsigned off = 0; off < 64;) {
    unsigned vl;
    __asm__ volatile("cntb %x0" : "=r"(vl));
    __asm__ volatile(
        "whilelo p0.b, %x[i], %x[n]\n"
        "ld1b z0.b, p0/z, [%[s]]\n"
        "st1b z0.b, p0, [%[d]]\n"
        :
        : [i] "r"((uint64_t)off), [n] "r"((uint64_t)64), [s] "r"(src + off), [d] "r"(dst + off)
        : "p0", "z0", "memory");
    off += vl;
  }
}

/* 1: the case ran stale code. */
static int case_sve(int round) {
  const unsigned old = 100 + round, neu = 200 + round;
  uint8_t *page = fresh_page(old);
  long first = call(page);
  uint8_t block[64];
  memset(block, 0, sizeof(block));
  uint32_t *w = (uint32_t *)(block + FN_OFFSET);
  w[0] = mov_w0(neu);
  w[1] = kRet;
  sve_copy64(page, block);
  sync_icache(page, 64);
  long second = call(page);
  munmap(page, 4096);
  int stale = second != (long)neu;
  printf("round %d sve-st1b: before %ld, after the store %ld (want %u)%s\n", round, first, second, neu,
         stale ? ": STALE" : "");
  return stale;
}

static int case_dc_zva(int round) {
  const unsigned old = 300 + round;
  uint8_t *page = fresh_page(old);
  long first = call(page);
  __asm__ volatile("dc zva, %0" : : "r"(page) : "memory");
  sync_icache(page, 64);
  long second = call(page); /* zeros: UDF #0 */
  munmap(page, 4096);
  int stale = second != -1;
  printf("round %d dc-zva: before %ld, after zeroing %ld (want -1, SIGILL)%s\n", round, first, second,
         stale ? ": STALE" : "");
  return stale;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  uint64_t dczid;
  __asm__("mrs %0, dczid_el0" : "=r"(dczid));
  if ((4u << (dczid & 0xf)) != 64 || (dczid & 0x10)) {
    printf("tcg-smc-repro: DC ZVA block is not 64 bytes here (DCZID_EL0 %#llx)\n", (unsigned long long)dczid);
    return 2;
  }
  struct sigaction sa = {.sa_handler = sigill};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGILL, &sa, NULL);
  int have_sve = (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
  int stale = 0;
  for (int r = 1; r <= rounds; r++) {
    if (have_sve) stale += case_sve(r);
    stale += case_dc_zva(r);
  }
  printf("tcg-smc-repro: %d stale of %d cases%s\n", stale, rounds * (have_sve ? 2 : 1),
         have_sve ? "" : " (no SVE here: sve-st1b skipped)");
  return stale ? 1 : 0;
}
