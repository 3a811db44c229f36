/* SPDX-License-Identifier: BSD-2-Clause */
/* irq_guest.h: what both embedding examples (c_embedder.c, entropy_device.cc)
 * share to run the arm64 guest of irq_guest.S: the guest's memory map, its
 * mailbox, and irq_guest_load(), which writes the guest into RAM with the
 * virtio driver's set-up for it and says where to start it. The VMM around
 * it (VM, vCPU, interrupt controller, the exits) is each example's own.
 * C11 and C++ alike. */
#ifndef KVMMIO_EXAMPLES_IRQ_GUEST_H
#define KVMMIO_EXAMPLES_IRQ_GUEST_H

#include <stdint.h>
#include <string.h>

/* The guest's physical memory map, QEMU virt's (which Linux knows well). */
#define IRQ_GUEST_GICD 0x08000000ull
#define IRQ_GUEST_GICR 0x080a0000ull   /* GICv3: the redistributors */
#define IRQ_GUEST_GICC 0x08010000ull   /* GICv2: the CPU interface */
#define IRQ_GUEST_NR_IRQS 128u
#define IRQ_GUEST_VIRTIO 0x0a000000ull /* the device's register window: a page of its own */
#define IRQ_GUEST_GSI 16u              /* the device's SPI: INTID 48 */
#define IRQ_GUEST_RAM 0x40000000ull
#define IRQ_GUEST_RAM_SIZE (2ull << 20)

/* In RAM: the program at its start, then the translation table, the
 * mailbox, the set-up table, the ring (descriptors, avail, used) and the
 * buffer the device fills. */
#define IRQ_GUEST_TTBR (IRQ_GUEST_RAM + 0x10000)
#define IRQ_GUEST_MAILBOX (IRQ_GUEST_RAM + 0x11000)
#define IRQ_GUEST_SETUP (IRQ_GUEST_RAM + 0x12000)
#define IRQ_GUEST_DESC (IRQ_GUEST_RAM + 0x20000)
#define IRQ_GUEST_AVAIL (IRQ_GUEST_RAM + 0x21000)
#define IRQ_GUEST_USED (IRQ_GUEST_RAM + 0x22000)
#define IRQ_GUEST_BUFFER (IRQ_GUEST_RAM + 0x30000)
#define IRQ_GUEST_BUFFER_LEN 32u
#define IRQ_GUEST_QUEUE_SIZE 8u

enum { IRQ_GUEST_SETTING_UP = 0, IRQ_GUEST_TRAFFIC = 1, IRQ_GUEST_DONE = 2 };

/* Guest and VMM talk through this, in RAM at IRQ_GUEST_MAILBOX. */
struct irq_guest_mailbox {
  uint32_t phase;          /* the guest's: IRQ_GUEST_SETTING_UP, _TRAFFIC, _DONE */
  uint32_t interrupts;     /* the guest's: the device's interrupts it took */
  uint32_t wanted;         /* the VMM's: how many to ask for */
  uint32_t last_status;    /* the guest's: the last InterruptStatus it read */
  uint64_t avail;          /* the VMM's: the avail ring's address */
  uint64_t setup;          /* the VMM's: the set-up table's address */
  uint32_t queue_size;     /* the VMM's */
  uint32_t unexpected_irqs;
  uint64_t esr;            /* an unexpected exception's ESR_EL1, else 0 */
};

/* Where the VMM starts the guest: x0-x6 (irq_guest.S says what each is),
 * PC and PSTATE (EL1h, interrupts masked). */
struct irq_guest_start {
  uint64_t x[7];
  uint64_t pc;
  uint64_t pstate;
};

#if defined(__aarch64__)
extern const unsigned char irq_guest_code[], irq_guest_code_end[];

static inline void irq_guest_store32(uint8_t* ram, uint64_t gpa, uint32_t v) {
  memcpy(ram + (gpa - IRQ_GUEST_RAM), &v, sizeof v);
}
static inline void irq_guest_store64(uint8_t* ram, uint64_t gpa, uint64_t v) {
  memcpy(ram + (gpa - IRQ_GUEST_RAM), &v, sizeof v);
}

/* Writes the guest into `ram` (the host address of IRQ_GUEST_RAM, zeroed)
 * for `interrupts` interrupts on a vGICv`gic_version`, with the driver's
 * set-up for a modern virtio-mmio device with one queue (what Linux's
 * virtio_mmio does before DRIVER_OK, without its reads), and fills
 * `start`. */
