/* SPDX-License-Identifier: MIT */
/* What a process holds, from /proc: memory, open files, threads. */
#ifndef BENCH_PROCINFO_H
#define BENCH_PROCINFO_H

#include <sys/types.h>

struct proc_usage {
	double rss_mib; /* VmRSS */
	unsigned int fds; /* entries in /proc/PID/fd */
	unsigned int threads;
	unsigned long nofile_limit; /* its soft RLIMIT_NOFILE */
};

/* -errno when @pid is gone or /proc cannot be read. */
int proc_usage_of(pid_t pid, struct proc_usage *out);

#endif /* BENCH_PROCINFO_H */
