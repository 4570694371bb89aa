// SPDX-License-Identifier: GPL-2.0
/*
 * Lock statistics: storage, the on/off switch, reset, and
 * /sys/kernel/mmfix/stats (docs/ABI/testing/sysfs-kernel-mmfix,
 * docs/lock-stats.md).
 *
 * Purpose: show an operator how lruvec->lru_lock and mm->mmap_lock
 * behave before and after a fix is switched on, cheaply enough to leave
 * running.  Off (the default), no probe of any kind is registered (one
 * second after switching off).  On, the default tier counts acquisitions,
 * contended ones and their waits with nothing on the unlock paths; hold
 * times (stats/hold_time) add a probe on every unlock.
 *
 *   echo 1 > /sys/kernel/mmfix/stats/enabled
 *   cat /sys/kernel/mmfix/stats/lru_lock/acquisitions
 *   mmfixctl stats; mmfixctl watch 1
 *   echo 1 > /sys/kernel/mmfix/stats/reset
 *
 * Counters live in one block per CPU, written only by that CPU with
 * interrupts off inside a seqcount; readers sum consistent copies.
 */
#include <linux/bitops.h>
#include <linux/cpu.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <trace/events/lock.h>
#include "stats.h"

struct mmfix_stats_cpu __percpu *mmfix_stats_pcpu;
struct mmfix_node_stat __percpu *mmfix_stats_node_pcpu;

/* Serialises switching, reset and removal. */
static DEFINE_MUTEX(mmfix_stats_mutex);
bool mmfix_stats_on[MMFIX_STATS_NR_SRC];	/* the switches */
static bool mmfix_stats_hooked[MMFIX_STATS_NR_SRC]; /* probes registered */
static bool mmfix_contention_hooked;	/* for either source */
static bool mmfix_stats_hold_time;	/* stats/hold_time */
bool mmfix_stats_hold[MMFIX_STATS_NR_SRC];	/* see stats.h */
unsigned int mmfix_stats_hold_epoch[MMFIX_STATS_NR_SRC];
static bool mmfix_stats_hold_hooked[MMFIX_STATS_NR_SRC]; /* end probes */

/*
 * Switching off stops counting at once; the probes go one second later
 * if the switch is still off.  Unregistering them waits for RCU-tasks
 * grace periods, so a burst of switching (a script, a toggle storm)
 * pays for it once, as perf defers its static key disables.
 */
#define MMFIX_STATS_UNHOOK_DELAY	HZ
static void mmfix_stats_unhook(struct work_struct *work);
static DECLARE_DELAYED_WORK(mmfix_stats_unhook_work, mmfix_stats_unhook);

#ifdef MMFIX_TEST_PROBE_FAIL
#include <linux/moduleparam.h>
/*
 * Tests only (scripts/build-module --cflags -DMMFIX_TEST_PROBE_FAIL, t-47):
 * writing N to the test_probe_fail parameter makes the Nth probe
 * registration from then on fail with ENOMEM before the kernel is asked,
 * so that the unwind of a failed switch-on runs; 0 makes none fail.
 */
static int mmfix_test_probe_fail;
static atomic_t mmfix_test_probe_nr;

static int mmfix_test_probe_fail_set(const char *val,
				     const struct kernel_param *kp)
{
	int ret = param_set_int(val, kp);

	if (!ret)
		atomic_set(&mmfix_test_probe_nr, 0);
	return ret;
}

static const struct kernel_param_ops mmfix_test_probe_fail_ops = {
	.set = mmfix_test_probe_fail_set,
	.get = param_get_int,
};
module_param_cb(test_probe_fail, &mmfix_test_probe_fail_ops,
		&mmfix_test_probe_fail, 0600);

/*
 * Tests only, the same build (t-47): test_lose_acquisitions=1 makes the
 * mmap_lock probes count no acquisition, as if each contended wait's
 * acquisition were lost to a switch-off right after contention_end.
 */
bool mmfix_test_lose_acquisitions;
module_param_named(test_lose_acquisitions, mmfix_test_lose_acquisitions,
		   bool, 0600);

int mmfix_stats_test_fail(void)
{
	int n = READ_ONCE(mmfix_test_probe_fail);

	if (n > 0 && atomic_inc_return(&mmfix_test_probe_nr) == n)
		return -ENOMEM;
	return 0;
}
#endif

/* lock:contention_begin/end ************************************************/

static void mmfix_contention_begin(void *data, void *lock, unsigned int flags)
{
	if (flags == LCB_F_SPIN)
		mmfix_stats_lru_contention_begin(lock);
	else if (flags == LCB_F_READ || flags == LCB_F_WRITE)	/* rwsem */
		mmfix_stats_mmap_contention_begin(lock, flags == LCB_F_WRITE);
}

static void mmfix_contention_end(void *data, void *lock, int ret)
{
	if (!mmfix_stats_lru_contention_end(lock))
		mmfix_stats_mmap_contention_end(lock, ret);
}

