/* SPDX-License-Identifier: BSD-2-Clause */
/* irq_guest: the tiny arm64 guest both embedding examples run
 * (examples/irq_guest.h says how to load it; docs/embedding.md, "The
 * examples"). It is a virtio driver's hot path and nothing else:
 *
 *  1. identity-maps guest memory (the devices' first GiB as Device memory,
 *     RAM's as Normal cacheable, so that its ring stores and the VMM's
 *     reads agree as Linux's would) and configures its interrupt controller
 *     (vGICv3 or vGICv2) for the device's SPI;
 *  2. replays the driver's set-up from a table the VMM wrote: each entry a
 *     32-bit store to the device's register window (these exit to the VMM);
 *  3. the traffic phase, `wanted` times: makes descriptor 0 available in
 *     the avail ring, stores QueueNotify (the queue's ioeventfd) and waits
 *     for the interrupt; its handler acknowledges the GIC, reads
 *     InterruptStatus, writes what it read to InterruptACK (Linux's
 *     vm_interrupt()), and ends the interrupt (EOI);
 *  4. powers off (PSCI SYSTEM_OFF).
 * It tells the VMM its phase in a mailbox in RAM, so the VMM can count the
 * exits each phase costs. Only where the assembler targets arm64: other
 * hosts build the examples without a guest (and skip them).
 *
 * In: x0 GICD base, x1 GICR RD_base (v3) or GICC base (v2), x2 the GIC's
 * version (3 or 2), w3 the device's INTID, x4 its register window, x5 the
 * mailbox, x6 the level-1 translation table (two 1 GiB blocks written by
 * the VMM). Entered at EL1h with interrupts masked. Mailbox (struct
 * irq_guest_mailbox): +0 phase, +4 interrupts taken, +8 wanted, +12 the
 * last InterruptStatus read, +16 avail ring, +24 set-up table, +32 queue
 * size, +36 unexpected interrupts, +40 ESR of an unexpected exception. */
#if defined(__aarch64__)
#include "gic_setup.inc"
	.section .rodata.irq_guest, "a"
	.balign 4096
	.globl irq_guest_code, irq_guest_code_end
irq_guest_code:
	adr	x9, vectors
	msr	vbar_el1, x9
	/* The MMU: MAIR attr0 Device-nGnRnE, attr1 Normal write-back; 4 KiB
	 * granule, 39-bit addresses, TTBR0 only; walks cacheable, inner
	 * shareable. */
	mov	x9, #0xff00
	msr	mair_el1, x9
	ldr	x9, =0x100993519
	msr	tcr_el1, x9
	msr	ttbr0_el1, x6
	isb
	tlbi	vmalle1
	dsb	nsh
	isb
	mrs	x9, sctlr_el1
	orr	x9, x9, #1		/* M */
	orr	x9, x9, #4		/* C */
	orr	x9, x9, #0x1000		/* I */
	msr	sctlr_el1, x9
	isb

	cmp	x2, #3			/* the GIC, for the device's SPI */
	b.ne	1f
	gicv3_setup x0, x1, w3
	b	setup
1:	gicv2_setup x0, x1, w3

setup:	/* 2. The driver's set-up: (offset, value) pairs up to offset ~0. */
	ldr	x9, [x5, #24]
1:	ldp	w10, w11, [x9], #8
	cmn	w10, #1
	b.eq	traffic
	str	w11, [x4, x10]
	b	1b

traffic: /* 3. The hot path, `wanted` times. */
	mov	w9, #1
	str	w9, [x5]		/* phase 1 */
	dsb	sy
	ldr	w12, [x5, #8]		/* wanted */
	ldr	x13, [x5, #16]		/* avail ring */
	ldr	w14, [x5, #32]		/* queue size */
	sub	w14, w14, #1
	mov	w15, #0			/* interrupts asked for so far */
next:	cmp	w15, w12
	b.hs	done
	and	w16, w15, w14		/* avail.ring[i % size] = 0 */
	add	x17, x13, #4
	strh	wzr, [x17, x16, lsl #1]
	add	w15, w15, #1
	dmb	ishst
	strh	w15, [x13, #2]		/* avail.idx = i + 1 */
	dsb	st
	str	wzr, [x4, #0x50]	/* QueueNotify = 0 */
wait:	msr	daifset, #2		/* no interrupt between the check and wfi */
	ldr	w16, [x5, #4]
	cmp	w16, w15
	b.hs	next
	wfi
	msr	daifclr, #2		/* take the pending interrupt */
	isb
	b	wait

done:	/* 4. Off. */
	mov	w9, #2
	str	w9, [x5]		/* phase 2 */
	dsb	sy
off:	ldr	w0, =0x84000008		/* PSCI SYSTEM_OFF */
	hvc	#0
	b	off

/* The interrupt, as Linux takes a virtio-mmio one: acknowledge at the GIC,
 * then vm_interrupt() (InterruptStatus, InterruptACK), then EOI. Uses
 * x19-x21 only: the code it interrupts keeps x9-x17. */
irq_handler:
	cmp	x2, #3
	b.ne	1f
	mrs	x19, S3_0_C12_C12_0	/* ICC_IAR1_EL1 */
	b	2f
1:	ldr	w19, [x1, #0xc]		/* GICC_IAR */
2:	cmp	w19, #1023		/* spurious: nothing to end */
	b.eq	4f
	ldr	w20, [x4, #0x60]	/* InterruptStatus */
	str	w20, [x4, #0x64]	/* InterruptACK */
	str	w20, [x5, #12]
	cmp	w19, w3
	add	x21, x5, #4		/* interrupts taken */
	b.eq	3f
	add	x21, x5, #36		/* unexpected ones */
3:	ldr	w20, [x21]
	add	w20, w20, #1
	str	w20, [x21]
	cmp	x2, #3
	b.ne	5f
	msr	S3_0_C12_C12_1, x19	/* ICC_EOIR1_EL1 */
	isb
4:	eret
5:	str	w19, [x1, #0x10]	/* GICC_EOIR */
	eret

/* Any other exception: its ESR in the mailbox, then off. */
unexpected:
	mrs	x19, esr_el1
	str	x19, [x5, #40]
	b	off

	.macro	vector target
	.balign	0x80
	b	\target
	.endm
	.balign	2048
vectors:
	.rept	5
	vector	unexpected	/* current EL, SP_EL0; current EL, SP_ELx: sync */
	.endr
	vector	irq_handler	/* current EL, SP_ELx: IRQ */
	.rept	10
	vector	unexpected
	.endr
	.ltorg
irq_guest_code_end:
#endif
	.section .note.GNU-stack, "", @progbits
