/* SPDX-License-Identifier: MIT */
/*
 * A backend process's system calls, counted: perf's raw_syscalls:sys_enter
 * tracepoint on every thread of the process, counted in the kernel (no
 * tracing of each call, so the daemon runs at its usual speed). Its sleeps
 * are proc_voluntary_switches() (procinfo.h).
 *
 * A counter is started before a run with its events disabled, and
 * enabled and disabled by perf's control pipe exactly when the run
 * starts and ends, so that attaching and detaching guests is not counted.
 * Without perf, or where the kernel has no tracepoints, system calls are
 * not measured (NaN), never guessed.
 */
#ifndef BENCH_SYSCOUNT_H
#define BENCH_SYSCOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct syscount {
	pid_t perf; /* 0: not counting */
	int ctl, ack; /* perf's control and acknowledgement pipes */
	char out[4096]; /* where perf writes its count */
	bool counting;
};

/*
 * Attach a disabled counter to @target (its threads as of now), writing
 * under @dir. -errno (with the reason in @why) when it cannot count.
 */
int syscount_attach(struct syscount *s, pid_t target, const char *dir,
		    char *why, size_t why_len);
/* Start counting (the run starts), then stop (it ended). */
int syscount_enable(struct syscount *s);
int syscount_disable(struct syscount *s);
/*
 * Detach: the system calls made while enabled, or NaN when not
 * measured. Safe on a counter that never attached.
 */
double syscount_finish(struct syscount *s);

#endif /* BENCH_SYSCOUNT_H */
