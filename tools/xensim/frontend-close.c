// SPDX-License-Identifier: MIT
/*
 * The simulated blkfront's close (frontend.h, frontend-internal.h): the
 * closing handshake as blkfront does it, then every grant revoked (the
 * backend may still map some for a while), the ports closed and the
 * memory freed. One thread, once no queue is in use.
 */
#include "tools/xensim/frontend-internal.h"

#include <stdlib.h>
#include <xenstore.h>

#include "libblk/xenbus.h"
#include "tools/xensim/xensim.h"

static int end_queue_grants(struct frontend *fe, struct fe_queue *fq,
			    int64_t deadline)
{
	unsigned int ind =
		fe->disk.persistent ? fq->nr_slots * fe->ind_pages_per_req : 0;
	int ret, first = 0;

	for (unsigned int i = 0; fq->slots && i < fq->nr_slots; i++) {
		if (fq->slots[i].busy)
			fe_release_slot(fq, &fq->slots[i]);
	}
	ret = guest_ring_end_grants(&fq->gr, deadline);
	if (ret < 0 && !first)
		first = ret;
	for (unsigned int i = 0; fq->ind_grefs && i < ind; i++) {
		ret = guest_grant_end(fe->dom, fq->ind_grefs[i], deadline);
		if (ret < 0 && !first)
			first = ret;
		fq->ind_grefs[i] = 0;
	}
	for (unsigned int i = 0; i < RAW_IND_PAGES; i++) {
		ret = guest_grant_end(fe->dom, fq->raw_grefs[i], deadline);
		if (ret < 0 && !first)
			first = ret;
		fq->raw_grefs[i] = 0;
	}
	return first;
}

/* Revoke every grant, retrying while the backend still maps one. */
static int end_grants(struct frontend *fe, int timeout_ms)
{
	int64_t deadline = guest_ring_now_ms() + timeout_ms;
	int ret, first = 0;

	for (uint32_t i = 0; i < fe->nr_data_granted; i++) {
		ret = guest_grant_end(fe->dom, fe->data_grefs[i], deadline);
		if (ret < 0 && !first)
			first = ret;
	}
	fe->nr_data_granted = 0;
	for (unsigned int q = 0; q < fe->nr_queues_open; q++) {
		ret = end_queue_grants(fe, &fe->queue[q], deadline);
		if (ret < 0 && !first)
			first = ret;
	}
	return first;
}

int frontend_close(struct frontend *fe)
{
	int ret, first = 0;

	ret = fe_write_state(fe, XenbusStateClosing);
	if (ret < 0)
		first = ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XENBUS_STATE_BIT(XenbusStateClosing) |
					XENBUS_STATE_BIT(XenbusStateClosed),
				fe->cfg.timeout_ms, NULL);
	if (ret < 0 && !first)
		first = ret;
	ret = fe_write_state(fe, XenbusStateClosed);
	if (ret < 0 && !first)
		first = ret;
	ret = xenbus_wait_state(fe->xs, fe->disk.backend_path,
				XENBUS_STATE_BIT(XenbusStateClosed),
				fe->cfg.timeout_ms, NULL);
	if (ret < 0 && !first)
		first = ret;
	ret = end_grants(fe, fe->cfg.timeout_ms);
	if (ret < 0 && !first)
		first = ret;
	for (unsigned int q = 0; q < fe->nr_queues_open; q++) {
		guest_ring_close_port(&fe->queue[q].gr);
	}
	frontend_abandon(fe);
	return first;
}

void frontend_abandon(struct frontend *fe)
{
	for (unsigned int q = 0; q < fe->nr_queues_open; q++) {
		struct fe_queue *fq = &fe->queue[q];

		if (fq->dom)
			xensim_domain_close(fq->dom);
		for (unsigned int i = 0; fq->slots && i < fq->nr_slots; i++)
			free(fq->slots[i].grefs);
		free(fq->slots);
		free(fq->ind_grefs);
	}
	if (fe->dom)
		xensim_domain_close(fe->dom);
	if (fe->xs)
		xs_close(fe->xs);
	free(fe->data_grefs);
	free(fe);
}
