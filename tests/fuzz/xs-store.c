// SPDX-License-Identifier: MIT
/*
 * The in-process xenstore of tests/fuzz/xs-store.h: nodes in an array,
 * looked up by path, which is fast enough for the few dozen nodes of one
 * device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/xs-store.h"

#define MAX_NODES 512
#define MAX_WATCHES 16
#define MAX_EVENTS 1024
#define MAX_DOMAINS 8
#define TXN_ID 1u

struct node {
	char *path;
	char *value;
	unsigned int len;
	int writer;
};

struct tree {
	struct node nodes[MAX_NODES];
	unsigned int nr;
};

struct watch {
	char *path;
	char *token;
};

struct event {
	char *path;
	char *token;
};

/* A handle is a pointer to one of these: xs_handle stays opaque. */
struct xs_handle {
	unsigned int who;
};

static struct xs_handle handles[2] = { { STORE_DAEMON }, { STORE_PEER } };
static struct tree main_tree, txn_tree;
static bool in_txn;
/* What the transaction changed, fired when it commits. */
static char *txn_changed[MAX_NODES];
static unsigned int txn_nr;
static struct watch watches[MAX_WATCHES];
static unsigned int nr_watches;
static struct event events[MAX_EVENTS];
static unsigned int nr_events;
static struct event taken;
static uint32_t domains[MAX_DOMAINS];
static unsigned int nr_domains;

static void fire(const char *path, bool removed);

static void *must(void *p)
{
	if (!p)
		abort();
	return p;
}

static char *dup_str(const char *s)
{
	return must(strdup(s));
}

static void tree_clear(struct tree *t)
{
	for (unsigned int i = 0; i < t->nr; i++) {
		free(t->nodes[i].path);
		free(t->nodes[i].value);
	}
	t->nr = 0;
}

static void tree_copy(struct tree *to, const struct tree *from)
{
	tree_clear(to);
	for (unsigned int i = 0; i < from->nr; i++) {
		const struct node *n = &from->nodes[i];

		to->nodes[i] = (struct node){ .path = dup_str(n->path),
					      .value = must(malloc(n->len + 1)),
					      .len = n->len,
					      .writer = n->writer };
		memcpy(to->nodes[i].value, n->value, n->len + 1);
	}
	to->nr = from->nr;
}

static void drop_event(unsigned int i)
{
	free(events[i].path);
	free(events[i].token);
	memmove(&events[i], &events[i + 1],
		(nr_events - i - 1) * sizeof(events[0]));
	nr_events--;
}

void store_reset(void)
{
	tree_clear(&main_tree);
	tree_clear(&txn_tree);
	in_txn = false;
	for (unsigned int i = 0; i < txn_nr; i++)
		free(txn_changed[i]);
	txn_nr = 0;
	for (unsigned int i = 0; i < nr_watches; i++) {
		free(watches[i].path);
		free(watches[i].token);
	}
	nr_watches = 0;
	while (nr_events)
		drop_event(nr_events - 1);
	free(taken.path);
	free(taken.token);
	taken = (struct event){ NULL, NULL };
	nr_domains = 0;
}

struct xs_handle *store_handle(unsigned int who)
{
	return &handles[who];
}

unsigned int store_pending(void)
{
	return nr_events;
}

void store_take(unsigned int i, const char **path, const char **token)
{
	free(taken.path);
	free(taken.token);
	taken = events[i];
	memmove(&events[i], &events[i + 1],
		(nr_events - i - 1) * sizeof(events[0]));
	nr_events--;
	*path = taken.path;
	*token = taken.token;
}

void store_domain(uint32_t domid, bool alive)
{
	unsigned int i;

	for (i = 0; i < nr_domains && domains[i] != domid; i++)
		;
	if (alive && i == nr_domains && nr_domains < MAX_DOMAINS)
		domains[nr_domains++] = domid;
	if (!alive && i < nr_domains) {
		domains[i] = domains[--nr_domains];
		fire("@releaseDomain", false);
	}
}

