// SPDX-License-Identifier: GPL-2.0
/*
 * Fix lru_add_free_dead: when a per-CPU lru_add batch is moved to the
 * LRU, 6.1 and 6.12 put every folio of it on the LRU under the lruvec
 * lock, also folios whose only reference left is the batch's own (they
 * were unmapped or released while they waited); the folios_put() at
 * the end of the move then takes the lock again to take them off the
 * LRU and free them.  7.2 frees such folios before they reach the LRU
 * (JP Kobryn, "mm/lruvec: preemptively free dead folios during lru_add
 * drain", 2026-04); this is that change for 6.1 and 6.12
 * (docs/fixes/lru-add-free-dead.md).
 *
 * It matters most together with unmap_drain: once munmap no longer
 * drains, the folio a MAP_POPULATE left in the batch is usually dead by
 * the time its batch moves.
 *
 * folio_batch_move_lru() (mm/swap.c, static, out of line in both
 * series) is replaced by the kernel's own, which with the fix on takes
 * dead folios out of an lru_add batch and frees them without the lock.
 */
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/swap.h>
#ifdef MMFIX_HAVE_LRU_ADD_FREE_DEAD
#include <linux/pagevec.h>
#endif
#include "mmfix.h"

#if MMFIX_SUPPORTED	/* no fix in a build for an unsupported kernel */

enum { LD_FREED };

#ifdef MMFIX_HAVE_LRU_ADD_FREE_DEAD

typedef void (*mmfix_move_fn_t)(struct lruvec *lruvec, struct folio *folio);

/*
 * With the fix on, for each folio of an lru_add batch before it would be
 * put on the LRU: true if the batch's reference is the only one left.
 * The folio is then frozen at refcount 0 and the caller frees it as
 * folios_put() frees an order-0 folio that is not on an LRU, without
 * the lruvec lock.  As upstream:
 * - folio_ref_freeze(folio, 1) succeeds only while nobody else holds a
 *   reference, and from then on every speculative folio_try_get() fails,
 *   exactly as after folios_put()'s put to zero.  A folio in an lru_add
 *   batch is not on an LRU (PG_lru is set only by the move), and only
 *   this CPU's batch code can reach it through the batch.
 * - PG_active (MGLRU faults, folio_mark_accessed() of a batched folio,
 *   refaults) and PG_unevictable (a folio put back after isolation from
 *   the unevictable LRU) may be set on a batched folio; the LRU round
 *   trip would have cleared them (__folio_clear_lru_flags()), and the page
 *   allocator reports a page freed with them as bad.  PG_mlocked is
 *   cleared and NR_MLOCK fixed by the page allocator's free path, for
 *   this path as for the usual one.
 * - The memcg charge is dropped before the free, as folios_put() does.
 * Not as upstream: large folios are left to the usual path (6.1's
 * free_unref_page_list() frees order-0 pages only; a large folio never
 * waits in a batch, and the caller adding it holds a reference, so
 * upstream's deferred-split unqueue is not needed), and so are
 * ZONE_DEVICE folios, which in 6.1 and 6.12 are idle at refcount 1
 * (put_devmap_managed_page()) and are never added to an LRU anyway.
 */
static bool mmfix_lru_add_folio_dead(struct folio *folio)
{
	if (folio_test_large(folio) || folio_is_zone_device(folio))
		return false;
	if (!folio_ref_freeze(folio, 1))
		return false;
	__folio_clear_active(folio);
	__folio_clear_unevictable(folio);
	return true;
}

#ifdef MMFIX_LRU_ADD_FREE_DEAD_LIST
/* 6.1: mm/swap.c (static) and mm/internal.h. */
void lru_add_fn(struct lruvec *lruvec, struct folio *folio);
void free_unref_page_list(struct list_head *list);

/* With the fix on: free an lru_add batch's dead folios, keep the rest in order. */
static void mmfix_lru_add_free_dead_folios(struct folio_batch *fbatch)
{
	unsigned int nr = 0;
	LIST_HEAD(dead);
	int i;

	for (i = 0; i < folio_batch_count(fbatch); i++) {
		struct folio *folio = fbatch->folios[i];

		if (mmfix_lru_add_folio_dead(folio)) {
			list_add(&folio->lru, &dead);
			mmfix_count(&mmfix_lru_add_free_dead, LD_FREED);
		} else {
			fbatch->folios[nr++] = folio;
		}
	}
	if (list_empty(&dead))
		return;
	fbatch->nr = nr;
	mem_cgroup_uncharge_list(&dead);
	free_unref_page_list(&dead);
}

/*
 * The kernel's own, after mmfix_lru_add_free_dead_folios() when the fix
 * is on for an lru_add batch: with it off, the kernel's loop alone.
 */
