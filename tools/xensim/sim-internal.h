/* SPDX-License-Identifier: MIT */
/*
 * xensim internals: the layout of one simulated domain's shared state and
 * the operations the guest API, the fake libraries and the xenstored shim
 * share. Nothing here is part of any installed interface.
 *
 * $XENSIM_DIR/
 *   lock            flock()ed around event-channel binding changes and
 *                   around reaping map ledgers
 *   maps/<pid>.<start>.<unique>
 *                   one fake gnttab handle's ledger of its map pins
 *   dom<ID>/state   struct sim_shared, mmap()ed MAP_SHARED by every user
 *   dom<ID>/memory  nr_pages * 4096 bytes of guest memory
 *   dom<ID>.gone    tombstone left when a destroyed domain's files go
 *
 * Grant entries and port entries are updated with atomics only, so any
 * number of processes can use them at once; the lock file serialises only
 * the two-sided changes of binding and closing event channels.
 */
#ifndef XENSIM_SIM_INTERNAL_H
#define XENSIM_SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tools/xensim/xensim.h"

#define SIM_MAGIC 0x314d5358u /* "XSM1" */
#define SIM_NR_GRANTS 8192u
#define SIM_NR_PORTS 1024u
/* Xen reserves the first grant refs (1 is the xenstore ring). */
#define SIM_FIRST_GREF 8u
/* The port xenstored's VIRQ_DOM_EXC binding gets in the shim. */
#define SIM_VIRQ_PORT (SIM_NR_PORTS - 1)

/*
 * A grant entry packs everything that must change together into one word:
 * bits 0-15 flags (GTF_permit_access, GTF_readonly, SIM_GTF_RESERVED),
 * bits 16-31 the peer domid, bits 32-47 the map count, bits 48-63 the
 * number of grant copies in flight. A guest may end a grant only while
 * both counts are zero, as Xen refuses to while GTF_reading/writing.
 */
#define SIM_GTF_RESERVED 0x8000u
#define SIM_GNT_FLAGS(w) ((uint32_t)((w)&0xffffu))
#define SIM_GNT_PEER(w) ((uint32_t)(((w) >> 16) & 0xffffu))
#define SIM_GNT_MAPS(w) ((uint32_t)(((w) >> 32) & 0xffffu))
#define SIM_GNT_COPIES(w) ((uint32_t)(((w) >> 48) & 0xffffu))
#define SIM_GNT_ONE_MAP (1ull << 32)
#define SIM_GNT_ONE_COPY (1ull << 48)

struct sim_grant {
	_Atomic uint64_t word;
	_Atomic uint32_t frame;
	uint32_t unused;
};

enum sim_port_state {
	SIM_PORT_FREE = 0,
	SIM_PORT_UNBOUND,
	SIM_PORT_INTERDOMAIN,
	SIM_PORT_VIRQ,
};

/*
 * One event-channel port. The owner (pid, id) names the FIFO of the handle
 * that bound it, where its deliveries are queued.
 */
struct sim_port {
	_Atomic uint32_t state;
	_Atomic uint32_t remote_dom;
	_Atomic uint32_t remote_port;
	_Atomic uint32_t ev; /* EV_MASKED | EV_PENDING (sim-evtchn.c) */
	_Atomic uint32_t owner_pid;
	_Atomic uint32_t owner_id;
	uint32_t unused[2];
};

struct sim_header {
	uint32_t magic;
	uint32_t domid;
	uint32_t nr_pages;
	uint32_t unused;
	_Atomic uint32_t dying;
	_Atomic uint32_t live_maps;
	_Atomic uint32_t removed;
	_Atomic uint32_t ports_high; /* no port at or above is ever used */
	uint32_t pad[8];
};

struct sim_shared {
	struct sim_header hdr;
	struct sim_grant grants[SIM_NR_GRANTS];
	struct sim_port ports[SIM_NR_PORTS];
};

/* One process's view of one domain: its shared state and its memory. */
struct sim_dom {
	struct sim_dom *next;
	uint32_t domid;
	dev_t dev;
	ino_t ino;
	struct sim_shared *sh;
	int memfd;
	uint8_t *mem;
	size_t mem_len;
};

/* Paths and identities. */
int sim_path(char *buf, size_t len, const char *dir, uint32_t domid,
	     const char *leaf);
int sim_host_key(const char *dir, char *buf, size_t len);
uint32_t sim_env_domid(void);

/* Domain state files. */
int sim_dom_create(const char *dir, uint32_t domid, uint32_t nr_pages);
int sim_dom_open(const char *dir, uint32_t domid, struct sim_dom **out);
void sim_dom_close(struct sim_dom *d);
bool sim_dom_replaced(const char *dir, const struct sim_dom *d);
void sim_dom_remove_if_released(const char *dir, struct sim_dom *d);
int sim_dom_destroy(const char *dir, uint32_t domid);
bool sim_dom_exists(const char *dir, uint32_t domid, bool *dying);

/*
 * A per-handle cache of opened domains, so the data path does not reopen
 * files. Entries are never freed before the cache, because mappings point
 * at them; a destroyed-and-recreated domid gets a new entry.
 */
struct sim_cache {
	char *dir;
	pthread_mutex_t lock;
	struct sim_dom *doms;
};
int sim_cache_init(struct sim_cache *c, const char *dir);
void sim_cache_fini(struct sim_cache *c);
int sim_cache_get(struct sim_cache *c, uint32_t domid, struct sim_dom **out);

