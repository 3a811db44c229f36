/* SPDX-License-Identifier: BSD-2-Clause */
/* Real-mode guest: ECX 32-bit loads from ES:DI, summed into EBX, then
 * reports "done" with the sum: an OUTL of it to port 0xf4, and halts.
 * Loaded and started by tests/guests/test_machine_x86_64.cc. */
	.section .rodata.x86_guest_load_loop, "a"
	.code16
	.globl x86_guest_load_loop, x86_guest_load_loop_end
x86_guest_load_loop:
	xorl	%ebx, %ebx
	testl	%ecx, %ecx
	jz	2f
1:	movl	%es:(%di), %eax
	addl	%eax, %ebx
	decl	%ecx
	jnz	1b
2:	movl	%ebx, %eax
	outl	%eax, $0xf4
3:	hlt
	jmp	3b
x86_guest_load_loop_end:
	.code64
	.section .note.GNU-stack, "", @progbits
