// SPDX-License-Identifier: MIT
#include "tools/bench/rbdserve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"

/* ceph-cluster's exit status when a Ceph package is missing. */
#define EXIT_CANNOT_RUN 77
/* The OSD keeps every object in memory: the images, and room to spare. */
#define MEMSTORE_MIN_MIB 512u
#define MEMSTORE_SLACK_MIB 256u
/* A generous bound on one image's import, which has none of its own. */
#define IMPORT_TIMEOUT_S "300"

/* The last line of the commands' log: why the last one failed. */
static void last_words(const struct rbd_store *st, const char *what, char *why,
		       size_t why_len)
{
	char line[512] = "", last[512] = "";
	FILE *f = fopen(st->log, "r");

	while (f && fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			snprintf(last, sizeof(last), "%s", line);
	if (f)
		fclose(f);
	last[strcspn(last, "\n")] = 0;
	snprintf(why, why_len, "%s: %s", what, last[0] ? last : "no reason");
}

static int start_cluster(struct rbd_store *st, const struct bench_images *im,
			 char *why, size_t why_len)
{
	uint64_t mib = im->n * (im->bytes >> 20) + MEMSTORE_SLACK_MIB;
	char size[32];
	char *argv[] = { st->script, "start", st->dir, size, NULL };
	int ret;

	if (mib < MEMSTORE_MIN_MIB)
		mib = MEMSTORE_MIN_MIB;
	snprintf(size, sizeof(size), "%llu", (unsigned long long)mib);
	cleanup_set_stopper(CLEANUP_CEPH, st->script, st->dir);
	ret = cleanup_run_helper(argv, st->log);
	if (ret == 0)
		return 0;
	last_words(st, "the Ceph cluster did not start", why, why_len);
	cleanup_forget_stopper(CLEANUP_CEPH);
	st->dir[0] = 0;
	return ret == EXIT_CANNOT_RUN ? -ENOENT : -EIO;
}

/* Image @i of @im into the pool, as bench-I. */
static int import_image(struct rbd_store *st, const struct bench_images *im,
			unsigned int i, char *why, size_t why_len)
{
	char conf[PATH_MAX + 16], name[32];
	/*
	 * Under timeout(1): the rbd tool waits for ever for an OSD that does
	 * not answer (its operations have no time limit by default).
	 */
	char *argv[] = {
		"timeout", IMPORT_TIMEOUT_S, "rbd",	   "-c", conf,
		"import",  "--no-progress",  im->paths[i], name, NULL,
	};
	int ret;

	snprintf(conf, sizeof(conf), "%s/ceph.conf", st->dir);
	snprintf(name, sizeof(name), "rbd/bench-%u", i);
	ret = cleanup_run_helper(argv, st->log);
	if (ret != 0) {
		last_words(st, "rbd import failed", why, why_len);
		return -EIO;
	}
	if (asprintf(&st->targets[i], "rbd:%s:conf=%s", name, conf) < 0) {
		st->targets[i] = NULL;
		return -ENOMEM;
	}
	return 0;
}

int rbdserve_start(struct rbd_store *st, const char *script,
		   const char *workdir, const struct bench_images *im,
		   char *why, size_t why_len)
{
	int ret = 0;

	memset(st, 0, sizeof(*st));
	if (access(script, X_OK) < 0) {
		snprintf(why, why_len,
			 "no ceph-cluster at %s (build tools/ceph)", script);
		return -ENOENT;
	}
	snprintf(st->script, sizeof(st->script), "%s", script);
	snprintf(st->dir, sizeof(st->dir), "%s/ceph", workdir);
	snprintf(st->log, sizeof(st->log), "%s/ceph-cluster.log", workdir);
	cleanup_add_file(st->log);
	st->targets = calloc(im->n, sizeof(*st->targets));
	if (!st->targets)
		return -ENOMEM;
	st->n = im->n;
	ret = start_cluster(st, im, why, why_len);
	for (unsigned int i = 0; !ret && i < im->n; i++)
		ret = import_image(st, im, i, why, why_len);
	if (ret < 0)
		rbdserve_stop(st);
	return ret;
}

void rbdserve_stop(struct rbd_store *st)
{
	char *argv[] = { st->script, "stop", st->dir, NULL };

	if (st->dir[0]) {
		cleanup_run_helper(argv, st->log);
		cleanup_forget_stopper(CLEANUP_CEPH);
		st->dir[0] = 0;
	}
	for (unsigned int i = 0; st->targets && i < st->n; i++)
		free(st->targets[i]);
	free(st->targets);
	st->targets = NULL;
	st->n = 0;
}
