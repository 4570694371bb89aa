/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the workloads of mmfixctl ab (/usr/lib/mmfix/workloads):
 * options -t THREADS and -d SECONDS, a start line, and the one number
 * each prints last (what "mmfixctl ab --run CMD --value last" reads).
 */
#ifndef MMFIX_WORKLOAD_H
#define MMFIX_WORKLOAD_H

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PG	4096UL

static long wl_threads = 1;
static double wl_seconds = 10;
static volatile int wl_stop;

static double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wl_die(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(2);
}

static void wl_usage(const char *prog, const char *extra)
{
	fprintf(stderr, "usage: %s [-t THREADS] [-d SECONDS]%s\n", prog, extra);
	exit(2);
}

/* -t and -d; returns the option character of anything else (or -1). */
static int wl_opt(int c, const char *arg)
{
	char *end;

	if (c == 't') {
		wl_threads = strtol(arg, &end, 10);
		return (*end || wl_threads < 1 || wl_threads > 4096) ? '?' : 0;
	}
	if (c == 'd') {
		wl_seconds = strtod(arg, &end);
		return (*end || wl_seconds <= 0) ? '?' : 0;
	}
	return c;
}

/*
 * Runs fn in wl_threads threads for wl_seconds; fn counts its operations
 * into *ops until wl_stop.  Returns the operations per second.
 */
static double wl_run(void *(*fn)(void *))
{
	pthread_t *tid = calloc(wl_threads, sizeof(*tid));
	long *ops = calloc(wl_threads, sizeof(*ops)), i, sum = 0;
	double t0;

	if (!tid || !ops)
		exit(2);
	t0 = wl_now();
	for (i = 0; i < wl_threads; i++)
		if (pthread_create(&tid[i], NULL, fn, &ops[i]))
			exit(2);
	while (wl_now() - t0 < wl_seconds)
		usleep(10000);
	wl_stop = 1;
	for (i = 0; i < wl_threads; i++) {
		pthread_join(tid[i], NULL);
		sum += ops[i];
	}
	return sum / (wl_now() - t0);
}

#endif /* MMFIX_WORKLOAD_H */
