// SPDX-License-Identifier: GPL-2.0
/*
 * toggler - a toggle storm on sysfs switches (t-72-toggle-storm).
 *
 *   toggler [-n TOGGLES] [-t THREADS] [-f FINAL] [-c COUNTER]... SWITCH...
 *
 * THREADS threads (default 2) write "1\n" and "0\n" in turn to every
 * SWITCH, TOGGLES writes per switch in all (shared out between the
 * threads, which start on opposite values so they fight), and read each
 * switch back after every write: it must read "0\n" or "1\n".  Every
 * 64 writes a thread reopens its files.  Meanwhile one more thread reads
 * every COUNTER file in a loop; a decimal counter must never go down.
 * At the end FINAL (default 0) is written to every switch.
 *
 * Prints "toggles=N write_errors=E bad_reads=B counter_reads=R
 * decreases=D", plus a line per problem (the first few), and exits 1 if
 * any of E, B or D is not zero, 2 on a setup failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILES	64
#define MAX_THREADS	16
#define REOPEN_EVERY	64
#define REPORT_MAX	5

static const char *switches[MAX_FILES], *counters[MAX_FILES];
static int nswitches, ncounters;
static long opt_toggles = 10000, opt_threads = 2;
static const char *opt_final = "0";

static atomic_long write_errors, bad_reads, counter_reads, decreases;
static atomic_int reported, done;

static void report(const char *fmt, const char *path, long a, long b)
{
	if (atomic_fetch_add(&reported, 1) < REPORT_MAX) {
		fprintf(stderr, fmt, path, a, b);
		fputc('\n', stderr);
	}
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "toggler: open %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return fd;
}

struct worker {
	long id;
	long writes;	/* per switch */
};

static void *toggle_thread(void *arg)
{
	struct worker *w = arg;
	int wfd[MAX_FILES], rfd[MAX_FILES], i;
	char buf[16];
	long n;

	for (i = 0; i < nswitches; i++) {
		wfd[i] = open_or_die(switches[i], O_WRONLY);
		rfd[i] = open_or_die(switches[i], O_RDONLY);
	}
	for (n = 0; n < w->writes; n++) {
		const char *val = (n + w->id) % 2 ? "0\n" : "1\n";

		for (i = 0; i < nswitches; i++) {
			ssize_t r;

			if (n && n % REOPEN_EVERY == 0) {
				close(wfd[i]);
				close(rfd[i]);
				wfd[i] = open_or_die(switches[i], O_WRONLY);
				rfd[i] = open_or_die(switches[i], O_RDONLY);
			}
			r = write(wfd[i], val, 2);
			if (r != 2) {
				atomic_fetch_add(&write_errors, 1);
				report("write %s: returned %ld errno %ld",
				       switches[i], (long)r, r < 0 ? errno : 0);
			}
			r = pread(rfd[i], buf, sizeof(buf) - 1, 0);
			if (r != 2 || buf[1] != '\n' ||
			    (buf[0] != '0' && buf[0] != '1')) {
				atomic_fetch_add(&bad_reads, 1);
				report("read %s: returned %ld (first byte %ld)",
				       switches[i], (long)r, r > 0 ? buf[0] : -1);
			}
		}
	}
	for (i = 0; i < nswitches; i++) {
		close(wfd[i]);
		close(rfd[i]);
	}
	return NULL;
}

static int read_u64(int fd, uint64_t *v)
{
	char buf[32], *end;
	ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);

	if (r <= 0)
		return -1;
	buf[r] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return errno || end == buf || *end != '\n' ? -1 : 0;
}

static void *counter_thread(void *arg)
{
	uint64_t last[MAX_FILES], v;
	int fd[MAX_FILES], i;

	(void)arg;
	for (i = 0; i < ncounters; i++) {
		fd[i] = open_or_die(counters[i], O_RDONLY);
		if (read_u64(fd[i], &last[i])) {
			atomic_fetch_add(&bad_reads, 1);
			report("read %s: not a decimal u64 (%ld %ld)", counters[i], 0, 0);
			last[i] = 0;
		}
	}
	while (!atomic_load(&done)) {
		for (i = 0; i < ncounters; i++) {
			if (read_u64(fd[i], &v)) {
				atomic_fetch_add(&bad_reads, 1);
				report("read %s: not a decimal u64 (%ld %ld)",
				       counters[i], 0, 0);
				continue;
			}
			atomic_fetch_add(&counter_reads, 1);
			if (v < last[i]) {
				atomic_fetch_add(&decreases, 1);
				report("counter %s went down from %ld to %ld",
				       counters[i], (long)last[i], (long)v);
			}
			last[i] = v;
		}
		usleep(1000);
	}
	for (i = 0; i < ncounters; i++)
		close(fd[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS], ctid;
	long t, total = 0;
	char final[4];
	int c, i, fd;

	while ((c = getopt(argc, argv, "n:t:f:c:")) != -1) {
		switch (c) {
		case 'n':
			opt_toggles = atol(optarg);
			break;
		case 't':
			opt_threads = atol(optarg);
			break;
		case 'f':
			opt_final = optarg;
			break;
		case 'c':
			if (ncounters == MAX_FILES)
				return 2;
			counters[ncounters++] = optarg;
			break;
		default: return 2;
		}
	}
	for (; optind < argc && nswitches < MAX_FILES; optind++)
		switches[nswitches++] = argv[optind];
	if (!nswitches || opt_threads < 1 || opt_threads > MAX_THREADS ||
	    opt_toggles < 1) {
		fprintf(stderr, "usage: toggler [-n TOGGLES] [-t THREADS] [-f FINAL] [-c COUNTER]... SWITCH...\n");
		return 2;
	}

	if (pthread_create(&ctid, NULL, counter_thread, NULL))
		return 2;
	for (t = 0; t < opt_threads; t++) {
		w[t].id = t;
		w[t].writes = opt_toggles / opt_threads +
			      (t < opt_toggles % opt_threads);
		total += w[t].writes;
		if (pthread_create(&tid[t], NULL, toggle_thread, &w[t]))
			return 2;
	}
	for (t = 0; t < opt_threads; t++)
		pthread_join(tid[t], NULL);
	atomic_store(&done, 1);
	pthread_join(ctid, NULL);

	snprintf(final, sizeof(final), "%.1s\n", opt_final);
	for (i = 0; i < nswitches; i++) {
		fd = open_or_die(switches[i], O_WRONLY);
		if (write(fd, final, 2) != 2) {
			atomic_fetch_add(&write_errors, 1);
			report("final write %s: errno %ld (%ld)", switches[i], errno, 0);
		}
		close(fd);
	}
	printf("toggles=%ld write_errors=%ld bad_reads=%ld counter_reads=%ld decreases=%ld\n",
	       total * nswitches, atomic_load(&write_errors),
	       atomic_load(&bad_reads), atomic_load(&counter_reads),
	       atomic_load(&decreases));
	return atomic_load(&write_errors) || atomic_load(&bad_reads) ||
	       atomic_load(&decreases) ? 1 : 0;
}
