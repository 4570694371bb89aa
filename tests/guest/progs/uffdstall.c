// SPDX-License-Identifier: GPL-2.0
/*
 * uffdstall - park a thread inside populate_vma_page_range() (the function
 * populate_drain patches) for as long as a test wants, to stall a
 * livepatch transition (t-78-stalled-transition).
 *
 *   uffdstall [-r RELEASE_FILE] [-t SECONDS] [-p PAGES]
 *
 * Maps PAGES (default 4) anonymous pages, registers them with a
 * userfaultfd in MISSING mode, and has a second thread mlock() them:
 * mlock -> __mm_populate -> populate_vma_page_range -> GUP -> fault ->
 * handle_userfault, where the thread sleeps (killable) until the fault
 * is resolved.  The main thread waits for the fault message, prints
 *
 *	stalled pid=P tid=T addr=0x...
 *
 * then waits until RELEASE_FILE exists (or SECONDS pass, default 300, so
 * that nothing sleeps forever), resolves the faults with UFFDIO_COPY of a
 * pattern, waits for mlock() to return and checks the pattern:
 *
 *	released mlock=0 errors=0 waited_ms=N
 *
 * Exit status 0 when mlock() succeeded and the data is right, 1 if not,
 * 2 if the set-up failed (e.g. no userfaultfd).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG	4096UL

static char *region;
static long npages = 4;
static volatile int mlock_ret = -1, mlock_errno, mlock_done;
static volatile pid_t stall_tid;

static void die(const char *what)
{
	fprintf(stderr, "uffdstall: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *mlock_thread(void *arg)
{
	(void)arg;
	stall_tid = (pid_t)syscall(SYS_gettid);
	mlock_ret = mlock(region, npages * PG);
	mlock_errno = errno;
	mlock_done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_copy copy;
	const char *release = NULL;
	long seconds = 300, i, errors = 0;
	struct uffd_msg msg;
	struct pollfd pfd;
	uint64_t t0, deadline;
	pthread_t tid;
	char *src;
	int uffd, c;

	while ((c = getopt(argc, argv, "r:t:p:")) != -1) {
		switch (c) {
		case 'r':
			release = optarg;
			break;
		case 't':
			seconds = atol(optarg);
			break;
		case 'p':
			npages = atol(optarg);
			break;
		default: return 2;
		}
	}
	if (npages < 1)
		npages = 1;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		die("userfaultfd");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	region = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		die("mmap");
	reg.range.start = (uintptr_t)region;
	reg.range.len = npages * PG;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");

	if (pthread_create(&tid, NULL, mlock_thread, NULL))
		die("pthread_create");
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 30000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg)) {
		fprintf(stderr, "uffdstall: no fault within 30 s (mlock returned %d)\n",
			mlock_ret);
		return 2;
	}
	if (msg.event != UFFD_EVENT_PAGEFAULT) {
		fprintf(stderr, "uffdstall: unexpected event %u\n", msg.event);
		return 2;
	}
	printf("stalled pid=%d tid=%d addr=0x%llx\n", getpid(), stall_tid,
	       (unsigned long long)msg.arg.pagefault.address);
	fflush(stdout);

	t0 = now_ms();
	deadline = t0 + (uint64_t)seconds * 1000;
	while (now_ms() < deadline && !(release && access(release, F_OK) == 0))
		usleep(20000);

	/* Fill the whole range: the faulting page and the ones after it. */
	src = aligned_alloc(PG, npages * PG);
	if (!src)
		die("aligned_alloc");
	for (i = 0; i < npages; i++)
		memset(src + i * PG, 'a' + i % 26, PG);
	copy.dst = (uintptr_t)region;
	copy.src = (uintptr_t)src;
	copy.len = npages * PG;
	copy.mode = 0;
	copy.copy = 0;
	if (ioctl(uffd, UFFDIO_COPY, &copy) && errno != EEXIST)
		die("UFFDIO_COPY");
	pthread_join(tid, NULL);
	for (i = 0; i < npages; i++)
		errors += region[i * PG] != 'a' + i % 26 ||
			  region[i * PG + PG - 1] != 'a' + i % 26;
	printf("released mlock=%d%s%s errors=%ld waited_ms=%llu\n", mlock_ret,
	       mlock_ret ? " errno=" : "", mlock_ret ? strerror(mlock_errno) : "",
	       errors, (unsigned long long)(now_ms() - t0));
	return mlock_ret || errors ? 1 : 0;
}