/* @path is @base or under it. */
static bool under(const char *path, const char *base)
{
	size_t n = strlen(base);

	return strncmp(path, base, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

static void queue_event(const char *path, const char *token)
{
	if (nr_events == MAX_EVENTS)
		return; /* a real connection would stall; nothing waits here */
	events[nr_events++] = (struct event){ dup_str(path), dup_str(token) };
}

/* @path changed (@removed: it went, with what was under it). */
static void fire(const char *path, bool removed)
{
	for (unsigned int i = 0; i < nr_watches; i++) {
		if (under(path, watches[i].path))
			queue_event(path, watches[i].token);
		else if (removed && under(watches[i].path, path))
			queue_event(watches[i].path, watches[i].token);
	}
}

static struct tree *tree_of(xs_transaction_t t)
{
	return t != XBT_NULL && in_txn ? &txn_tree : &main_tree;
}

/* Fired now, or when the transaction @t commits. */
static void changed(xs_transaction_t t, const char *path)
{
	if (t == XBT_NULL || !in_txn)
		fire(path, false);
	else if (txn_nr < MAX_NODES)
		txn_changed[txn_nr++] = dup_str(path);
}

static struct node *find(struct tree *t, const char *path)
{
	for (unsigned int i = 0; i < t->nr; i++)
		if (strcmp(t->nodes[i].path, path) == 0)
			return &t->nodes[i];
	return NULL;
}

/* Paths are absolute, without a trailing or doubled slash. */
static bool valid_path(const char *path)
{
	return path[0] == '/' && !strstr(path, "//") &&
	       (path[1] == '\0' || path[strlen(path) - 1] != '/');
}

/* The node @path, made with its parents if need be. */
static struct node *make(struct tree *t, const char *path, int writer)
{
	struct node *n = find(t, path);
	char *slash;

	if (n)
		return n;
	slash = strrchr(path, '/');
	if (slash != path) {
		char *parent = dup_str(path);

		parent[slash - path] = '\0';
		make(t, parent, writer);
		free(parent);
	}
	if (t->nr == MAX_NODES)
		abort();
	n = &t->nodes[t->nr++];
	*n = (struct node){ .path = dup_str(path),
			    .value = dup_str(""),
			    .writer = writer };
	return n;
}

void *xs_read(struct xs_handle *h, xs_transaction_t t, const char *path,
	      unsigned int *len)
{
	struct node *n = valid_path(path) ? find(tree_of(t), path) : NULL;
	char *v;

	(void)h;
	if (!n) {
		errno = ENOENT;
		return NULL;
	}
	v = must(malloc(n->len + 1));
	memcpy(v, n->value, n->len + 1);
	if (len)
		*len = n->len;
	return v;
}

bool xs_write(struct xs_handle *h, xs_transaction_t t, const char *path,
	      const void *data, unsigned int len)
{
	struct node *n;

	if (!valid_path(path)) {
		errno = EINVAL;
		return false;
	}
	n = make(tree_of(t), path, (int)h->who);
	free(n->value);
	n->value = must(malloc(len + 1));
	memcpy(n->value, data, len);
	n->value[len] = '\0';
	n->len = len;
	n->writer = (int)h->who;
	changed(t, path);
	return true;
}

bool xs_mkdir(struct xs_handle *h, xs_transaction_t t, const char *path)
{
	if (!valid_path(path)) {
		errno = EINVAL;
		return false;
	}
	if (!find(tree_of(t), path)) {
		make(tree_of(t), path, (int)h->who);
		changed(t, path);
	}
	return true;
}

bool xs_rm(struct xs_handle *h, xs_transaction_t t, const char *path)
{
	struct tree *tr = tree_of(t);
	bool found = false;

	(void)h;
	if (!valid_path(path) || strcmp(path, "/") == 0) {
		errno = EINVAL;
		return false;
	}
	for (unsigned int i = 0; i < tr->nr;) {
		if (!under(tr->nodes[i].path, path)) {
			i++;
			continue;
		}
		found = true;
		free(tr->nodes[i].path);
		free(tr->nodes[i].value);
		tr->nodes[i] = tr->nodes[--tr->nr];
	}
	if (!found) {
		errno = ENOENT;
		return false;
	}
	if (t == XBT_NULL || !in_txn)
		fire(path, true);
	else
		changed(t, path);
	return true;
}

/* libxenstore's form: the pointers, then the names, in one block. */
char **xs_directory(struct xs_handle *h, xs_transaction_t t, const char *path,
		    unsigned int *num)
{
	struct tree *tr = tree_of(t);
	size_t dir = strlen(path), bytes = 0;
	unsigned int n = 0;
	char **out, *p;

	(void)h;
	if (!valid_path(path) || !find(tr, path)) {
		errno = ENOENT;
		return NULL;
	}
	for (unsigned int i = 0; i < tr->nr; i++) {
		const char *c = tr->nodes[i].path;

		if (under(c, path) && c[dir] == '/' &&
		    !strchr(c + dir + 1, '/')) {
			n++;
			bytes += strlen(c + dir + 1) + 1;
		}
	}
	out = must(malloc(n * sizeof(*out) + bytes + 1));
	p = (char *)(out + n);
	n = 0;
	for (unsigned int i = 0; i < tr->nr; i++) {
		const char *c = tr->nodes[i].path;

		if (under(c, path) && c[dir] == '/' &&
		    !strchr(c + dir + 1, '/')) {
			out[n++] = p;
			strcpy(p, c + dir + 1);
			p += strlen(p) + 1;
		}
	}
	*num = n;
	return out;
}

bool xs_set_permissions(struct xs_handle *h, xs_transaction_t t,
			const char *path, struct xs_permissions *perms,
			unsigned int num_perms)
{
	(void)h;
	(void)perms;
	(void)num_perms;
	if (!find(tree_of(t), path)) {
		errno = ENOENT;
		return false;
	}
	return true;
}

xs_transaction_t xs_transaction_start(struct xs_handle *h)
{
	(void)h;
	if (in_txn) {
		errno = EBUSY; /* one at a time: the daemon has one thread */
		return XBT_NULL;
	}
	tree_copy(&txn_tree, &main_tree);
	in_txn = true;
	return TXN_ID;
}

bool xs_transaction_end(struct xs_handle *h, xs_transaction_t t, bool abort)
{
	(void)h;
	if (!in_txn || t != TXN_ID) {
		errno = EINVAL;
		return false;
	}
	in_txn = false;
	if (!abort)
		tree_copy(&main_tree, &txn_tree);
	tree_clear(&txn_tree);
	for (unsigned int i = 0; i < txn_nr; i++) {
		if (!abort)
			fire(txn_changed[i], !find(&main_tree, txn_changed[i]));
		free(txn_changed[i]);
	}
	txn_nr = 0;
	return true;
}

bool xs_watch(struct xs_handle *h, const char *path, const char *token)
{
	(void)h;
	if (nr_watches == MAX_WATCHES) {
		errno = ENOSPC;
		return false;
	}
	watches[nr_watches++] = (struct watch){ dup_str(path), dup_str(token) };
	queue_event(path, token); /* as xenstored does on registration */
	return true;
}

bool xs_unwatch(struct xs_handle *h, const char *path, const char *token)
{
	unsigned int i;

	(void)h;
	for (i = 0; i < nr_watches; i++)
		if (strcmp(watches[i].path, path) == 0 &&
		    strcmp(watches[i].token, token) == 0)
			break;
	if (i == nr_watches) {
		errno = ENOENT;
		return false;
	}
	free(watches[i].path);
	free(watches[i].token);
	watches[i] = watches[--nr_watches];
	/* Its events not read yet are dropped, as libxenstore does. */
	for (unsigned int e = 0; e < nr_events;) {
		if (strcmp(events[e].token, token) == 0 &&
		    under(events[e].path, path))
			drop_event(e);
		else
			e++;
	}
	return true;
}

/* The next event, as libxenstore hands it: vector and strings in one. */
char **xs_check_watch(struct xs_handle *h)
{
	size_t lp, lt;
	char **v;

	(void)h;
	if (!nr_events) {
		errno = EAGAIN;
		return NULL;
	}
	lp = strlen(events[0].path) + 1;
	lt = strlen(events[0].token) + 1;
	v = must(malloc(2 * sizeof(*v) + lp + lt));
	v[XS_WATCH_PATH] = (char *)(v + 2);
	v[XS_WATCH_TOKEN] = v[XS_WATCH_PATH] + lp;
	memcpy(v[XS_WATCH_PATH], events[0].path, lp);
	memcpy(v[XS_WATCH_TOKEN], events[0].token, lt);
	drop_event(0);
	return v;
}

char **xs_read_watch(struct xs_handle *h, unsigned int *num)
{
	*num = 2;
	return xs_check_watch(h);
}

int xs_fileno(struct xs_handle *h)
{
	(void)h;
	return -1; /* nothing to poll: events are the harness's to deliver */
}

bool xs_is_domain_introduced(struct xs_handle *h, unsigned int domid)
{
	(void)h;
	for (unsigned int i = 0; i < nr_domains; i++)
		if (domains[i] == domid)
			return true;
	errno = ENOENT;
	return false;
}

int store_writer(const char *path)
{
	struct node *n = find(&main_tree, path);

	return n ? n->writer : -1;
}