#ifdef MMFIX_CONTENTION_TP_EXPORTED
static int mmfix_contention_register(void)
{
	int ret;

	ret = mmfix_stats_test_fail() ?:
	      register_trace_contention_end(mmfix_contention_end, NULL);
	if (ret)
		return ret;
	ret = mmfix_stats_test_fail() ?:
	      register_trace_contention_begin(mmfix_contention_begin, NULL);
	if (ret) {
		unregister_trace_contention_end(mmfix_contention_end, NULL);
		/*
		 * contention_end's probe may still run: the module may go
		 * next, and 7.x runs probes under SRCU-fast, which the
		 * synchronize_rcu() of a module's removal does not wait for.
		 */
		tracepoint_synchronize_unregister();
	}
	return ret;
}

static void mmfix_contention_unregister(void)
{
	WARN_ON_ONCE(unregister_trace_contention_begin(mmfix_contention_begin,
						       NULL));
	WARN_ON_ONCE(unregister_trace_contention_end(mmfix_contention_end,
						     NULL));
}
#else
/*
 * 6.1 does not export the lock tracepoints: find them among the core
 * kernel's tracepoints.  The probes keep the prototypes of the
 * TRACE_EVENTs in <trace/events/lock.h>.
 */
static struct tracepoint *mmfix_tp_contention_begin, *mmfix_tp_contention_end;

static void mmfix_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "contention_begin"))
		mmfix_tp_contention_begin = tp;
	else if (!strcmp(tp->name, "contention_end"))
		mmfix_tp_contention_end = tp;
}

static int mmfix_contention_register(void)
{
	int ret;

	if (!mmfix_tp_contention_begin || !mmfix_tp_contention_end)
		for_each_kernel_tracepoint(mmfix_find_tp, NULL);
	if (!mmfix_tp_contention_begin || !mmfix_tp_contention_end)
		return -ENOENT;
	ret = mmfix_stats_test_fail() ?:
	      tracepoint_probe_register(mmfix_tp_contention_end,
					(void *)mmfix_contention_end, NULL);
	if (ret)
		return ret;
	ret = mmfix_stats_test_fail() ?:
	      tracepoint_probe_register(mmfix_tp_contention_begin,
					(void *)mmfix_contention_begin, NULL);
	if (ret) {
		tracepoint_probe_unregister(mmfix_tp_contention_end,
					    (void *)mmfix_contention_end, NULL);
		tracepoint_synchronize_unregister();	/* as above */
	}
	return ret;
}

static void mmfix_contention_unregister(void)
{
	WARN_ON_ONCE(tracepoint_probe_unregister(mmfix_tp_contention_begin,
						 (void *)mmfix_contention_begin,
						 NULL));
	WARN_ON_ONCE(tracepoint_probe_unregister(mmfix_tp_contention_end,
						 (void *)mmfix_contention_end,
						 NULL));
}
#endif

/* on / off ******************************************************************/

/*
 * lock:contention_begin/end serve both sources: registered once, end
 * first and begin first off, so that every wait whose begin a probe saw
 * has its end seen too (stats_mmap.c frees the wait's slot there).
 */
static int mmfix_contention_get(void)
{
	int ret;

	if (mmfix_contention_hooked)
		return 0;
	ret = mmfix_contention_register();
	if (ret)
		pr_warn("stats: cannot register lock contention probes (%d)\n",
			ret);
	mmfix_contention_hooked = !ret;
	return ret;
}

static void mmfix_contention_put(void)
{
	unsigned int i;

	for (i = 0; i < MMFIX_STATS_NR_SRC; i++)
		if (mmfix_stats_hooked[i])
			return;
	if (mmfix_contention_hooked)
		mmfix_contention_unregister();
	mmfix_contention_hooked = false;
}

/*
 * The default tier of @src: the table and acquire_returned (mmap_lock),
 * or the lock callback (lru_lock), and the contention probes.
 */
static int mmfix_stats_start(unsigned int src)
{
	int ret;

	if (src == MMFIX_STATS_SRC_MMAP) {
		ret = mmfix_stats_mmap_start();
		if (ret)
			return ret;
		ret = mmfix_contention_get();
		if (ret) {
			mmfix_stats_mmap_stop();
			tracepoint_synchronize_unregister();
			mmfix_stats_mmap_release();
		}
		return ret;
	}
	mmfix_stats_lru_clear();	/* nothing of lru_lock is registered */
	ret = mmfix_contention_get();
	if (ret)
		return ret;
	ret = mmfix_stats_lru_arm();
	if (ret) {
		mmfix_contention_put();
		tracepoint_synchronize_unregister();
	}
	return ret;
}

/*
 * The hold tier of @src: the probe that ends a hold.  Holds are opened
 * only once mmfix_stats_hold[@src] is set, after this.
 */
static int mmfix_stats_hold_start(unsigned int src)
{
	int ret;

	if (src == MMFIX_STATS_SRC_MMAP)
		ret = mmfix_stats_mmap_hold_start();
	else
		ret = mmfix_stats_lru_hold_start();
	if (ret)
		return ret;
	/* holds still open from before never saw an end: not timed */
	WRITE_ONCE(mmfix_stats_hold_epoch[src], mmfix_stats_hold_epoch[src] + 1);
	mmfix_stats_hold_hooked[src] = true;
	return 0;
}

/*
 * Unregisters what @src no longer needs: the probes that open
 * acquisitions and holds first, those that end them last; the
 * mmap_lock table once no probe can see it.
 */
