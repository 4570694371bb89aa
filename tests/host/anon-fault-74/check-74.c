// SPDX-License-Identifier: GPL-2.0
/*
 * Compile-time checks of anon_fault's 7.4 configuration: built by
 * tests/host/anon-fault-74/run against the 7.3 headers with
 * -DMMFIX_TEST_74 (and module/compat.h force-included, as in mmfix).
 * The fix's source is included so its static replacements can be
 * compared with the kernel functions they replace.
 */
#include "shim-74.h"
#include "anon_fault.c"

#ifndef MMFIX_HAVE_VMA_HAS_ANON_RMAP
#error "MMFIX_TEST_74 did not select the 7.4 code"
#endif

/* Each replacement has the type of the kernel function it replaces. */
static_assert(__same_type(&mmfix___vmf_anon_prepare, &__vmf_anon_prepare));
static_assert(__same_type(&mmfix_folio_add_new_anon_rmap,
			  &folio_add_new_anon_rmap));

/* Both functions are registered, and both pairs of counters exist. */
static_assert(ARRAY_SIZE(mmfix_anon_fault_funcs) == 3);
static_assert(ARRAY_SIZE(mmfix_anon_fault_counters) == 5);

MODULE_LICENSE("GPL");
