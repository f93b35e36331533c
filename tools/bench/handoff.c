// SPDX-License-Identifier: MIT
#include "tools/bench/handoff.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROUND_TRIPS 2000u
#define WARM_UP 100u

struct echo {
	int fd;
	int cpu;
	unsigned int count;
	int error;
};

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * The far end: send back each of the @count messages. On failure it shuts
 * its end, so that the measuring side's recv() ends too.
 */
static void *echo_thread(void *arg)
{
	struct echo *e = arg;
	char byte;

	e->error = pin_self(e->cpu);
	for (unsigned int i = 0; !e->error && i < e->count; i++) {
		if (recv(e->fd, &byte, 1, 0) != 1 ||
		    send(e->fd, &byte, 1, 0) != 1)
			e->error = -EIO;
	}
	if (e->error)
		shutdown(e->fd, SHUT_RDWR);
	return NULL;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The median round trip between this thread on @cpu_a and an echo thread
 * on @cpu_b, in microseconds; -errno when it could not be measured.
 */
static int round_trip(int cpu_a, int cpu_b, double *median)
{
	struct echo e = { .cpu = cpu_b, .count = WARM_UP + ROUND_TRIPS };
	double *rtt = calloc(ROUND_TRIPS, sizeof(*rtt));
	int sv[2], ret;
	pthread_t t;
	char byte = 0;

	if (!rtt)
		return -ENOMEM;
	/* One message per read, as the simulator's datagrams; and unlike a
	 * datagram pair, shutting one end wakes the other. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		ret = -errno;
		free(rtt);
		return ret;
	}
	e.fd = sv[1];
	ret = -pthread_create(&t, NULL, echo_thread, &e);
	if (ret == 0) {
		ret = pin_self(cpu_a);
		for (unsigned int i = 0; ret == 0 && i < e.count; i++) {
			double start = now_us();

			if (send(sv[0], &byte, 1, 0) != 1 ||
			    recv(sv[0], &byte, 1, 0) != 1)
				ret = -EIO;
			else if (i >= WARM_UP)
				rtt[i - WARM_UP] = now_us() - start;
		}
		/* After a failure here the echo waits: wake it to finish. */
		shutdown(sv[0], SHUT_RDWR);
		pthread_join(t, NULL);
		if (e.error && (ret == 0 || ret == -EIO))
			ret = e.error;
	}
	if (ret == 0) {
		qsort(rtt, ROUND_TRIPS, sizeof(*rtt), cmp_double);
		*median = rtt[ROUND_TRIPS / 2];
	}
	close(sv[0]);
	close(sv[1]);
	free(rtt);
	return ret;
}

/* The first two CPUs this process may run on; -1 where there are none. */
static void pick_cpus(int *a, int *b)
{
	cpu_set_t set;

	*a = *b = -1;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (*a < 0) {
			*a = cpu;
		} else {
			*b = cpu;
			return;
		}
	}
}

void handoff_measure(struct handoff_figures *f)
{
	cpu_set_t saved;
	bool restore;
	int ret;

	memset(f, 0, sizeof(*f));
	pick_cpus(&f->cpu_a, &f->cpu_b);
	if (f->cpu_a < 0) {
		snprintf(f->note, sizeof(f->note), "no CPU to run on: %s",
			 strerror(errno));
		return;
	}
	/* The probe pins this thread; the arms must not inherit that. */
	restore = pthread_getaffinity_np(pthread_self(), sizeof(saved),
					 &saved) == 0;
	ret = round_trip(f->cpu_a, f->cpu_a, &f->same_cpu_us);
	f->same_measured = ret == 0;
	if (ret < 0)
		snprintf(f->note, sizeof(f->note), "%s", strerror(-ret));
	if (f->cpu_b < 0) {
		snprintf(f->note, sizeof(f->note),
			 "one CPU allowed: no wake-up crosses CPUs");
	} else {
		ret = round_trip(f->cpu_a, f->cpu_b, &f->cross_cpu_us);
		f->cross_measured = ret == 0;
		if (ret < 0)
			snprintf(f->note, sizeof(f->note), "%s",
				 strerror(-ret));
	}
	if (restore)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
}
