// SPDX-License-Identifier: GPL-2.0
/*
 * thpscan - an mm whose collapsible region comes late, for the
 * khugepaged_scan fix.
 *
 *   thpscan [-n VMAS] [-c MB] [-r MB] [-w WRITERS] [-s USECS] [-p CPU]
 *           [-t SECS] [-d MS]
 *
 * Lays out, from low to high addresses (fixed, 1 TiB up):
 *   VMAS one-page anonymous VMAs that cannot merge (alternating
 *	PROT_READ and PROT_READ|PROT_WRITE), none of them THP-eligible;
 *   a "cold" MADV_HUGEPAGE region of -c MB (default 0): every page
 *	present, then made old with MADV_COLD, so khugepaged scans all its
 *	PTEs and does not collapse it (no referenced page): it costs scan
 *	budget on every pass;
 *   the late region of -r MB (default 4): small pages filled with a
 *	pattern, then MADV_HUGEPAGE, for khugepaged to collapse.
 * WRITERS threads mmap and munmap one page in a loop meanwhile (mmap_lock
 * writers in the same mm), sleeping USECS between two (default 0).  -p
 * pins the process to one CPU (pin khugepaged there too, and a writer
 * that wakes up preempts the nice-19 khugepaged at once and queues on
 * its mmap_lock, whatever the hypervisor's vCPU scheduling).  Waits until every PMD of the late region is a
 * THP (/proc/kpageflags), at most SECS seconds (default 120), or with -d
 * runs MS milliseconds and exits without waiting.  Then, writers still
 * running (so khugepaged sees no quiet mm before the exit), checks the
 * pattern and prints one line:
 *
 *   collapsed=0|1 pmds=HUGE/TOTAL ms=T full_scans=F anon_huge_kb=K
 *   errors=E vmas=N writer_ops=W
 *
 * full_scans is the change of khugepaged's full_scans counter, anon_huge_kb
 * AnonHugePages from /proc/self/smaps_rollup.  Exit status: 0 collapsed
 * (or -d) with the data intact, 1 not collapsed in time, 2 data changed
 * or setup failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG		4096UL
#define PMD		(2UL << 20)
#define BASE		(1UL << 40)
#define KPF_THP		22
#define FULL_SCANS	"/sys/kernel/mm/transparent_hugepage/khugepaged/full_scans"

static long opt_vmas = 100000, opt_cold_mb, opt_late_mb = 4, opt_writers;
static long opt_secs = 120, opt_run_ms = -1, opt_sleep_us, opt_cpu = -1;
static atomic_long writer_ops;
static atomic_int stop;

static void die(const char *what)
{
	fprintf(stderr, "thpscan: %s: %s\n", what, strerror(errno));
	exit(2);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return atol(buf);
}

static void raise_max_map_count(long need)
{
	const char *path = "/proc/sys/vm/max_map_count";
	char buf[32];
	int fd;

	if (read_long(path) >= need)
		return;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		die("open max_map_count");
	snprintf(buf, sizeof(buf), "%ld\n", need);
	if (write(fd, buf, strlen(buf)) < 0)
		die("raise max_map_count");
	close(fd);
}

static char *map_fixed(unsigned long addr, unsigned long len, int prot)
{
	void *p = mmap((void *)addr, len, prot,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* VMAS one-page VMAs at BASE: one mapping split by mprotect. */
static unsigned long map_small_vmas(void)
{
	char *p = map_fixed(BASE, opt_vmas * PG, PROT_READ | PROT_WRITE);
	long i;

	for (i = 1; i < opt_vmas; i += 2)
		if (mprotect(p + i * PG, PG, PROT_READ))
			die("mprotect");
	return BASE + opt_vmas * PG;
}

