// SPDX-License-Identifier: GPL-2.0
/*
 * mmqueue - many threads queued on their own mm's mmap_lock at once, for
 * the lock statistics' table of waits in progress (t-40).
 *
 *   mmqueue -t THREADS -g GOFILE -e ENDFILE
 *	Starts THREADS threads (raw clone() with 16 KiB stacks cut from one
 *	mapping: quick to start under TCG) and prints "ready PID" once all
 *	run.  When GOFILE exists, every thread makes one mincore() call (a
 *	read acquisition of this process's mmap_lock; with the lock held
 *	for write meanwhile, by tests/guest/kmod mmhold, each queues on
 *	it), and "returned threads=N" is printed once all have returned.
 *	The threads then wait, taking no lock, until ENDFILE exists; then
 *	they exit and "done threads=N" is printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG		4096UL
#define STACK		(16 * 1024UL)

static int go, end;
static int started, returned, exited;
static char *region;

static void die(const char *what)
{
	fprintf(stderr, "mmqueue: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void futex_wait(int *addr, int val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* No libc state (no TLS): raw system calls only. */
static int worker(void *arg __attribute__((unused)))
{
	unsigned char v;

	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&go, __ATOMIC_SEQ_CST))
		futex_wait(&go, 0);
	syscall(SYS_mincore, region, PG, &v);
	__atomic_add_fetch(&returned, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&end, __ATOMIC_SEQ_CST))
		futex_wait(&end, 0);
	__atomic_add_fetch(&exited, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_exit, 0);
	return 0;
}

static void wait_count(int *count, long n)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };

	while (__atomic_load_n(count, __ATOMIC_SEQ_CST) < n)
		nanosleep(&tick, NULL);
}

static void wait_file(const char *path)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };

	while (access(path, F_OK))
		nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	const char *gofile = NULL, *endfile = NULL;
	long threads = 0, t;
	char *stacks;
	int c;

	while ((c = getopt(argc, argv, "t:g:e:")) != -1) {
		switch (c) {
		case 't':
			threads = atol(optarg);
			break;
		case 'g':
			gofile = optarg;
			break;
		case 'e':
			endfile = optarg;
			break;
		default:
			threads = 0;
		}
	}
	if (threads < 1 || threads > 100000 || !gofile || !endfile) {
		fprintf(stderr, "usage: mmqueue -t THREADS -g GOFILE -e ENDFILE\n");
		return 2;
	}
	region = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	stacks = mmap(NULL, threads * STACK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED || stacks == MAP_FAILED)
		die("mmap");
	for (t = 0; t < threads; t++)
		if (clone(worker, stacks + (t + 1) * STACK,
			  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			  CLONE_THREAD | CLONE_SYSVSEM, NULL) < 0)
			die("clone");
	wait_count(&started, threads);
	printf("ready %d\n", getpid());
	fflush(stdout);
	wait_file(gofile);
	__atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
	futex_wake_all(&go);
	wait_count(&returned, threads);
	printf("returned threads=%ld\n", threads);
	fflush(stdout);
	wait_file(endfile);
	__atomic_store_n(&end, 1, __ATOMIC_SEQ_CST);
	futex_wake_all(&end);
	wait_count(&exited, threads);
	printf("done threads=%ld\n", threads);
	return 0;
}
