// SPDX-License-Identifier: MIT
#include "tools/bench/cpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static double ticks_per_second(void)
{
	long t = sysconf(_SC_CLK_TCK);

	return t > 0 ? (double)t : 100.0;
}

int cpu_process_seconds(pid_t pid, double *out)
{
	char path[64], buf[1024], *p;
	unsigned long long utime, stime;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	/* The command name may hold spaces and ')': skip to the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* Fields 3..15 follow: state ... utime(14) stime(15). */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &utime, &stime) != 2)
		return -EINVAL;
	*out = (double)(utime + stime) / ticks_per_second();
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
