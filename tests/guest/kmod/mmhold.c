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
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
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