static void mmfix_stats_stop(unsigned int src)
{
	bool base = !mmfix_stats_on[src] && mmfix_stats_hooked[src];
	bool hold = !mmfix_stats_hold[src] && mmfix_stats_hold_hooked[src];

	if (base) {
		mmfix_stats_hooked[src] = false;
		if (src == MMFIX_STATS_SRC_MMAP)
			mmfix_stats_mmap_stop();
		else
			mmfix_stats_lru_disarm();
		mmfix_contention_put();
	}
	if (hold) {
		mmfix_stats_hold_hooked[src] = false;
		if (src == MMFIX_STATS_SRC_MMAP)
			mmfix_stats_mmap_hold_stop();
		else
			mmfix_stats_lru_hold_stop();
	}
	/*
	 * Whatever was unregistered, a tracepoint probe (mmap_lock's, or
	 * the contention probes lru_lock shares) may still run until the
	 * tracepoints' grace periods end (include/linux/tracepoint.h):
	 * before anything it uses is freed, or the module goes.
	 */
	if (base || hold)
		tracepoint_synchronize_unregister();
	if (src == MMFIX_STATS_SRC_MMAP && base)
		mmfix_stats_mmap_release();
}

/* Sets mmfix_stats_hold[] from the switches; registers what it needs. */
static int mmfix_stats_hold_update(void)
{
	bool want, went_off = false;
	unsigned int src;
	int ret = 0;

	for (src = 0; src < MMFIX_STATS_NR_SRC; src++) {
		want = mmfix_stats_on[src] && mmfix_stats_hold_time;
		if (want && !mmfix_stats_hold_hooked[src]) {
			ret = mmfix_stats_hold_start(src);
			if (ret) {
				want = false;
				mmfix_stats_hold_time = false;
			}
		}
		went_off |= mmfix_stats_hold[src] && !want;
		WRITE_ONCE(mmfix_stats_hold[src], want);
	}
	if (ret)	/* undo for the other source too */
		for (src = 0; src < MMFIX_STATS_NR_SRC; src++) {
			went_off |= mmfix_stats_hold[src];
			WRITE_ONCE(mmfix_stats_hold[src], false);
		}
	if (went_off || ret)
		mod_delayed_work(system_wq, &mmfix_stats_unhook_work,
				 MMFIX_STATS_UNHOOK_DELAY);
	return ret;
}

/* Switches the sources in @srcs (bit per source) on or off. */
static int mmfix_stats_set(unsigned long srcs, bool on)
{
	unsigned long turned_on = 0;
	bool went_off = false;
	unsigned int src;
	int ret = 0;

	mutex_lock(&mmfix_stats_mutex);
	for_each_set_bit(src, &srcs, MMFIX_STATS_NR_SRC) {
		if (on && !mmfix_stats_hooked[src]) {
			ret = mmfix_stats_start(src);
			if (ret)
				break;
			mmfix_stats_hooked[src] = true;
		}
		if (on && mmfix_stats_hold_time &&
		    !mmfix_stats_hold_hooked[src]) {
			ret = mmfix_stats_hold_start(src);
			if (ret) {
				went_off = true;	/* unhook the default tier */
				break;
			}
		}
		WRITE_ONCE(mmfix_stats_hold[src], on && mmfix_stats_hold_time);
		if (on != mmfix_stats_on[src]) {
			WRITE_ONCE(mmfix_stats_on[src], on);
			went_off |= !on;
			if (on)
				turned_on |= BIT(src);
		}
	}
	/* a failed switch-on leaves every source as it found it */
	if (ret) {
		for_each_set_bit(src, &turned_on, MMFIX_STATS_NR_SRC) {
			WRITE_ONCE(mmfix_stats_on[src], false);
			WRITE_ONCE(mmfix_stats_hold[src], false);
			went_off = true;
		}
	}
	if (went_off)
		mod_delayed_work(system_wq, &mmfix_stats_unhook_work,
				 MMFIX_STATS_UNHOOK_DELAY);
	mutex_unlock(&mmfix_stats_mutex);
	return ret;
}

/* Switches hold times on or off for the sources that are on. */
static int mmfix_stats_set_hold(bool on)
{
	int ret = 0;

	mutex_lock(&mmfix_stats_mutex);
	if (on != mmfix_stats_hold_time) {
		mmfix_stats_hold_time = on;
		ret = mmfix_stats_hold_update();
	}
	mutex_unlock(&mmfix_stats_mutex);
	return ret;
}

/* mmap_lock first: the lru_lock ftrace callbacks go last (t-40 waits on them). */
static void mmfix_stats_unhook(struct work_struct *work)
{
	int src;

	mutex_lock(&mmfix_stats_mutex);
	for (src = MMFIX_STATS_NR_SRC - 1; src >= 0; src--)
		mmfix_stats_stop(src);
	mutex_unlock(&mmfix_stats_mutex);
}

/* reset *********************************************************************/

