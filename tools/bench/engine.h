/* SPDX-License-Identifier: MIT */
/*
 * How a guest's operations reach a disk. The job runner (runner.c) is the
 * same for every arm; only the engine underneath differs: io_uring on an
 * image file or a loop device (engine-uring.c), or a blkif ring to
 * blkbackd through the simulated hypervisor (engine-blkif.c).
 *
 * Operations live in slots 0 .. depth-1; each slot owns a buffer of the
 * job's largest operation size. Every function returns 0 or -errno.
 */
#ifndef BENCH_ENGINE_H
#define BENCH_ENGINE_H

#include "tools/bench/job.h"

struct bench_engine;

struct bench_engine_ops {
	/* Queue @op in @slot; it starts no later than the next submit. */
	int (*queue)(struct bench_engine *e, unsigned int slot,
		     const struct bench_op *op);
	int (*submit)(struct bench_engine *e);
	/*
	 * Wait for one queued operation to finish: its slot, and its result
	 * (0, or -errno when the disk failed it).
	 */
	int (*complete)(struct bench_engine *e, unsigned int *slot,
			int *result);
	void (*destroy)(struct bench_engine *e);
};

struct bench_engine {
	const struct bench_engine_ops *ops;
	char why[160]; /* filled when an operation fails */
};

#endif /* BENCH_ENGINE_H */
