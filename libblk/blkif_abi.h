/* SPDX-License-Identifier: MIT */
/*
 * The two blkif ring ABIs a backend on x86 must speak.
 *
 * libxen-dev ships only the native structures from xen/io/blkif.h. A
 * 32-bit guest lays its requests out with 4-byte alignment for uint64_t, so
 * the same ring page holds differently shaped requests. Both layouts are
 * spelled out here, with static assertions on the sizes and offsets that
 * the guest kernels use.
 */
#ifndef BLKBACKD_BLKIF_ABI_H
#define BLKBACKD_BLKIF_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <xen/xen.h>
#include <xen/grant_table.h>
#include <xen/io/blkif.h>
#include <xen/io/protocols.h>
#include <xen/io/ring.h>

/*
 * ring.h maps its barriers to mb()/rmb()/wmb(), which userspace does not
 * have (or leaves them undefined for newer interface versions). The ring
 * is shared with another CPU: use the C11 fences.
 */
#undef xen_mb
#undef xen_rmb
#undef xen_wmb
#define xen_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define xen_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define xen_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)

#define BLKIF_PAGE_SIZE 4096u
#define BLKIF_SECTOR_SIZE 512u
#define BLKIF_SECTORS_PER_PAGE (BLKIF_PAGE_SIZE / BLKIF_SECTOR_SIZE)
/* Segments described by one indirect page. */
#define BLKIF_SEGS_PER_INDIRECT_PAGE \
	(BLKIF_PAGE_SIZE / sizeof(struct blkif_request_segment))
#define BLKIF_MAX_INDIRECT_SEGMENTS \
	(BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST * BLKIF_SEGS_PER_INDIRECT_PAGE)

/* The largest ring we accept: 2^4 pages (blkif.h's max-ring-page-order). */
#define BLK_MAX_RING_ORDER 4
#define BLK_MAX_RING_PAGES (1u << BLK_MAX_RING_ORDER)

enum blkif_abi {
	BLKIF_ABI_X86_32,
	BLKIF_ABI_X86_64,
};

/* ---- x86_32: uint64_t aligned to 4 ---- */
#pragma pack(push, 4)
struct blkif_x86_32_request {
	uint8_t operation;
	uint8_t nr_segments;
	uint16_t handle;
	uint64_t id;
	uint64_t sector_number;
	struct blkif_request_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

struct blkif_x86_32_request_discard {
	uint8_t operation;
	uint8_t flag;
	uint16_t handle;
	uint64_t id;
	uint64_t sector_number;
	uint64_t nr_sectors;
};

struct blkif_x86_32_request_indirect {
	uint8_t operation;
	uint8_t indirect_op;
	uint16_t nr_segments;
	uint64_t id;
	uint64_t sector_number;
	uint16_t handle;
	uint16_t _pad1;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	uint64_t _pad2; /* i386 guests pad this request to 64 bytes */
};

struct blkif_x86_32_response {
	uint64_t id;
	uint8_t operation;
	int16_t status;
};
#pragma pack(pop)

/* ---- x86_64: natural alignment ---- */
struct blkif_x86_64_request {
	uint8_t operation;
	uint8_t nr_segments;
	uint16_t handle;
	uint32_t _pad1;
	uint64_t id;
	uint64_t sector_number;
	struct blkif_request_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

struct blkif_x86_64_request_discard {
	uint8_t operation;
	uint8_t flag;
	uint16_t handle;
	uint32_t _pad1;
	uint64_t id;
	uint64_t sector_number;
	uint64_t nr_sectors;
};

struct blkif_x86_64_request_indirect {
	uint8_t operation;
	uint8_t indirect_op;
	uint16_t nr_segments;
	uint32_t _pad1;
	uint64_t id;
	uint64_t sector_number;
	uint16_t handle;
	uint16_t _pad2;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
};

struct blkif_x86_64_response {
	uint64_t id;
	uint8_t operation;
	int16_t status;
};

/*
 * The request slot of each ABI is the size of its plain request; discard
 * and indirect requests are reinterpretations of the same slot.
 */
union blkif_x86_32_slot {
	struct blkif_x86_32_request rw;
	struct blkif_x86_32_request_discard discard;
	struct blkif_x86_32_request_indirect indirect;
};

union blkif_x86_64_slot {
	struct blkif_x86_64_request rw;
	struct blkif_x86_64_request_discard discard;
	struct blkif_x86_64_request_indirect indirect;
};

DEFINE_RING_TYPES(blkif_x86_32, union blkif_x86_32_slot,
		  struct blkif_x86_32_response);
DEFINE_RING_TYPES(blkif_x86_64, union blkif_x86_64_slot,
		  struct blkif_x86_64_response);

/*
 * The sizes and offsets the guest kernels use. clang-format is kept off
 * this block: to fit 80 columns it splits string literals, and it had torn
 * these messages into pieces such as "x86" "_32" " se" "cto" "r".
 */
/* clang-format off */
_Static_assert(sizeof(struct blkif_x86_32_request) == 108,
	       "x86_32 request size");
_Static_assert(offsetof(struct blkif_x86_32_request, id) == 4,
	       "x86_32 request id offset");
_Static_assert(offsetof(struct blkif_x86_32_request, sector_number) == 12,
	       "x86_32 request sector_number offset");
_Static_assert(sizeof(struct blkif_x86_32_request_discard) == 28,
	       "x86_32 discard request size");
_Static_assert(sizeof(struct blkif_x86_32_request_indirect) == 64,
	       "x86_32 indirect request size");
_Static_assert(offsetof(struct blkif_x86_32_request_indirect,
			indirect_grefs) == 24,
	       "x86_32 indirect request indirect_grefs offset");
_Static_assert(sizeof(struct blkif_x86_32_response) == 12,
	       "x86_32 response size");
_Static_assert(sizeof(union blkif_x86_32_slot) == 108,
	       "x86_32 ring slot size");

_Static_assert(sizeof(struct blkif_x86_64_request) == 112,
	       "x86_64 request size");
_Static_assert(offsetof(struct blkif_x86_64_request, id) == 8,
	       "x86_64 request id offset");
_Static_assert(offsetof(struct blkif_x86_64_request, sector_number) == 16,
	       "x86_64 request sector_number offset");
_Static_assert(sizeof(struct blkif_x86_64_request_discard) == 32,
	       "x86_64 discard request size");
_Static_assert(sizeof(struct blkif_x86_64_request_indirect) == 64,
	       "x86_64 indirect request size");
_Static_assert(offsetof(struct blkif_x86_64_request_indirect,
			indirect_grefs) == 28,
	       "x86_64 indirect request indirect_grefs offset");
_Static_assert(sizeof(struct blkif_x86_64_response) == 16,
	       "x86_64 response size");
_Static_assert(sizeof(union blkif_x86_64_slot) == 112,
	       "x86_64 ring slot size");
/* clang-format on */

#endif /* BLKBACKD_BLKIF_ABI_H */