static void mmfix_stats_zero(int cpu)
{
	struct mmfix_stats_cpu *s = per_cpu_ptr(mmfix_stats_pcpu, cpu);

	raw_write_seqcount_begin(&s->seq);
	/* from cls to the end, as an offset: one memset, no field overflow */
	memset((char *)s + offsetof(struct mmfix_stats_cpu, cls), 0,
	       sizeof(*s) - offsetof(struct mmfix_stats_cpu, cls));
	memset(per_cpu_ptr(mmfix_stats_node_pcpu, cpu), 0,
	       nr_node_ids * sizeof(struct mmfix_node_stat));
	raw_write_seqcount_end(&s->seq);
}

/* On each online CPU with interrupts off: no probe is halfway through. */
static void mmfix_stats_zero_local(void *unused)
{
	mmfix_stats_zero(smp_processor_id());
}

static void mmfix_stats_reset(void)
{
	int cpu;

	mutex_lock(&mmfix_stats_mutex);
	cpus_read_lock();
	on_each_cpu(mmfix_stats_zero_local, NULL, 1);
	for_each_possible_cpu(cpu)
		if (!cpu_online(cpu))
			mmfix_stats_zero(cpu);
	cpus_read_unlock();
	mutex_unlock(&mmfix_stats_mutex);
}

/* reading *******************************************************************/

/*
 * Copies @len bytes at @src, part of @cpu's block, as of one instant for
 * everything written inside the seqcount.  An acquisition count is added
 * outside it by a single this_cpu_inc() (mmfix_stats_count()), so the
 * copy is made a u64 at a time (every field of the blocks is aligned and
 * the blocks' sizes are multiples of 8): a count is never read torn.
 */
static void mmfix_stats_copy(int cpu, const void *src, void *dst, size_t len)
{
	struct mmfix_stats_cpu *s = per_cpu_ptr(mmfix_stats_pcpu, cpu);
	const u64 *from = src;
	u64 *to = dst;
	unsigned int seq;
	size_t i;

	BUILD_BUG_ON(sizeof(struct mmfix_lock_stat) % sizeof(u64) ||
		     sizeof(struct mmfix_node_stat) % sizeof(u64) ||
		     sizeof(struct mmfix_worst) % sizeof(u64));
	do {
		seq = read_seqcount_begin(&s->seq);
		for (i = 0; i < len / sizeof(u64); i++)
			to[i] = READ_ONCE(from[i]);
	} while (read_seqcount_retry(&s->seq, seq));
}

static void mmfix_lock_stat_add(struct mmfix_lock_stat *sum,
				const struct mmfix_lock_stat *c)
{
	unsigned int i;

	sum->acquisitions += c->acquisitions;
	sum->failed += c->failed;
	sum->contended += c->contended;
	sum->wait_ns += c->wait_ns;
	sum->wait_max_ns = max(sum->wait_max_ns, c->wait_max_ns);
	sum->holds += c->holds;
	sum->hold_ns += c->hold_ns;
	sum->hold_max_ns = max(sum->hold_max_ns, c->hold_max_ns);
	for (i = 0; i < MMFIX_STATS_HIST_BUCKETS; i++) {
		sum->wait_hist[i] += c->wait_hist[i];
		sum->hold_hist[i] += c->hold_hist[i];
	}
}

/* All CPUs' counters of lock class @cls; NULL when out of memory. */
static struct mmfix_lock_stat *mmfix_stats_class_sum(unsigned int cls)
{
	struct mmfix_lock_stat *sum, *c;
	int cpu;

	sum = kzalloc(2 * sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return NULL;
	c = sum + 1;
	for_each_possible_cpu(cpu) {
		mmfix_stats_copy(cpu, &per_cpu_ptr(mmfix_stats_pcpu, cpu)->cls[cls],
				 c, sizeof(*c));
		mmfix_lock_stat_add(sum, c);
	}
	return sum;
}

static void mmfix_stats_worst(bool hold, struct mmfix_worst *w)
{
	struct mmfix_stats_cpu *s;
	struct mmfix_worst c;
	int cpu;

	memset(w, 0, sizeof(*w));
	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(mmfix_stats_pcpu, cpu);
		mmfix_stats_copy(cpu, hold ? &s->worst_hold : &s->worst_wait,
				 &c, sizeof(c));
		if (c.ns > w->ns)
			*w = c;
	}
}

static u64 mmfix_stats_sum_u64(size_t offset)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*(u64 *)((char *)per_cpu_ptr(mmfix_stats_pcpu, cpu) +
					 offset));
	return sum;
}

/* sysfs: stats/{enabled,reset} *********************************************/

static struct kobject *mmfix_stats_kobj;
static struct kobject *mmfix_class_kobj[MMFIX_STATS_NR_CLASSES];
static struct kobject *mmfix_mmap_kobj;
static struct kobject **mmfix_node_kobj;	/* nr_node_ids entries */

/* Exactly "0" or "1", optionally followed by one newline. */
static int mmfix_parse_01(const char *buf, size_t count)
{
	if (count && buf[count - 1] == '\n')
		count--;
	if (count != 1 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	return buf[0] - '0';
}

#define MMFIX_STATS_ALL_SRC	(BIT(MMFIX_STATS_NR_SRC) - 1)

/* Writes @buf ("0" or "1") to the switches of the sources in @srcs. */
static ssize_t mmfix_stats_store_switch(unsigned long srcs, const char *buf,
					size_t count)
{
	int on = mmfix_parse_01(buf, count), ret;

	if (on < 0)
		return on;
	ret = mmfix_stats_set(srcs, on);
	return ret ? ret : count;
}

/* stats/enabled: 1 while either lock is counted; a write sets both. */
static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(mmfix_stats_on[MMFIX_STATS_SRC_LRU]) ||
			  READ_ONCE(mmfix_stats_on[MMFIX_STATS_SRC_MMAP]));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	return mmfix_stats_store_switch(MMFIX_STATS_ALL_SRC, buf, count);
}

