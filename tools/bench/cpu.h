/* SPDX-License-Identifier: MIT */
/*
 * CPU time: one process (all its threads, to the nanosecond), or the
 * whole host (/proc/stat, in ticks). Any thread may call these.
 */
#ifndef BENCH_CPU_H
#define BENCH_CPU_H

#include <sys/types.h>

/*
 * The CPU time process @pid has used (all its threads, living and ended),
 * in seconds, from its CPU-time clock: exact, where /proc/PID/stat counts
 * whole ticks of 10 ms, which a daemon serving a short run at 80,000 IOPS
 * may not fill once.
 */
int cpu_process_seconds(pid_t pid, double *out);
/*
 * CPU seconds the host spent busy (user, nice, system, irq, softirq,
 * steal) summed over all CPUs since boot, and the part of it that was
 * steal (time the hypervisor gave this VM's CPUs to someone else).
 */
int cpu_host_seconds(double *busy, double *steal);
/*
 * How far the difference of two cpu_host_seconds() busy readings may be
 * from the CPU time really spent in between, in seconds: /proc/stat
 * prints each of its six busy counters in whole ticks (each reading up to
 * a tick short), and the kernel charges a whole tick to what a CPU is
 * doing when its timer fires (up to a tick per CPU off at each end). A
 * figure derived from it that is no larger than this is not measured.
 */
double cpu_host_resolution(void);

#endif /* BENCH_CPU_H */
