/* SPDX-License-Identifier: BSD-2-Clause */
/* arm64 guest taking an SPI through a vGICv2 (GIC-400 style).
 * In: x0 = GICD base, x1 = GICC base, x2 = report base, w3 = INTID.
 * Configures the SPI (edge, enabled, targeted at CPU 0), enables the
 * distributor and the memory-mapped CPU interface (gicv2_setup,
 * examples/gic_setup.inc, shared with the embedding examples' guest),
 * reports "ready" at [x2 + 8], and waits. Each IRQ: acknowledge (GICC_IAR),
 * report the INTID at [x2 + 0x10], EOI (GICC_EOIR). */
#include "gic_setup.inc"
	.section .rodata.arm64_guest_irq_v2, "a"
	.balign 2048
	.globl arm64_guest_irq_v2, arm64_guest_irq_v2_end
arm64_guest_irq_v2:
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	gicv2_setup x0, x1, w3
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