/* stats/lru_lock/enabled and stats/mmap_lock/enabled: one lock each. */
static ssize_t lru_enabled_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(mmfix_stats_on[MMFIX_STATS_SRC_LRU]));
}

static ssize_t lru_enabled_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	return mmfix_stats_store_switch(BIT(MMFIX_STATS_SRC_LRU), buf, count);
}

static ssize_t mmap_enabled_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(mmfix_stats_on[MMFIX_STATS_SRC_MMAP]));
}

static ssize_t mmap_enabled_store(struct kobject *kobj,
				  struct kobj_attribute *attr,
				  const char *buf, size_t count)
{
	return mmfix_stats_store_switch(BIT(MMFIX_STATS_SRC_MMAP), buf, count);
}

static struct kobj_attribute mmfix_lru_enabled_attr =
	__ATTR(enabled, 0644, lru_enabled_show, lru_enabled_store);
static struct kobj_attribute mmfix_mmap_enabled_attr =
	__ATTR(enabled, 0644, mmap_enabled_show, mmap_enabled_store);

static ssize_t reset_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	if (mmfix_parse_01(buf, count) != 1)
		return -EINVAL;
	mmfix_stats_reset();
	return count;
}

/* stats/hold_time: the hold tier (default 0), for the locks that are on. */
static ssize_t hold_time_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(mmfix_stats_hold_time));
}

static ssize_t hold_time_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	int on = mmfix_parse_01(buf, count), ret;

	if (on < 0)
		return on;
	ret = mmfix_stats_set_hold(on);
	return ret ? ret : count;
}

static struct kobj_attribute mmfix_stats_enabled_attr =
	__ATTR_RW_MODE(enabled, 0644);
static struct kobj_attribute mmfix_stats_hold_time_attr =
	__ATTR_RW_MODE(hold_time, 0644);
static struct kobj_attribute mmfix_stats_reset_attr = __ATTR_WO(reset);

static struct attribute *mmfix_stats_top_attrs[] = {
	&mmfix_stats_enabled_attr.attr,
	&mmfix_stats_hold_time_attr.attr,
	&mmfix_stats_reset_attr.attr,
	NULL
};

static const struct attribute_group mmfix_stats_top_group = {
	.attrs = mmfix_stats_top_attrs,
};

/* sysfs: <class>/<file> ****************************************************/

static int mmfix_class_of(struct kobject *kobj)
{
	unsigned int i;

	for (i = 0; i < MMFIX_STATS_NR_CLASSES; i++)
		if (mmfix_class_kobj[i] == kobj)
			return i;
	return -1;
}

static ssize_t mmfix_hist_emit(char *buf, const u64 *hist)
{
	ssize_t len = 0;
	unsigned int i;

	for (i = 0; i < MMFIX_STATS_HIST_BUCKETS; i++)
		if (hist[i])
			len += sysfs_emit_at(buf, len, "%llu %llu\n",
					     i ? 1ULL << (i - 1) : 0ULL,
					     hist[i]);
	return len;
}

static struct kobj_attribute mmfix_class_attrs[MMFIX_STATS_NR_FILES];

/*
 * A contended wait is counted by contention_end, its acquisition by the
 * acquire_returned (or lock callback) after it, in another section and
 * possibly on another CPU: a read between the two, or a switch-off or
 * reset between them, sees the wait without its acquisition.  Never
 * more contended acquisitions than acquisitions (docs/lock-stats.md).
 */
static u64 mmfix_contended_clamp(u64 contended, u64 acquisitions)
{
	return min(contended, acquisitions);
}

static ssize_t mmfix_class_show(struct kobject *kobj,
				struct kobj_attribute *kattr, char *buf)
{
	int cls = mmfix_class_of(kobj);
	unsigned int file = kattr - mmfix_class_attrs;
	struct mmfix_lock_stat *c;
	u64 v = 0;
	ssize_t ret;

	if (cls < 0 || file >= MMFIX_STATS_NR_FILES)
		return -EIO;
	c = mmfix_stats_class_sum(cls);
	if (!c)
		return -ENOMEM;
	switch (file) {
	case MMFIX_STATS_ACQUISITIONS:
		v = c->acquisitions;
		break;
	case MMFIX_STATS_FAILED:
		v = c->failed;
		break;
	case MMFIX_STATS_CONTENDED:
		v = mmfix_contended_clamp(c->contended, c->acquisitions);
		break;
	case MMFIX_STATS_WAIT_NS:
		v = c->wait_ns;
		break;
	case MMFIX_STATS_WAIT_MAX_NS:
		v = c->wait_max_ns;
		break;
	case MMFIX_STATS_HOLDS:
		v = c->holds;
		break;
	case MMFIX_STATS_HOLD_NS:
		v = c->hold_ns;
		break;
	case MMFIX_STATS_HOLD_MAX_NS:
		v = c->hold_max_ns;
		break;
	}
	if (file == MMFIX_STATS_WAIT_HIST)
		ret = mmfix_hist_emit(buf, c->wait_hist);
	else if (file == MMFIX_STATS_HOLD_HIST)
		ret = mmfix_hist_emit(buf, c->hold_hist);
	else
		ret = sysfs_emit(buf, "%llu\n", v);
	kfree(c);
	return ret;
}

