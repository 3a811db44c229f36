/* SPDX-License-Identifier: BSD-2-Clause */
/* Real-mode guest: ECX stores of EAX to ES:DI (a notify-like MMIO
 * register), then reports "done" with an OUT to port 0xf4 and halts.
 * Loaded and started by tests/guests/test_machine_x86_64.cc. */
	.section .rodata.x86_guest_store_loop, "a"
	.code16
	.globl x86_guest_store_loop, x86_guest_store_loop_end
x86_guest_store_loop:
	testl	%ecx, %ecx
	jz	2f
1:	movl	%eax, %es:(%di)
	decl	%ecx
	jnz	1b
2:	outb	%al, $0xf4
3:	hlt
	jmp	3b
x86_guest_store_loop_end:
	.code64
	.section .note.GNU-stack, "", @progbits
