// SPDX-License-Identifier: GPL-2.0
/*
 * cx16flags - does the (emulated) CPU give CMPXCHG16B the right flags?
 *
 *   cx16flags
 *
 * CMPXCHG16B sets ZF and leaves the other arithmetic flags alone.  QEMU
 * 7.2's TCG (Debian bookworm) computes them in a helper from the
 * translator's lazily kept flags state without writing that state back
 * first, so after an ADD in the same translation block it takes the
 * ADD's source operand for the whole of EFLAGS.  The kernel's SLUB fast
 * path runs exactly that (an add, then cmpxchg16b on the per-CPU
 * freelist); an interrupt taken before the next flag-setting instruction
 * then returns with those bits in EFLAGS (seen as a double fault in
 * kmem_cache_alloc_noprof() with EFLAGS equal to a pointer).
 *
 * Runs POPF (which ends a translation block with the flags state
 * written back), ADD of a value with only bit 21 (ID) set, CMPXCHG16B
 * that succeeds, PUSHF.  The right result has ZF and PF set and ID
 * clear.  Prints one line:
 *
 *   cx16=0                       the CPU has no CMPXCHG16B (kernels use
 *                                their emulation of it): exit 0
 *   cx16=1 flags=0xF ok          right flags: exit 0
 *   cx16=1 flags=0xF wrong       wrong flags: exit 1
 */
#include <cpuid.h>
#include <stdio.h>

int main(void)
{
	static unsigned __int128 mem __attribute__((aligned(16)));
	unsigned int eax, ebx, ecx, edx;
	unsigned long flags, acc = 0, lo = 0, hi = 0;
	const unsigned long src = 1UL << 21, clean = 0x2;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_CMPXCHG16B)) {
		printf("cx16=0\n");
		return 0;
	}
	mem = 0;
	asm volatile("push %[clean]\n\t"
		     "popf\n\t"
		     "add %[src], %[acc]\n\t"
		     "cmpxchg16b %[mem]\n\t"
		     "pushf\n\t"
		     "pop %[flags]\n\t"
		     "push %[clean]\n\t"
		     "popf"
		     : [flags] "=&r" (flags), [acc] "+r" (acc), "+a" (lo),
		       "+d" (hi), [mem] "+m" (mem)
		     : [src] "r" (src), [clean] "r" (clean), "b" (1UL), "c" (0UL)
		     : "cc", "memory");
	/* ZF (cmpxchg16b succeeded) and PF (low byte of the sum is 0) */
	if ((flags & 0x44) == 0x44 && !(flags & src)) {
		printf("cx16=1 flags=%#lx ok\n", flags);
		return 0;
	}
	printf("cx16=1 flags=%#lx wrong\n", flags);
	return 1;
}
