/* SPDX-License-Identifier: BSD-2-Clause */
/* arm64 guest (EL1, MMU off): x2 stores of w1 to [x0] (a notify-like MMIO
 * register), then a store to [x3] to report "done". */
	.section .rodata.arm64_guest_store_loop, "a"
	.balign 16
	.globl arm64_guest_store_loop, arm64_guest_store_loop_end
arm64_guest_store_loop:
	cbz	x2, 2f
1:	str	w1, [x0]
	subs	x2, x2, #1
	b.ne	1b
2:	str	wzr, [x3]
3:	wfi
	b	3b
arm64_guest_store_loop_end:
	.section .note.GNU-stack, "", @progbits
