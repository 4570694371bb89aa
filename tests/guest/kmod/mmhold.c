// SPDX-License-Identifier: GPL-2.0
/*
 * mmhold - test-only module (never installed): holds one process's
 * mmap_lock for write, taken while someone else holds it for read, so
 * that a test can put a writer in front of khugepaged in the middle of
 * its walk of that process (tests/guest/t-53-khugepaged-writer-hold.sh).
 *
 *   echo "PID HOLD_MS TRY_MS" >/sys/kernel/debug/mmhold/hold
 *   cat /sys/kernel/debug/mmhold/state
 *
 * The write tries a write trylock on PID's mm every 0.2-0.5 ms for
 * at most TRY_MS.  A trylock that succeeds means nobody held the lock:
 * it is released at once and counted as a miss.  The first that fails
 * means a reader holds it: the write then queues with mmap_write_lock(),
 * holds the lock HOLD_MS (sleeping interruptibly) and releases it.
 * TRY_MS 0: take the lock at once, whoever holds it, and hold it the same
 * way (tests/guest/t-57-khugepaged-pass-unlocked.sh).  The write returns
 * when done.  state reads "idle", "trying", "holding" or
 * "done hit=0|1 misses=N wait_us=W held_ms=H".
 *
 *   echo "PID N" >/sys/kernel/debug/mmhold/map
 *
 * maps N (at most 200000) anonymous 4 MiB VMAs into PID's mm from 64 GiB
 * up (below khpidle's 1 TiB), adjacent,
 * alternately PROT_READ and PROT_NONE (so they never merge), from a
 * kthread using that mm: VMAs that khugepaged can neither collapse
 * (no MADV_HUGEPAGE) nor pass without the lock (each holds a whole
 * PMD), so it crosses them under the read lock, a batch per check
 * (tests/guest/t-59-khugepaged-writer-wait-bounded.sh).
 *
 *   echo "PID HOLD_US SLEEP_US DURATION_MS" >/sys/kernel/debug/mmhold/loop
 *
 * takes PID's mmap_lock for write again and again for DURATION_MS:
 * mmap_write_lock(), hold HOLD_US, release, sleep SLEEP_US; the write
 * returns when done, state then reads "loop n=N queued=Q wait_max_us=W"
 * (Q: waits over 100 us, W: the longest wait for the lock).
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>

static struct dentry *mmhold_dir;
static DEFINE_MUTEX(mmhold_busy);
static char mmhold_state[96] = "idle";

static void mmhold_set_state(const char *s)
{
	strscpy(mmhold_state, s, sizeof(mmhold_state));
}

static struct mm_struct *mmhold_get_mm(int nr)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct pid *pid;

	pid = find_get_pid(nr);
	if (!pid)
		return NULL;
	task = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	if (!task)
		return NULL;
	mm = get_task_mm(task);
	put_task_struct(task);
	return mm;
}

static void mmhold_run(struct mm_struct *mm, unsigned long hold_ms,
		       unsigned long try_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(try_ms);
	unsigned long misses = 0, held_ms = 0;
	u64 wait_us = 0, t0;
	bool hit = false;

	mmhold_set_state("trying");
	while (!try_ms || time_before(jiffies, deadline)) {
		/* (mmap_write_trylock() is gone from 6.12 on; nothing
		 * is changed under this probe)
		 */
		if (try_ms && down_write_trylock(&mm->mmap_lock)) {
			up_write(&mm->mmap_lock);
			misses++;
			usleep_range(200, 500);
			continue;
		}
		t0 = local_clock();
		mmap_write_lock(mm);
		wait_us = div_u64(local_clock() - t0, NSEC_PER_USEC);
		hit = true;
		mmhold_set_state("holding");
		t0 = local_clock();
		msleep_interruptible(hold_ms);
		held_ms = div_u64(local_clock() - t0, NSEC_PER_MSEC);
		mmap_write_unlock(mm);
		break;
	}
	snprintf(mmhold_state, sizeof(mmhold_state),
		 "done hit=%d misses=%lu wait_us=%llu held_ms=%lu",
		 hit, misses, wait_us, held_ms);
}

static ssize_t mmhold_hold_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	unsigned long hold_ms, try_ms;
	struct mm_struct *mm;
	char buf[64];
	int nr;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	if (sscanf(buf, "%d %lu %lu", &nr, &hold_ms, &try_ms) != 3 ||
	    hold_ms > 600000 || try_ms > 600000)
		return -EINVAL;
	if (!mutex_trylock(&mmhold_busy))
		return -EBUSY;
	mm = mmhold_get_mm(nr);
	if (!mm) {
		mutex_unlock(&mmhold_busy);
		return -ESRCH;
	}
	mmhold_run(mm, hold_ms, try_ms);
	mmput(mm);
	mutex_unlock(&mmhold_busy);
	return count;
}

/* --- map: 4 MiB VMAs in another process's mm ------------------------ */

#define MMHOLD_MAP_BASE	(1UL << 36)
#define MMHOLD_MAP_SIZE	(4UL << 20)

struct mmhold_map {
	struct mm_struct *mm;
	unsigned long n;
	long ret;
	struct completion done;
};