/* Filled in by mmfix_stats_attrs_init(), in MMFIX_STATS_FILE_LIST order. */
static struct attribute *mmfix_class_attr_list[MMFIX_STATS_NR_FILES + 1];

#define MMFIX_FILE_NAME(id, name) name,
static const char *const mmfix_stats_file_names[MMFIX_STATS_NR_FILES] = {
	MMFIX_STATS_FILE_LIST(MMFIX_FILE_NAME)
};

/* lru_lock has no trylock: no "failed" there. */
static umode_t mmfix_class_visible(struct kobject *kobj, struct attribute *a,
				   int n)
{
	if (n == MMFIX_STATS_FAILED &&
	    kobj == mmfix_class_kobj[MMFIX_STATS_LRU])
		return 0;
	return a->mode;
}

static const struct attribute_group mmfix_class_group = {
	.attrs = mmfix_class_attr_list,
	.is_visible = mmfix_class_visible,
};

/* sysfs: lru_lock/unmatched, lru_lock/node<N>/ ****************************/

static ssize_t unmatched_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", mmfix_stats_sum_u64(
		offsetof(struct mmfix_stats_cpu, lru_unmatched)));
}

static struct kobj_attribute mmfix_lru_unmatched_attr = __ATTR_RO(unmatched);

static struct attribute *mmfix_lru_attrs[] = {
	&mmfix_lru_enabled_attr.attr,
	&mmfix_lru_unmatched_attr.attr,
	NULL
};

static const struct attribute_group mmfix_lru_group = {
	.attrs = mmfix_lru_attrs,
};

enum {
	NODE_ACQUISITIONS,
	NODE_CONTENDED,
	NODE_WAIT_NS,
	NODE_HOLD_NS,
	NODE_NR_FILES
};

static struct kobj_attribute mmfix_node_attrs[NODE_NR_FILES];

static ssize_t mmfix_node_show(struct kobject *kobj,
			       struct kobj_attribute *kattr, char *buf)
{
	unsigned int file = kattr - mmfix_node_attrs;
	struct mmfix_node_stat n, sum = { };
	int nid, cpu;

	for (nid = 0; nid < nr_node_ids; nid++)
		if (mmfix_node_kobj[nid] == kobj)
			break;
	if (nid == nr_node_ids || file >= NODE_NR_FILES)
		return -EIO;
	for_each_possible_cpu(cpu) {
		mmfix_stats_copy(cpu, per_cpu_ptr(mmfix_stats_node_pcpu, cpu) + nid,
				 &n, sizeof(n));
		sum.acquisitions += n.acquisitions;
		sum.contended += n.contended;
		sum.wait_ns += n.wait_ns;
		sum.hold_ns += n.hold_ns;
	}
	switch (file) {
	case NODE_ACQUISITIONS:
		return sysfs_emit(buf, "%llu\n", sum.acquisitions);
	case NODE_CONTENDED:
		return sysfs_emit(buf, "%llu\n",
				  mmfix_contended_clamp(sum.contended,
							sum.acquisitions));
	case NODE_WAIT_NS:
		return sysfs_emit(buf, "%llu\n", sum.wait_ns);
	default:
		return sysfs_emit(buf, "%llu\n", sum.hold_ns);
	}
}

static const char *const mmfix_node_file_names[NODE_NR_FILES] = {
	[NODE_ACQUISITIONS] = "acquisitions",
	[NODE_CONTENDED] = "contended",
	[NODE_WAIT_NS] = "wait_ns",
	[NODE_HOLD_NS] = "hold_ns",
};

static struct attribute *mmfix_node_attr_list[] = {
	&mmfix_node_attrs[NODE_ACQUISITIONS].attr,
	&mmfix_node_attrs[NODE_CONTENDED].attr,
	&mmfix_node_attrs[NODE_WAIT_NS].attr,
	&mmfix_node_attrs[NODE_HOLD_NS].attr,
	NULL
};

static const struct attribute_group mmfix_node_group = {
	.attrs = mmfix_node_attr_list,
};

/* sysfs: mmap_lock/{untracked,skipped_irqs_off,worst_*} ******************/

enum {
	WORST_NS,
	WORST_PID,
	WORST_TID,
	WORST_COMM,
	WORST_MODE,
	WORST_NR_FILES
};

/* [0][]: worst_hold_*, [1][]: worst_wait_* */
static struct kobj_attribute mmfix_worst_attrs[2][WORST_NR_FILES];

static ssize_t mmfix_worst_show(struct kobject *kobj,
				struct kobj_attribute *kattr, char *buf)
{
	unsigned int i = kattr - &mmfix_worst_attrs[0][0];
	struct mmfix_worst w;

