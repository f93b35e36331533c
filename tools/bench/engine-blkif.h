/* SPDX-License-Identifier: MIT */
/*
 * The BLKBACKD arm's engine: this process is a simulated guest (xensim)
 * whose blkfront puts the job's operations on a blkif ring served by
 * blkbackd. Like Linux blkfront without indirect descriptors, it splits an
 * operation into requests of at most 11 pages and queues what does not fit
 * on the 32-slot ring until responses free room. As blkfront does with
 * persistent grants, it grants one fixed pool of 32 x 11 pages and copies
 * the data of each request through them.
 */
#ifndef BENCH_ENGINE_BLKIF_H
#define BENCH_ENGINE_BLKIF_H

#include <stddef.h>
#include <stdint.h>

#include "tools/bench/engine.h"

/* Connect to vbd @devid of simulated domain @domid ($XENSIM_DIR). */
int engine_blkif_open(uint32_t domid, uint32_t devid,
		      const struct bench_job *job, struct bench_engine **out,
		      char *why, size_t why_len);
/* Guest memory the engine needs for @job, in pages (ring included). */
uint32_t engine_blkif_guest_pages(const struct bench_job *job);

#endif /* BENCH_ENGINE_BLKIF_H */