/* Grants, hypervisor side: return GNTST_* codes. */
int sim_grant_pin(struct sim_dom *d, uint32_t caller, uint32_t ref, bool write,
		  bool as_map, uint32_t *frame);
void sim_grant_unpin(struct sim_dom *d, uint32_t ref, bool as_map);
/* Grants, guest side: return a ref / 0 or -errno. */
int sim_grant_access(struct sim_dom *d, uint32_t *hint, uint32_t peer,
		     uint32_t pfn, bool readonly);
int sim_grant_end(struct sim_dom *d, uint32_t ref);

/* The host lock (the lock file): a held fd, or -errno. */
int sim_host_lock(const char *dir);
void sim_host_unlock(int fd);

/*
 * A fake gnttab handle's ledger of the grants it has mapped (one slot per
 * mapped page), kept in a file under $XENSIM_DIR/maps/ so that the pins of
 * a process that died without unmapping can be released, as the kernel's
 * gntdev does when a process exits. See sim-ledger.c.
 */
#define SIM_LEDGER_SLOTS (1u << 17)
struct sim_ledger_file;
struct sim_ledger {
	struct sim_ledger_file *file;
	pthread_mutex_t lock;
	uint32_t *free_slots;
	uint32_t nr_free;
	uint32_t free_cap;
	char path[4096];
};
int sim_ledger_open(struct sim_ledger *l, const char *dir);
/* Removes the ledger; the caller has released every pin in it. */
void sim_ledger_close(struct sim_ledger *l);
/* Record a map pin of @ref in @d: the slot, or -ENOSPC / -ENOMEM. */
int sim_ledger_add(struct sim_ledger *l, const struct sim_dom *d, uint32_t ref);
/* Forget a slot; call before dropping the pin it recorded. */
void sim_ledger_remove(struct sim_ledger *l, uint32_t slot);
/*
 * Release the map pins of handles whose process is gone (or is a zombie,
 * or its pid now names another process), and remove the files of dying
 * domains left with no mapping. Returns the pins released or -errno.
 */
int sim_reap_orphaned_maps(const char *dir);

/*
 * The delivery end of an event-channel handle: the FIFO $dir/ev/<pid>.<id>
 * (the id random, so that a name is never used twice), which its fd reads
 * as /dev/xen/evtchn is read: whole port numbers, one per delivered event.
 * It polls readable while a delivery is queued. A handle also keeps open
 * the FIFOs of the last SIM_WAKER_PEERS handles it notified. Like the
 * kernel's handle, it is used by one thread at a time.
 */
#define SIM_WAKER_PEERS 64u
struct sim_waker_peer {
	uint32_t pid, id;
	int fd; /* 0: a free entry */
};
struct sim_waker {
	int fd;
	uint32_t pid;
	uint32_t id;
	char *dir;
	struct sim_waker_peer peers[SIM_WAKER_PEERS];
	unsigned int next_victim;
};
int sim_waker_open(struct sim_waker *w, const char *dir);
void sim_waker_close(struct sim_waker *w);
/*
 * Queue @port on the FIFO of the handle (@pid, @id) of the host in @dir,
 * through @via's kept FIFOs (NULL: one opened for this event). The second
 * step of raising a port, after its mask was set: Xen's send is one
 * hypercall, so a sender that dies between the two steps leaves a port
 * that xensim must deliver for it (tests/vbd-crash-points.sh stops here).
 */
void sim_deliver(struct sim_waker *via, const char *dir, uint32_t pid,
		 uint32_t id, uint32_t port);

/* Event channels: ports are in @self's table and owned by @w. */
int sim_port_alloc_unbound(const char *dir, struct sim_dom *self,
			   const struct sim_waker *w, uint32_t remote);
int sim_port_bind_interdomain(struct sim_cache *c, struct sim_dom *self,
			      struct sim_waker *w, uint32_t remote,
			      uint32_t remote_port);
int sim_port_bind_virq(const char *dir, struct sim_dom *self,
		       const struct sim_waker *w);
int sim_port_close(struct sim_cache *c, struct sim_dom *self,
		   const struct sim_waker *w, uint32_t port);
void sim_port_close_all(struct sim_cache *c, struct sim_dom *self,
			const struct sim_waker *w);
int sim_port_notify(struct sim_cache *c, struct sim_dom *self,
		    struct sim_waker *w, uint32_t port);
/* Up to @n delivered ports in one read: how many, or -errno (-EAGAIN). */
int sim_port_read(struct sim_waker *w, uint32_t *ports, unsigned int n);
/* One delivered port, or -EAGAIN: libxenevtchn's pending(). */
int sim_port_pending(struct sim_waker *w);
int sim_port_send(struct sim_cache *c, struct sim_dom *self, uint32_t port);
int sim_port_unmask(struct sim_dom *self, struct sim_waker *w, uint32_t port);
int sim_port_state(struct sim_dom *self, uint32_t port);
bool sim_port_orphaned(const struct sim_port *p);

/* The abstract socket name xenstored's VIRQ_DOM_EXC listens on. */
int sim_virq_name(const char *dir, char *buf, size_t len);
void sim_virq_dom_exc(const char *dir);
int sim_abstract_bind(int fd, const char *name);

#endif /* XENSIM_SIM_INTERNAL_H */