static inline void irq_guest_load(uint8_t* ram, int gic_version, uint32_t interrupts,
                                  struct irq_guest_start* start) {
  /* The registers of virtio 1.2, section 4.2.2, as the set-up writes them. */
  static const uint32_t setup[][2] = {
      {0x070, 0},                 /* Status: reset */
      {0x070, 1},                 /* ACKNOWLEDGE */
      {0x070, 3},                 /* DRIVER */
      {0x024, 1},                 /* DriverFeaturesSel 1: */
      {0x020, 1},                 /*   VIRTIO_F_VERSION_1 */
      {0x024, 0},
      {0x020, 0},
      {0x070, 11},                /* FEATURES_OK */
      {0x030, 0},                 /* QueueSel 0 */
      {0x038, IRQ_GUEST_QUEUE_SIZE},
      {0x080, (uint32_t)IRQ_GUEST_DESC}, {0x084, (uint32_t)(IRQ_GUEST_DESC >> 32)},
      {0x090, (uint32_t)IRQ_GUEST_AVAIL}, {0x094, (uint32_t)(IRQ_GUEST_AVAIL >> 32)},
      {0x0a0, (uint32_t)IRQ_GUEST_USED}, {0x0a4, (uint32_t)(IRQ_GUEST_USED >> 32)},
      {0x044, 1},                 /* QueueReady */
      {0x070, 15},                /* DRIVER_OK */
      {0xffffffffu, 0},
  };
  struct irq_guest_mailbox box;
  memcpy(ram, irq_guest_code, (size_t)(irq_guest_code_end - irq_guest_code));
  /* Two 1 GiB blocks: the devices' as Device-nGnRnE (never executable),
   * RAM's as Normal write-back, inner shareable. */
  irq_guest_store64(ram, IRQ_GUEST_TTBR, 0x0060000000000401ull);
  irq_guest_store64(ram, IRQ_GUEST_TTBR + 8, IRQ_GUEST_RAM | 0x705);
  memcpy(ram + (IRQ_GUEST_SETUP - IRQ_GUEST_RAM), setup, sizeof setup);
  /* Descriptor 0: the buffer, device-writable (VIRTQ_DESC_F_WRITE). */
  irq_guest_store64(ram, IRQ_GUEST_DESC, IRQ_GUEST_BUFFER);
  irq_guest_store32(ram, IRQ_GUEST_DESC + 8, IRQ_GUEST_BUFFER_LEN);
  irq_guest_store32(ram, IRQ_GUEST_DESC + 12, 2);
  memset(&box, 0, sizeof box);
  box.wanted = interrupts;
  box.avail = IRQ_GUEST_AVAIL;
  box.setup = IRQ_GUEST_SETUP;
  box.queue_size = IRQ_GUEST_QUEUE_SIZE;
  memcpy(ram + (IRQ_GUEST_MAILBOX - IRQ_GUEST_RAM), &box, sizeof box);

  memset(start, 0, sizeof *start);
  start->x[0] = IRQ_GUEST_GICD;
  start->x[1] = gic_version == 3 ? IRQ_GUEST_GICR : IRQ_GUEST_GICC;
  start->x[2] = (uint64_t)gic_version;
  start->x[3] = IRQ_GUEST_GSI + 32;
  start->x[4] = IRQ_GUEST_VIRTIO;
  start->x[5] = IRQ_GUEST_MAILBOX;
  start->x[6] = IRQ_GUEST_TTBR;
  start->pc = IRQ_GUEST_RAM;
  start->pstate = 0x3c5; /* EL1h, D, A, I, F masked */
}

/* The guest's mailbox in `ram`, as it is now. */
static inline struct irq_guest_mailbox irq_guest_mailbox(const uint8_t* ram) {
  struct irq_guest_mailbox box;
  memcpy(&box, ram + (IRQ_GUEST_MAILBOX - IRQ_GUEST_RAM), sizeof box);
  return box;
}

/* The used ring's index: the buffers the device returned. */
static inline uint16_t irq_guest_used(const uint8_t* ram) {
  uint16_t idx;
  memcpy(&idx, ram + (IRQ_GUEST_USED + 2 - IRQ_GUEST_RAM), sizeof idx);
  return idx;
}
#endif /* __aarch64__ */

#endif /* KVMMIO_EXAMPLES_IRQ_GUEST_H */
