/* SPDX-License-Identifier: MIT */
/*
 * Run N guests at once: one forked process per guest, each with its own
 * engine (its own image, loop device or simulated domain). All guests set
 * up first, then start together at a barrier, so each guest's elapsed time
 * and the group's wall time cover the I/O only.
 */
#ifndef BENCH_GUESTS_H
#define BENCH_GUESTS_H

#include <stddef.h>

#include "tools/bench/engine.h"
#include "tools/bench/job.h"
#include "tools/bench/runner.h"

/* Runs in guest @guest's process: open its engine or say why not. */
typedef int (*bench_engine_open_fn)(unsigned int guest, void *arg,
				    const struct bench_job *job,
				    struct bench_engine **out, char *why,
				    size_t why_len);

struct bench_group_hooks {
	/* In the parent, just before the barrier opens and after all end. */
	void (*started)(void *arg);
	void (*finished)(void *arg);
	/* Every half second while the guests run: bytes done of the total. */
	void (*progress)(void *arg, double fraction, unsigned int finished);
	void *arg;
};

struct bench_group {
	unsigned int n;
	double wall_seconds; /* barrier open → last guest finished */
	struct bench_guest_result *res; /* n entries, shared with guests */
};

/*
 * Run @job in @n guests. Returns 0 when every guest completed its job;
 * otherwise -errno with the first failure in @why. bench_group_free()
 * releases @g in both cases.
 */
int bench_group_run(unsigned int n, const struct bench_job *job,
		    bench_engine_open_fn open_engine, void *open_arg,
		    const struct bench_group_hooks *hooks,
		    struct bench_group *g, char *why, size_t why_len);
void bench_group_free(struct bench_group *g);

#endif /* BENCH_GUESTS_H */
