/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The v7.4 declarations anon_fault's 7.4 code depends on that the 7.3
 * headers do not give a module, reproduced for the compile test
 * (tests/host/anon-fault-74/run).  Both live in mm/internal.h, which is
 * not part of any linux-headers package.
 *
 * Sources: __vmf_anon_prepare() has had this prototype in mm/internal.h
 * since "mm: change vmf_anon_prepare() to __vmf_anon_prepare()" (v6.11);
 * the linux-mm thread in /work/shared/seeds/002_* (based on mainline
 * d48723711bae, after v7.4-rc1) patches it only through mm/vma.h's
 * vma_has_anon_rmap().  __anon_vma_prepare() is as in 7.3's
 * mm/internal.h.  A copy of mm/internal.h at v7.4-rc1 itself could not
 * be retrieved here (docs/fixes/anon-fault.md).
 */
#ifndef MMFIX_SHIM_74_H
#define MMFIX_SHIM_74_H

#include <linux/mm_types.h>

vm_fault_t __vmf_anon_prepare(struct vm_fault *vmf);
int __anon_vma_prepare(struct vm_area_struct *vma);

#endif /* MMFIX_SHIM_74_H */
