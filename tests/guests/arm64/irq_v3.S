/* SPDX-License-Identifier: BSD-2-Clause */
/* arm64 guest taking an SPI through a vGICv3.
 * In: x0 = GICD base, x1 = this CPU's GICR (RD_base), x2 = report base,
 *     w3 = INTID of the SPI.
 * Configures the SPI (group 1, edge, enabled, routed to CPU 0), enables the
 * CPU interface through system registers (gicv3_setup, examples/gic_setup.inc,
 * shared with the embedding examples' guest), reports "ready" at [x2 + 8], and
 * waits. Each IRQ: acknowledge (ICC_IAR1_EL1), report the INTID at
 * [x2 + 0x10], EOI (ICC_EOIR1_EL1). */
#include "gic_setup.inc"
	.section .rodata.arm64_guest_irq_v3, "a"
	.balign 2048
	.globl arm64_guest_irq_v3, arm64_guest_irq_v3_end
arm64_guest_irq_v3:
	adr	x9, vectors
	msr	vbar_el1, x9
	isb
	gicv3_setup x0, x1, w3
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
