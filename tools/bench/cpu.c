// SPDX-License-Identifier: MIT
#include "tools/bench/cpu.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double ticks_per_second(void)
{
	long t = sysconf(_SC_CLK_TCK);

	return t > 0 ? (double)t : 100.0;
}

int cpu_process_seconds(pid_t pid, double *out)
{
	struct timespec ts;
	clockid_t clock;
	int ret = clock_getcpuclockid(pid, &clock);

	if (ret)
		return -ret;
	if (clock_gettime(clock, &ts) < 0)
		return -errno;
	*out = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return 0;
}

int cpu_host_seconds(double *busy, double *stolen)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user,
		   &nice, &sys, &idle, &iowait, &irq, &softirq, &steal);
	fclose(f);
	if (n != 8)
		return -EINVAL;
	*busy = (double)(user + nice + sys + irq + softirq + steal) /
		ticks_per_second();
	*stolen = (double)steal / ticks_per_second();
	return 0;
}

double cpu_host_resolution(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	return (6.0 + 2.0 * (double)(ncpu > 0 ? ncpu : 1)) / ticks_per_second();
}