static int mmhold_map_fn(void *data)
{
	struct mmhold_map *m = data;
	unsigned long i, addr, got;

	kthread_use_mm(m->mm);
	for (i = 0; i < m->n; i++) {
		addr = MMHOLD_MAP_BASE + i * MMHOLD_MAP_SIZE;
		got = vm_mmap(NULL, addr, MMHOLD_MAP_SIZE,
			      i & 1 ? PROT_NONE : PROT_READ,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			      0);
		if (got != addr) {
			m->ret = IS_ERR_VALUE(got) ? (long)got : -EEXIST;
			break;
		}
		if (!(i % 1024))
			cond_resched();
	}
	kthread_unuse_mm(m->mm);
	complete(&m->done);
	return 0;
}

static ssize_t mmhold_map_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct mmhold_map m = { };
	struct task_struct *t;
	char buf[64];
	int nr;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	if (sscanf(buf, "%d %lu", &nr, &m.n) != 2 || m.n > 200000)
		return -EINVAL;
	m.mm = mmhold_get_mm(nr);
	if (!m.mm)
		return -ESRCH;
	init_completion(&m.done);
	t = kthread_run(mmhold_map_fn, &m, "mmhold-map");
	if (IS_ERR(t)) {
		mmput(m.mm);
		return PTR_ERR(t);
	}
	wait_for_completion(&m.done);
	mmput(m.mm);
	return m.ret ? m.ret : count;
}

/* --- loop: a writer that keeps coming back --------------------------- */

static void mmhold_sleep_us(unsigned long us)
{
	if (us >= 20000)
		msleep(us / 1000);
	else if (us)
		usleep_range(us, us + 50);
}

static void mmhold_loop(struct mm_struct *mm, unsigned long hold_us,
			unsigned long sleep_us, unsigned long duration_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(duration_ms);
	unsigned long n = 0, queued = 0;
	u64 wait, wait_max = 0, t0;

	mmhold_set_state("looping");
	while (time_before(jiffies, deadline) && !signal_pending(current)) {
		t0 = local_clock();
		mmap_write_lock(mm);
		wait = local_clock() - t0;
		mmhold_sleep_us(hold_us);
		mmap_write_unlock(mm);
		n++;
		if (wait > 100 * NSEC_PER_USEC)
			queued++;
		wait_max = max(wait_max, wait);
		mmhold_sleep_us(sleep_us);
	}
	snprintf(mmhold_state, sizeof(mmhold_state),
		 "loop n=%lu queued=%lu wait_max_us=%llu", n, queued,
		 div_u64(wait_max, NSEC_PER_USEC));
}

static ssize_t mmhold_loop_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	unsigned long hold_us, sleep_us, duration_ms;
	struct mm_struct *mm;
	char buf[64];
	int nr;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	if (sscanf(buf, "%d %lu %lu %lu", &nr, &hold_us, &sleep_us,
		   &duration_ms) != 4 || hold_us > 1000000 ||
	    sleep_us > 1000000 || duration_ms > 600000)
		return -EINVAL;
	if (!mutex_trylock(&mmhold_busy))
		return -EBUSY;
	mm = mmhold_get_mm(nr);
	if (!mm) {
		mutex_unlock(&mmhold_busy);
		return -ESRCH;
	}
	mmhold_loop(mm, hold_us, sleep_us, duration_ms);
	mmput(mm);
	mutex_unlock(&mmhold_busy);
	return count;
}

static const struct file_operations mmhold_map_fops = {
	.owner = THIS_MODULE,
	.write = mmhold_map_write,
	.llseek = noop_llseek,
};

static const struct file_operations mmhold_loop_fops = {
	.owner = THIS_MODULE,
	.write = mmhold_loop_write,
	.llseek = noop_llseek,
};

static ssize_t mmhold_state_read(struct file *file, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char buf[sizeof(mmhold_state) + 1];
	int n = scnprintf(buf, sizeof(buf), "%s\n", mmhold_state);

	return simple_read_from_buffer(ubuf, count, ppos, buf, n);
}

static const struct file_operations mmhold_hold_fops = {
	.owner = THIS_MODULE,
	.write = mmhold_hold_write,
	.llseek = noop_llseek,
};

static const struct file_operations mmhold_state_fops = {
	.owner = THIS_MODULE,
	.read = mmhold_state_read,
	.llseek = default_llseek,
};

static int __init mmhold_init(void)
{
	mmhold_dir = debugfs_create_dir("mmhold", NULL);
	debugfs_create_file("hold", 0200, mmhold_dir, NULL, &mmhold_hold_fops);
	debugfs_create_file("state", 0400, mmhold_dir, NULL, &mmhold_state_fops);
	debugfs_create_file("map", 0200, mmhold_dir, NULL, &mmhold_map_fops);
	debugfs_create_file("loop", 0200, mmhold_dir, NULL, &mmhold_loop_fops);
	return 0;
}

static void __exit mmhold_exit(void)
{
	debugfs_remove_recursive(mmhold_dir);
}

module_init(mmhold_init);
module_exit(mmhold_exit);
MODULE_DESCRIPTION("mmfix test helper: hold a process's mmap_lock for write");
MODULE_LICENSE("GPL");
