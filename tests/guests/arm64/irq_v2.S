/* SPDX-License-Identifier: BSD-2-Clause */
/* arm64 guest taking an SPI through a vGICv2 (GIC-400 style).
 * In: x0 = GICD base, x1 = GICC base, x2 = report base, w3 = INTID.
 * Configures the SPI (edge, enabled, targeted at CPU 0), enables the
 * distributor and the memory-mapped CPU interface, reports "ready" at
 * [x2 + 8], and waits. Each IRQ: acknowledge (GICC_IAR), report the INTID at
 * [x2 + 0x10], EOI (GICC_EOIR). */
	.section .rodata.arm64_guest_irq_v2, "a"
	.balign 2048
	.globl arm64_guest_irq_v2, arm64_guest_irq_v2_end
arm64_guest_irq_v2:
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	mov	w10, #1			/* GICD_CTLR: enable */
	str	w10, [x0]
	lsr	w11, w3, #4		/* GICD_ICFGR<n>: edge = 0b10 */
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
	add	x14, x0, #0x800		/* GICD_ITARGETSR<intid>: CPU 0 */
	mov	w10, #1
	strb	w10, [x14, x3]
	lsr	w11, w3, #5		/* GICD_ISENABLER<n> */
	lsl	w11, w11, #2
	and	w12, w3, #31
	mov	w13, #1
	lsl	w13, w13, w12
	add	x14, x0, #0x100
	str	w13, [x14, x11]
	mov	w10, #0xff		/* GICC_PMR */
	str	w10, [x1, #4]
	mov	w10, #1			/* GICC_CTLR: enable group 0 (as IRQ) */
	str	w10, [x1]
	str	wzr, [x2, #8]		/* ready */
	msr	daifclr, #2
idle:	wfi
	b	idle

irq_handler:
	ldr	w10, [x1, #0xc]		/* GICC_IAR */
	str	w10, [x2, #0x10]
	str	w10, [x1, #0x10]	/* GICC_EOIR */
	eret

#include "irq_common.inc"
arm64_guest_irq_v2_end:
	.section .note.GNU-stack, "", @progbits