	if (i >= 2 * WORST_NR_FILES)
		return -EIO;
	mmfix_stats_worst(i < WORST_NR_FILES, &w);
	switch (i % WORST_NR_FILES) {
	case WORST_NS:
		return sysfs_emit(buf, "%llu\n", w.ns);
	case WORST_PID:
		return sysfs_emit(buf, "%d\n", w.pid);
	case WORST_TID:
		return sysfs_emit(buf, "%d\n", w.tid);
	case WORST_COMM:
		return sysfs_emit(buf, "%s\n", w.comm);
	default:
		return sysfs_emit(buf, "%s\n", !w.ns ? "none" :
				  w.write ? "write" : "read");
	}
}

static const char *const mmfix_worst_names[2][WORST_NR_FILES] = {
	{ "worst_hold_ns", "worst_hold_pid", "worst_hold_tid",
	  "worst_hold_comm", "worst_hold_mode" },
	{ "worst_wait_ns", "worst_wait_pid", "worst_wait_tid",
	  "worst_wait_comm", "worst_wait_mode" },
};

static ssize_t untracked_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", mmfix_stats_sum_u64(
		offsetof(struct mmfix_stats_cpu, mmap_untracked)));
}

static struct kobj_attribute mmfix_mmap_untracked_attr = __ATTR_RO(untracked);

static ssize_t skipped_irqs_off_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", mmfix_stats_sum_u64(
		offsetof(struct mmfix_stats_cpu, mmap_skipped_irqs_off)));
}

static struct kobj_attribute mmfix_mmap_skipped_attr =
	__ATTR_RO(skipped_irqs_off);

#ifdef MMFIX_TEST_IRQS_OFF_TRYLOCK
/* Tests only: stats_mmap.c, mmfix_stats_mmap_test_trylock(). */
static ssize_t test_irqs_off_trylock_store(struct kobject *kobj,
					   struct kobj_attribute *attr,
					   const char *buf, size_t count)
{
	int ret = mmfix_stats_mmap_test_trylock();

	return ret ? ret : count;
}

static struct kobj_attribute mmfix_mmap_test_attr =
	__ATTR_WO(test_irqs_off_trylock);
#endif

static struct attribute *mmfix_mmap_attr_list[2 * WORST_NR_FILES + 5];

static const struct attribute_group mmfix_mmap_group = {
	.attrs = mmfix_mmap_attr_list,
};

/* init / uninit *************************************************************/

static void mmfix_attr_init(struct kobj_attribute *a, const char *name,
			    ssize_t (*show)(struct kobject *,
					    struct kobj_attribute *, char *))
{
	sysfs_attr_init(&a->attr);
	a->attr.name = name;
	a->attr.mode = 0444;
	a->show = show;
}

static void mmfix_stats_attrs_init(void)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < MMFIX_STATS_NR_FILES; i++) {
		mmfix_attr_init(&mmfix_class_attrs[i],
				mmfix_stats_file_names[i], mmfix_class_show);
		mmfix_class_attr_list[i] = &mmfix_class_attrs[i].attr;
	}
	for (i = 0; i < NODE_NR_FILES; i++)
		mmfix_attr_init(&mmfix_node_attrs[i], mmfix_node_file_names[i],
				mmfix_node_show);
	for (i = 0; i < 2; i++)
		for (j = 0; j < WORST_NR_FILES; j++) {
			mmfix_attr_init(&mmfix_worst_attrs[i][j],
					mmfix_worst_names[i][j],
					mmfix_worst_show);
			mmfix_mmap_attr_list[n++] = &mmfix_worst_attrs[i][j].attr;
		}
	mmfix_mmap_attr_list[n++] = &mmfix_mmap_enabled_attr.attr;
	mmfix_mmap_attr_list[n++] = &mmfix_mmap_untracked_attr.attr;
	mmfix_mmap_attr_list[n++] = &mmfix_mmap_skipped_attr.attr;
#ifdef MMFIX_TEST_IRQS_OFF_TRYLOCK
	mmfix_mmap_attr_list[n++] = &mmfix_mmap_test_attr.attr;
#endif
	mmfix_mmap_attr_list[n] = NULL;
}

/*
 * Creates directory @name with @group in it, storing the kobject in *@kp
 * first: is_visible() of the group looks at it.
 */
static int mmfix_kobj_add(struct kobject **kp, const char *name,
			  struct kobject *parent,
			  const struct attribute_group *group)
{
	*kp = kobject_create_and_add(name, parent);
	if (!*kp)
		return -ENOMEM;
	return group ? sysfs_create_group(*kp, group) : 0;
}

static void mmfix_stats_sysfs_uninit(void)
{
	int i;

	if (mmfix_node_kobj) {
		for (i = nr_node_ids - 1; i >= 0; i--)
			kobject_put(mmfix_node_kobj[i]);
		kfree(mmfix_node_kobj);
		mmfix_node_kobj = NULL;
	}
	for (i = MMFIX_STATS_NR_CLASSES - 1; i >= 0; i--) {
		kobject_put(mmfix_class_kobj[i]);
		mmfix_class_kobj[i] = NULL;
	}
	kobject_put(mmfix_mmap_kobj);
	mmfix_mmap_kobj = NULL;
	kobject_put(mmfix_stats_kobj);
	mmfix_stats_kobj = NULL;
}

