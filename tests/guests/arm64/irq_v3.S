/* SPDX-License-Identifier: BSD-2-Clause */
/* arm64 guest taking an SPI through a vGICv3.
 * In: x0 = GICD base, x1 = this CPU's GICR (RD_base), x2 = report base,
 *     w3 = INTID of the SPI.
 * Configures the SPI (group 1, edge, enabled, routed to CPU 0), enables the
 * CPU interface through system registers, reports "ready" at [x2 + 8], and
 * waits. Each IRQ: acknowledge (ICC_IAR1_EL1), report the INTID at
 * [x2 + 0x10], EOI (ICC_EOIR1_EL1). */
	.section .rodata.arm64_guest_irq_v3, "a"
	.balign 2048
	.globl arm64_guest_irq_v3, arm64_guest_irq_v3_end
arm64_guest_irq_v3:
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	mov	w10, #0x12		/* GICD_CTLR: ARE | EnableGrp1 */
	str	w10, [x0]
	lsr	w11, w3, #5		/* 32 interrupts per register */
	lsl	w11, w11, #2
	and	w12, w3, #31
	mov	w13, #1
	lsl	w13, w13, w12
	add	x14, x0, #0x80		/* GICD_IGROUPR<n>: group 1 */
	ldr	w15, [x14, x11]
	orr	w15, w15, w13
	str	w15, [x14, x11]
	lsr	w11, w3, #4		/* GICD_ICFGR<n>: 16 per register, edge = 0b10 */
	lsl	w11, w11, #2
	and	w12, w3, #15
	lsl	w12, w12, #1
	add	w12, w12, #1
	mov	w16, #1
	lsl	w16, w16, w12
	add	x14, x0, #0xc00
	ldr	w15, [x14, x11]
	orr	w15, w15, w16
	str	w15, [x14, x11]
	lsr	w11, w3, #5		/* GICD_ISENABLER<n> */
	lsl	w11, w11, #2
	add	x14, x0, #0x100
	str	w13, [x14, x11]
	mov	x14, #0x6000		/* GICD_IROUTER<intid> = affinity 0.0.0.0 */
	add	x14, x14, x0
	str	xzr, [x14, x3, lsl #3]
	str	wzr, [x1, #0x14]	/* GICR_WAKER: awake */
	mrs	x10, S3_0_C12_C12_5	/* ICC_SRE_EL1.SRE = 1 */
	orr	x10, x10, #1
	msr	S3_0_C12_C12_5, x10
	isb
	mov	x10, #0xff		/* ICC_PMR_EL1: let every priority through */
	msr	S3_0_C4_C6_0, x10
	mov	x10, #1			/* ICC_IGRPEN1_EL1 */
	msr	S3_0_C12_C12_7, x10
	isb
	str	wzr, [x2, #8]		/* ready */
	msr	daifclr, #2
idle:	wfi
	b	idle

irq_handler:
	mrs	x10, S3_0_C12_C12_0	/* ICC_IAR1_EL1 */
	str	w10, [x2, #0x10]
	msr	S3_0_C12_C12_1, x10	/* ICC_EOIR1_EL1 */
	isb
	eret

#include "irq_common.inc"
arm64_guest_irq_v3_end:
	.section .note.GNU-stack, "", @progbits
