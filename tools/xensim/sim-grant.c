// SPDX-License-Identifier: MIT
/*
 * xensim: grant-table entries. The guest side grants and ends access; the
 * hypervisor side pins an entry for a mapping or for the duration of one
 * grant copy. Every check and the pin itself happen in one compare-and-swap
 * on the entry's word, so a guest ending a grant and a peer pinning it
 * cannot both win.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <xen/grant_table.h>

#include "tools/xensim/sim-internal.h"

static int check_grant(uint64_t w, uint32_t caller, bool write)
{
	uint32_t flags = SIM_GNT_FLAGS(w);

	if (!(flags & GTF_permit_access) || (flags & SIM_GTF_RESERVED))
		return GNTST_bad_gntref;
	if (SIM_GNT_PEER(w) != caller)
		return GNTST_permission_denied;
	if (write && (flags & GTF_readonly))
		return GNTST_permission_denied;
	return GNTST_okay;
}

static int pin_entry(struct sim_grant *g, uint32_t caller, bool write,
		     bool as_map)
{
	uint64_t w = atomic_load(&g->word);
	int st;

	for (;;) {
		st = check_grant(w, caller, write);
		if (st)
			return st;
		if ((as_map ? SIM_GNT_MAPS(w) : SIM_GNT_COPIES(w)) == 0xffff)
			return GNTST_no_space;
		if (atomic_compare_exchange_weak(
			    &g->word, &w,
			    w + (as_map ? SIM_GNT_ONE_MAP : SIM_GNT_ONE_COPY)))
			return GNTST_okay;
	}
}

int sim_grant_pin(struct sim_dom *d, uint32_t caller, uint32_t ref, bool write,
		  bool as_map, uint32_t *frame)
{
	struct sim_header *h = &d->sh->hdr;
	uint32_t f;
	int st;

	if (ref >= SIM_NR_GRANTS)
		return GNTST_bad_gntref;
	if (atomic_load(&h->dying))
		return GNTST_bad_domain;
	st = pin_entry(&d->sh->grants[ref], caller, write, as_map);
	if (st)
		return st;
	if (as_map) {
		/* Pairs with destroy: set dying, then look at live_maps. */
		atomic_fetch_add(&h->live_maps, 1);
		if (atomic_load(&h->dying)) {
			sim_grant_unpin(d, ref, true);
			return GNTST_bad_domain;
		}
	}
	/* The frame cannot change while the entry is pinned. */
	f = atomic_load(&d->sh->grants[ref].frame);
	if (f >= h->nr_pages) {
		sim_grant_unpin(d, ref, as_map);
		return GNTST_bad_page;
	}
	*frame = f;
	return GNTST_okay;
}

void sim_grant_unpin(struct sim_dom *d, uint32_t ref, bool as_map)
{
	atomic_fetch_sub(&d->sh->grants[ref].word,
			 as_map ? SIM_GNT_ONE_MAP : SIM_GNT_ONE_COPY);
	if (as_map)
		atomic_fetch_sub(&d->sh->hdr.live_maps, 1);
}

static int publish_grant(struct sim_grant *g, uint32_t peer, uint32_t pfn,
			 bool readonly)
{
	uint64_t w = 0;

	if (!atomic_compare_exchange_strong(&g->word, &w, SIM_GTF_RESERVED))
		return -EBUSY;
	atomic_store(&g->frame, pfn);
	atomic_store(&g->word, (uint64_t)(GTF_permit_access |
					  (readonly ? GTF_readonly : 0)) |
				       ((uint64_t)peer << 16));
	return 0;
}

int sim_grant_access(struct sim_dom *d, uint32_t *hint, uint32_t peer,
		     uint32_t pfn, bool readonly)
{
	const uint32_t span = SIM_NR_GRANTS - SIM_FIRST_GREF;
	uint32_t start = *hint, i, ref;

	if (pfn >= d->sh->hdr.nr_pages || peer > 0xffff)
		return -EINVAL;
	if (start < SIM_FIRST_GREF || start >= SIM_NR_GRANTS)
		start = SIM_FIRST_GREF;
	for (i = 0; i < span; i++) {
		ref = SIM_FIRST_GREF + (start - SIM_FIRST_GREF + i) % span;
		if (!publish_grant(&d->sh->grants[ref], peer, pfn, readonly)) {
			*hint = ref + 1;
			return (int)ref;
		}
	}
	return -ENOSPC;
}

int sim_grant_end(struct sim_dom *d, uint32_t ref)
{
	struct sim_grant *g;
	uint64_t w;

	if (ref >= SIM_NR_GRANTS)
		return -EINVAL;
	g = &d->sh->grants[ref];
	w = atomic_load(&g->word);
	for (;;) {
		if (!(SIM_GNT_FLAGS(w) & GTF_permit_access))
			return -EINVAL;
		if (SIM_GNT_MAPS(w) || SIM_GNT_COPIES(w))
			return -EBUSY;
		if (atomic_compare_exchange_weak(&g->word, &w, 0))
			return 0;
	}
}
