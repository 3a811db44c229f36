/* SPDX-License-Identifier: BSD-2-Clause */
/* Real-mode guest that takes PIC interrupts.
 * In: SI = master-PIC IRQ line (0-7) to unmask. Loaded at CS:IP = 0:0x1000.
 * Installs one handler at vectors 0x20-0x27, programs the 8259 (base 0x20,
 * edge), reports "ready" (OUT 0xf5), then waits with interrupts on. The
 * handler reads the PIC's in-service register and reports it (OUT 0xf6), so
 * the report says which line the guest really took, then EOIs. */
	.section .rodata.x86_guest_irq, "a"
	.code16
	.globl x86_guest_irq, x86_guest_irq_end
x86_guest_irq:
	cli
	xorw	%ax, %ax
	movw	%ax, %ds
	movw	%ax, %ss
	movw	$0x7000, %sp
	call	here
here:	popw	%bx
	addw	$(handler - here), %bx
	movw	$0x80, %di		/* IVT entry of vector 0x20 */
	movw	$8, %cx
install:
	movw	%bx, (%di)
	movw	$0, 2(%di)
	addw	$4, %di
	loop	install
	movb	$0x11, %al		/* ICW1: edge, cascade, ICW4 follows */
	outb	%al, $0x20
	movb	$0x20, %al		/* ICW2: vector base 0x20 */
	outb	%al, $0x21
	movb	$0x04, %al		/* ICW3: slave on IRQ2 */
	outb	%al, $0x21
	movb	$0x01, %al		/* ICW4: 8086 mode */
	outb	%al, $0x21
	movw	%si, %cx		/* OCW1: unmask only line SI */
	movb	$1, %al
	shlb	%cl, %al
	notb	%al
	outb	%al, $0x21
	movb	$0xff, %al		/* slave PIC: all masked */
	outb	%al, $0xa1
	outb	%al, $0xf5		/* ready */
	sti
idle:	hlt
	jmp	idle
handler:
	pushw	%ax
	movb	$0x0b, %al		/* OCW3: next read returns ISR */
	outb	%al, $0x20
	inb	$0x20, %al
	outb	%al, $0xf6		/* report the in-service lines */
	movb	$0x20, %al		/* non-specific EOI */
	outb	%al, $0x20
	popw	%ax
	iret
x86_guest_irq_end:
	.code64
	.section .note.GNU-stack, "", @progbits
