/* SPDX-License-Identifier: MIT */
/*
 * The NBD arm's servers: one nbdkit per guest image, its file plugin on a
 * unix socket in the work directory, so that blkbackd reaches the same
 * image through its NBD backend (libblk/backend-nbd.c) as the blkbackd arm
 * reaches it as a file. The ratio of the two is what NBD costs.
 */
#ifndef BENCH_NBDSERVE_H
#define BENCH_NBDSERVE_H

#include <stddef.h>
#include <sys/types.h>

struct nbd_server {
	pid_t pid; /* 0: not running */
	char sock[108]; /* its unix socket, next to the image */
	char uri[160]; /* nbd+unix:///?socket=... */
};

/* Whether nbdkit can be run; why not in @why. */
int nbdserve_available(char *why, size_t why_len);

/*
 * Serve @image as @srv, from a socket next to it; returns once the socket
 * accepts connections. The server is registered for cleanup.
 */
int nbdserve_start(struct nbd_server *srv, const char *image, char *why,
		   size_t why_len);
/* Stop it and wait for it. */
void nbdserve_stop(struct nbd_server *srv);

#endif /* BENCH_NBDSERVE_H */
