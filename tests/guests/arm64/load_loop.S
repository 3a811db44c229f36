/* SPDX-License-Identifier: BSD-2-Clause */
/* arm64 guest (EL1, MMU off): x2 32-bit loads from [x0], summed into w1,
 * then a store of the sum to [x3] to report "done". */
	.section .rodata.arm64_guest_load_loop, "a"
	.balign 16
	.globl arm64_guest_load_loop, arm64_guest_load_loop_end
arm64_guest_load_loop:
	mov	w1, #0
	cbz	x2, 2f
1:	ldr	w4, [x0]
	add	w1, w1, w4
	subs	x2, x2, #1
	b.ne	1b
2:	str	w1, [x3]
3:	wfi
	b	3b
arm64_guest_load_loop_end:
	.section .note.GNU-stack, "", @progbits
