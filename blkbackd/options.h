/* SPDX-License-Identifier: MIT */
/*
 * Command-line options.
 */
#ifndef BLKBACKD_OPTIONS_H
#define BLKBACKD_OPTIONS_H

#include <stdbool.h>

#include "libblk/image.h"

struct options {
	unsigned int workers; /* 0: one per online CPU */
	enum blk_cache_mode cache;
	int domid; /* -1: ask xenstore */
	int log_level;
	unsigned int max_indirect_segments; /* 0: no indirect requests */
	unsigned int max_ring_order;
	unsigned int max_queues; /* 0: one per worker */
	bool persistent; /* offer persistent grants */
	unsigned int poll_us; /* busy-poll window cap, 0: never poll */
	unsigned int max_pgrants; /* persistent grants per ring */
	unsigned int ring_buffer_mib; /* bounce memory per ring */
	unsigned int buffer_mib; /* bounce memory for all rings together */
	bool stage_timing; /* time each request's stages */
	const char *state_dir; /* ring journals; NULL: none */
	const char *control_socket; /* NULL: <state_dir>/control, if any */
};

/*
 * Parse argv. Returns 0 to run, 1 when the program should exit
 * successfully (--help, --version), -1 on a usage error (already
 * reported).
 */
int options_parse(struct options *opts, int argc, char **argv);

#endif /* BLKBACKD_OPTIONS_H */
