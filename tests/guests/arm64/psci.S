/* SPDX-License-Identifier: BSD-2-Clause */
/* arm64 guest exercising PSCI through KVM (hvc conduit).
 * In: x3 = report address, x4 = MPIDR of the secondary to start.
 * Reports PSCI_VERSION, then CPU_ON's return code (both 32-bit stores to
 * [x3]). The secondary enters at `secondary` with x0 = context id = the
 * report address, and reports its own MPIDR_EL1 with a 64-bit store. */
	.section .rodata.arm64_guest_psci, "a"
	.balign 16
	.globl arm64_guest_psci, arm64_guest_psci_end
arm64_guest_psci:
	mov	x19, x3
	ldr	x0, =0x84000000		/* PSCI_VERSION */
	hvc	#0
	str	w0, [x19]
	ldr	x0, =0xc4000003		/* CPU_ON (SMC64 calling convention) */
	mov	x1, x4			/* target MPIDR */
	adr	x2, secondary		/* entry point (physical, MMU off) */
	mov	x3, x19			/* context id, handed to the secondary in x0 */
	hvc	#0
	str	w0, [x19]
1:	wfi
	b	1b
secondary:
	mrs	x1, mpidr_el1
	str	x1, [x0]
2:	wfi
	b	2b
	.ltorg
arm64_guest_psci_end:
	.section .note.GNU-stack, "", @progbits
