/* SPDX-License-Identifier: MIT */
/*
 * blkback-bench --idle-guests: plug many idle simulated guests into the one
 * daemon of the blkbackd arm and measure what they cost it: the time to
 * attach them all, and the daemon's memory, open files and threads with
 * them attached. One extra process (tools/xensim/idle-guests.h) plays all
 * their frontends, so that a thousand guests fit a small machine.
 *
 * Everything here runs in the benchmark's main thread.
 */
#ifndef BENCH_IDLE_H
#define BENCH_IDLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tools/bench/results.h"
#include "tools/bench/xenhost.h"

struct idle_set {
	unsigned int n;
	uint32_t *domids;
	pid_t server; /* the process playing their frontends */
	int fd; /* its socket: reports in, "close them" out (idle.c) */
};

/* Make @n sparse 1 MiB images for idle guests in @workdir (once). */
int idle_images_create(const char *workdir, unsigned int n, char *why,
		       size_t why_len);
void idle_images_free(void);

/*
 * Plug @fig->guests idle guests into @h's daemon, connect their frontends
 * and fill the rest of @fig. On failure everything is undone and
 * fig->error/note say why.
 */
int idle_attach(struct xenhost *h, struct idle_set *set,
		struct idle_figures *fig);
/* Close the frontends and unplug; fills fig->detach_seconds. */
int idle_detach(struct xenhost *h, struct idle_set *set,
		struct idle_figures *fig);
/*
 * Stop the frontend server without detaching, for a host about to be
 * stopped anyway: detaching a thousand guests takes longer than attaching
 * them.
 */
void idle_abandon(struct idle_set *set);

/*
 * Raise this process's soft open-file limit to its hard limit (the daemon,
 * xenstored and the frontend server inherit it) and say so on stderr;
 * warn when even that is below what @idle_guests likely need.
 */
void idle_raise_nofile(unsigned int idle_guests);

#endif /* BENCH_IDLE_H */
