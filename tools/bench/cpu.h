/* SPDX-License-Identifier: MIT */
/* CPU time from /proc: one process (all its threads), or the whole host. */
#ifndef BENCH_CPU_H
#define BENCH_CPU_H

#include <sys/types.h>

/* utime + stime of process @pid, in seconds. */
int cpu_process_seconds(pid_t pid, double *out);
/*
 * CPU seconds the host spent busy (user, nice, system, irq, softirq,
 * steal) summed over all CPUs since boot, and the part of it that was
 * steal (time the hypervisor gave this VM's CPUs to someone else).
 */
int cpu_host_seconds(double *busy, double *steal);

#endif /* BENCH_CPU_H */