static int mmfix_stats_sysfs_init(struct kobject *parent)
{
	struct kobject **k = mmfix_class_kobj;
	char name[16];
	int nid, ret;

	mmfix_stats_attrs_init();
	ret = mmfix_kobj_add(&mmfix_stats_kobj, "stats", parent,
			     &mmfix_stats_top_group);
	if (ret)
		return ret;
	ret = mmfix_kobj_add(&k[MMFIX_STATS_LRU], "lru_lock", mmfix_stats_kobj,
			     &mmfix_class_group);
	if (ret)
		return ret;
	ret = sysfs_create_group(k[MMFIX_STATS_LRU], &mmfix_lru_group);
	if (ret)
		return ret;
	ret = mmfix_kobj_add(&mmfix_mmap_kobj, "mmap_lock", mmfix_stats_kobj,
			     &mmfix_mmap_group);
	if (ret)
		return ret;
	ret = mmfix_kobj_add(&k[MMFIX_STATS_MMAP_READ], "read",
			     mmfix_mmap_kobj, &mmfix_class_group);
	if (ret)
		return ret;
	ret = mmfix_kobj_add(&k[MMFIX_STATS_MMAP_WRITE], "write",
			     mmfix_mmap_kobj, &mmfix_class_group);
	if (ret)
		return ret;

	mmfix_node_kobj = kcalloc(nr_node_ids, sizeof(*mmfix_node_kobj),
				  GFP_KERNEL);
	if (!mmfix_node_kobj)
		return -ENOMEM;
	for_each_node(nid) {
		snprintf(name, sizeof(name), "node%d", nid);
		ret = mmfix_kobj_add(&mmfix_node_kobj[nid], name,
				     k[MMFIX_STATS_LRU], &mmfix_node_group);
		if (ret)
			return ret;
	}
	return 0;
}

int mmfix_stats_init(void)
{
	int cpu, ret;

	mmfix_stats_pcpu = alloc_percpu(struct mmfix_stats_cpu);
	mmfix_stats_node_pcpu = __alloc_percpu(nr_node_ids *
					       sizeof(struct mmfix_node_stat),
					       __alignof__(struct mmfix_node_stat));
	if (!mmfix_stats_pcpu || !mmfix_stats_node_pcpu) {
		ret = -ENOMEM;
		goto err_free;
	}
	for_each_possible_cpu(cpu)
		seqcount_init(&per_cpu_ptr(mmfix_stats_pcpu, cpu)->seq);
	ret = mmfix_stats_sysfs_init(mmfix_sysfs_root());
	if (ret)
		goto err_sysfs;
	return 0;

err_sysfs:
	mmfix_stats_sysfs_uninit();
err_free:
	free_percpu(mmfix_stats_node_pcpu);
	mmfix_stats_node_pcpu = NULL;
	free_percpu(mmfix_stats_pcpu);
	mmfix_stats_pcpu = NULL;
	return ret;
}

void mmfix_stats_uninit(void)
{
	/* Removing the files waits for readers and writers inside them. */
	mmfix_stats_sysfs_uninit();
	mmfix_stats_set(MMFIX_STATS_ALL_SRC, false);
	cancel_delayed_work_sync(&mmfix_stats_unhook_work);
	mmfix_stats_unhook(NULL);
	free_percpu(mmfix_stats_node_pcpu);
	mmfix_stats_node_pcpu = NULL;
	free_percpu(mmfix_stats_pcpu);
	mmfix_stats_pcpu = NULL;
}

/* The lock directories of the switches (MMFIX_STATS_SWITCH_LIST). */
static const char *const mmfix_stats_src_names[MMFIX_STATS_NR_SRC] = {
	[MMFIX_STATS_SRC_LRU]	= "lru_lock",
	[MMFIX_STATS_SRC_MMAP]	= "mmap_lock",
};

/*
 * An upgrade (upgrade.c): the switches that are on, as names ("lru_lock",
 * "mmap_lock", "hold_time"), for the module taking over, and setting
 * them in that module.  The counts themselves start from zero there.
 */
void mmfix_stats_handover_out(char *buf, size_t size)
{
	unsigned int src;
	size_t n = 0;

	buf[0] = '\0';
	mutex_lock(&mmfix_stats_mutex);
	for (src = 0; src < MMFIX_STATS_NR_SRC; src++)
		if (mmfix_stats_on[src])
			n += scnprintf(buf + n, size - n, "%s ",
				       mmfix_stats_src_names[src]);
	if (mmfix_stats_hold_time)
		n += scnprintf(buf + n, size - n, "hold_time");
	mutex_unlock(&mmfix_stats_mutex);
}

void mmfix_stats_handover_in(const char *names)
{
	unsigned long srcs = 0;
	unsigned int src;
	int ret = 0;

	for (src = 0; src < MMFIX_STATS_NR_SRC; src++)
		if (strstr(names, mmfix_stats_src_names[src]))
			srcs |= BIT(src);
	if (strstr(names, "hold_time"))
		ret = mmfix_stats_set_hold(true);
	if (!ret && srcs)
		ret = mmfix_stats_set(srcs, true);
	if (ret)
		pr_warn("upgrade: lock statistics (%s) could not be switched on again (%d)\n",
			names, ret);
}
