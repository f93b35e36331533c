/* SPDX-License-Identifier: MIT */
/* What a process holds, from /proc: memory, open files, threads. */
#ifndef BENCH_PROCINFO_H
#define BENCH_PROCINFO_H

#include <stdint.h>
#include <sys/types.h>

/*
 * rss_mib splits into the process's own memory (anonymous: its heap and
 * stacks) and mapped files and shared memory; under xensim the latter
 * holds the simulated domains' state and memory that the fake grant and
 * event-channel libraries map, which under Xen would be grant mappings.
 */
struct proc_usage {
	double rss_mib; /* VmRSS */
	double anon_mib; /* RssAnon */
	double shared_mib; /* RssFile + RssShmem */
	unsigned int fds; /* entries in /proc/PID/fd */
	unsigned int threads;
	unsigned long nofile_limit; /* its soft RLIMIT_NOFILE */
};

/* -errno when @pid is gone or /proc cannot be read. */
int proc_usage_of(pid_t pid, struct proc_usage *out);

/*
 * @pid's voluntary context switches (its sleeps), summed over its threads
 * (/proc/PID/task/TID/status); -errno when it is gone. A thread that
 * ended took its count along.
 */
int proc_voluntary_switches(pid_t pid, uint64_t *out);

#endif /* BENCH_PROCINFO_H */
