/* SPDX-License-Identifier: MIT */
/*
 * Many idle simulated guests served by one process: for each domain, a
 * blkfront (frontend.h) that does the whole xenbus handshake with the
 * backend and then only keeps its ring granted and its event channel
 * bound, issuing no I/O. This is what a host with hundreds of guests whose
 * disks sit unused costs the backend, without a process per guest.
 *
 * The domains must exist and have their disk plugged (toolstack.h) before
 * idle_guests_connect(); they need IDLE_GUEST_PAGES pages of memory each.
 * Connect and close run their own threads; the handle is for one thread.
 */
#ifndef XENSIM_IDLE_GUESTS_H
#define XENSIM_IDLE_GUESTS_H

#include <stddef.h>
#include <stdint.h>

/* Guest pages an idle frontend needs: ring, raw indirect pages, one page. */
#define IDLE_GUEST_PAGES 16u

struct idle_guests_config {
	const uint32_t *domids; /* copied */
	unsigned int n;
	uint32_t devid;
	unsigned int nr_threads; /* handshakes in parallel, at least 1 */
	int timeout_ms; /* per handshake step, as frontend_config */
	/* Called after each frontend connects, from a connecting thread. */
	void (*connected)(void *arg);
	void *arg;
};

struct idle_guests;

/*
 * Connect a frontend to vbd @devid of every domain. All or nothing: on the
 * first failure the ones connected are closed again and -errno returned
 * with the domain and the reason in @why.
 */
int idle_guests_connect(const struct idle_guests_config *cfg,
			struct idle_guests **out, char *why, size_t why_len);
/*
 * Close every frontend as blkfront does (state 5, wait for the backend,
 * state 6) and free @ig. Returns the first error, -errno, with the domain
 * in @why.
 */
int idle_guests_close(struct idle_guests *ig, char *why, size_t why_len);

#endif /* XENSIM_IDLE_GUESTS_H */