/* Small pages: populate with THP off for the range, then allow it. */
static char *map_region(unsigned long addr, long mb, int cold)
{
	unsigned long len = mb << 20, i;
	char *p = map_fixed(addr, len, PROT_READ | PROT_WRITE);

	if (madvise(p, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	for (i = 0; i < len; i += PG)
		*(uint64_t *)(p + i) = (addr + i) ^ 0x5a5a5a5a5a5a5a5aULL;
	if (cold && madvise(p, len, MADV_COLD))
		die("madvise(MADV_COLD)");
	if (madvise(p, len, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	return p;
}

static long check_region(const char *p, long mb)
{
	unsigned long len = mb << 20, i, addr = (unsigned long)p;
	long bad = 0;

	for (i = 0; i < len; i += PG)
		bad += *(const uint64_t *)(p + i) !=
		       ((addr + i) ^ 0x5a5a5a5a5a5a5a5aULL);
	return bad;
}

/* PMDs of [p, p + mb MiB) mapped by a THP, from pagemap and kpageflags. */
static long huge_pmds(const char *p, long mb)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kf = open("/proc/kpageflags", O_RDONLY);
	unsigned long i, n = (mb << 20) / PMD;
	uint64_t ent, flags;
	long huge = 0;

	if (pm < 0 || kf < 0)
		die("open pagemap/kpageflags");
	for (i = 0; i < n; i++) {
		unsigned long va = (unsigned long)p + i * PMD;

		if (pread(pm, &ent, 8, va / PG * 8) != 8)
			die("read pagemap");
		if (!(ent >> 63) || !(ent & ((1ULL << 55) - 1)))
			continue;
		if (pread(kf, &flags, 8, (ent & ((1ULL << 55) - 1)) * 8) != 8)
			die("read kpageflags");
		huge += (flags >> KPF_THP) & 1;
	}
	close(pm);
	close(kf);
	return huge;
}

static long anon_huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void *writer(void *arg)
{
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		void *p = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("writer mmap");
		*(volatile char *)p = 1;
		munmap(p, PG);
		atomic_fetch_add_explicit(&writer_ops, 1, memory_order_relaxed);
		if (opt_sleep_us)
			usleep(opt_sleep_us);
	}
	return arg;
}

int main(int argc, char **argv)
{
	long start, scans0, scans, total, huge = 0, errors, ms, kb;
	unsigned long next;
	pthread_t *tids;
	char *late;
	int c, i;

	while ((c = getopt(argc, argv, "n:c:r:w:s:p:t:d:")) != -1) {
		switch (c) {
		case 'n':
			opt_vmas = atol(optarg);
			break;
		case 'c':
			opt_cold_mb = atol(optarg);
			break;
		case 'r':
			opt_late_mb = atol(optarg);
			break;
		case 'w':
			opt_writers = atol(optarg);
			break;
		case 's':
			opt_sleep_us = atol(optarg);
			break;
		case 'p':
			opt_cpu = atol(optarg);
			break;
		case 't':
			opt_secs = atol(optarg);
			break;
		case 'd':
			opt_run_ms = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: thpscan [-n VMAS] [-c MB] [-r MB] [-w WRITERS] [-s USECS] [-p CPU] [-t SECS] [-d MS]\n");
			return 2;
		}
	}
	if (opt_vmas < 0 || opt_cold_mb < 0 || opt_late_mb < 2 ||
	    opt_late_mb % 2) {
		fprintf(stderr, "thpscan: sizes must be >= 0, -r even and >= 2\n");
		return 2;
	}

	if (opt_cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(opt_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity");
	}
	raise_max_map_count(opt_vmas + 10000);
	next = (map_small_vmas() + 2 * PMD) & ~(PMD - 1);

	/* Writers run before khugepaged knows this mm, until it is done. */
	tids = calloc(opt_writers + 1, sizeof(*tids));
	for (i = 0; i < opt_writers; i++)
		if (pthread_create(&tids[i], NULL, writer, NULL))
			die("pthread_create");
	if (opt_cold_mb) {
		map_region(next, opt_cold_mb, 1);
		next += (opt_cold_mb << 20) + PMD;
	}

	scans0 = read_long(FULL_SCANS);
	start = now_ms();
	late = map_region(next, opt_late_mb, 0);
	total = (opt_late_mb << 20) / PMD;
	for (;;) {
		huge = huge_pmds(late, opt_late_mb);
		if (opt_run_ms >= 0 ? now_ms() - start >= opt_run_ms :
		    huge == total || now_ms() - start >= opt_secs * 1000)
			break;
		usleep(opt_run_ms >= 0 ? 10000 : 50000);
	}
	ms = now_ms() - start;
	scans = read_long(FULL_SCANS) - scans0;
	errors = check_region(late, opt_late_mb);
	kb = anon_huge_kb();
	atomic_store(&stop, 1);
	for (i = 0; i < opt_writers; i++)
		pthread_join(tids[i], NULL);
	printf("collapsed=%d pmds=%ld/%ld ms=%ld full_scans=%ld anon_huge_kb=%ld errors=%ld vmas=%ld writer_ops=%ld\n",
	       huge == total, huge, total, ms, scans, kb, errors, opt_vmas,
	       atomic_load(&writer_ops));
	fflush(stdout);
	if (errors)
		return 2;
	return opt_run_ms >= 0 || huge == total ? 0 : 1;
}
