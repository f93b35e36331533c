/* SPDX-License-Identifier: MIT */
/*
 * The RAW and LOOP arms' engine: io_uring with O_DIRECT on a path (an
 * image file, or the /dev/loopN in front of it), buffers registered once.
 */
#ifndef BENCH_ENGINE_URING_H
#define BENCH_ENGINE_URING_H

#include "tools/bench/engine.h"

#include <stddef.h>

/* On failure, @why says what failed. */
int engine_uring_open(const char *path, const struct bench_job *job,
		      struct bench_engine **out, char *why, size_t why_len);

#endif /* BENCH_ENGINE_URING_H */