static void mmfix_folio_batch_move_lru(struct folio_batch *fbatch,
				       mmfix_move_fn_t move_fn)
{
	struct lruvec *lruvec = NULL;
	unsigned long flags = 0;
	int i;

	if (move_fn == lru_add_fn && mmfix_fix_on(&mmfix_lru_add_free_dead))
		mmfix_lru_add_free_dead_folios(fbatch);

	for (i = 0; i < folio_batch_count(fbatch); i++) {
		struct folio *folio = fbatch->folios[i];

		/* block memcg migration while the folio moves between lru */
		if (move_fn != lru_add_fn && !folio_test_clear_lru(folio))
			continue;

		lruvec = folio_lruvec_relock_irqsave(folio, lruvec, &flags);
		move_fn(lruvec, folio);

		folio_set_lru(folio);
	}

	if (lruvec)
		unlock_page_lruvec_irqrestore(lruvec, flags);
	folios_put(fbatch->folios, folio_batch_count(fbatch));
	folio_batch_init(fbatch);
}

static struct klp_func mmfix_lru_add_free_dead_funcs[] = {
	{
		.old_name = "folio_batch_move_lru",
		.new_func = mmfix_folio_batch_move_lru,
	},
	{ }
};
#else
/* 6.12: mm/swap.c (static) and mm/internal.h. */
void lru_add(struct lruvec *lruvec, struct folio *folio);
void free_unref_folios(struct folio_batch *folios);

/* With the fix on: free an lru_add batch's dead folios, keep the rest in order. */
static void mmfix_lru_add_free_dead_folios(struct folio_batch *fbatch)
{
	struct folio_batch dead;
	unsigned int nr = 0;
	int i;

	folio_batch_init(&dead);
	for (i = 0; i < folio_batch_count(fbatch); i++) {
		struct folio *folio = fbatch->folios[i];

		if (mmfix_lru_add_folio_dead(folio)) {
			folio_batch_add(&dead, folio);
			mmfix_count(&mmfix_lru_add_free_dead, LD_FREED);
		} else {
			fbatch->folios[nr++] = folio;
		}
	}
	if (!folio_batch_count(&dead))
		return;
	fbatch->nr = nr;
	mem_cgroup_uncharge_folios(&dead);
	free_unref_folios(&dead);
}

/*
 * The kernel's own, after mmfix_lru_add_free_dead_folios() when the fix
 * is on for an lru_add batch: with it off, the kernel's loop alone.
 */
static void mmfix_folio_batch_move_lru(struct folio_batch *fbatch,
				       mmfix_move_fn_t move_fn)
{
	struct lruvec *lruvec = NULL;
	unsigned long flags = 0;
	int i;

	if (move_fn == lru_add && mmfix_fix_on(&mmfix_lru_add_free_dead))
		mmfix_lru_add_free_dead_folios(fbatch);

	for (i = 0; i < folio_batch_count(fbatch); i++) {
		struct folio *folio = fbatch->folios[i];

		/* block memcg migration while the folio moves between lru */
		if (move_fn != lru_add && !folio_test_clear_lru(folio))
			continue;

		folio_lruvec_relock_irqsave(folio, &lruvec, &flags);
		move_fn(lruvec, folio);

		folio_set_lru(folio);
	}

	if (lruvec)
		unlock_page_lruvec_irqrestore(lruvec, flags);
	folios_put(fbatch);
}

static struct klp_func mmfix_lru_add_free_dead_funcs[] = {
	{
		.old_name = "folio_batch_move_lru",
		.new_func = mmfix_folio_batch_move_lru,
	},
	{ }
};
#endif /* MMFIX_LRU_ADD_FREE_DEAD_LIST */

#else /* !MMFIX_HAVE_LRU_ADD_FREE_DEAD */

static struct klp_func mmfix_lru_add_free_dead_funcs[] = {
	{ }
};

#endif /* MMFIX_HAVE_LRU_ADD_FREE_DEAD */

static const char * const mmfix_lru_add_free_dead_counters[] = {
	[LD_FREED] = "dead_freed",
	NULL
};

static void mmfix_lru_add_free_dead_init(struct mmfix_fix *fix)
{
#ifdef MMFIX_HAVE_LRU_ADD_FREE_DEAD
	fix->applicable = true;
	fix->recommended = true;	/* a third fewer lru_lock takes on churn */
	fix->reason = "lru_add batch moves free folios only the batch holds (as 7.2)";
#else
	fix->applicable = false;
	fix->reason = "kernel frees dead folios of an lru_add batch itself";
#endif
}

struct mmfix_fix mmfix_lru_add_free_dead = {
	.funcs = mmfix_lru_add_free_dead_funcs,
	.counter_names = mmfix_lru_add_free_dead_counters,
	.init = mmfix_lru_add_free_dead_init,
};

#endif /* MMFIX_SUPPORTED */
