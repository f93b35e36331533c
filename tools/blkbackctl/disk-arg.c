// SPDX-License-Identifier: MIT
/*
 * Domains and disks as people type them (see disk-arg.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/xen.h> /* DOMID_FIRST_RESERVED */
#include <xenstore.h>

#include "libblk/parse.h"
#include "libblk/toolstack.h"
#include "tools/blkbackctl/deadline.h"
#include "tools/blkbackctl/disk-arg.h"

#define DISK_SYNTAX "DOMAIN/VDEV (1/xvdb, 1/51728 or NAME/xvdb)"

static struct xs_handle *store(struct domains *ds)
{
	if (!ds->tried) {
		ds->tried = true;
		ds->xs = xs_open(0);
	}
	return ds->xs;
}

/* The name node of domain @entry (a /local/domain entry); NULL if none. */
static char *name_of(struct xs_handle *xs, const char *entry)
{
	char path[64];
	unsigned int len;

	snprintf(path, sizeof(path), "/local/domain/%s/name", entry);
	return xs_read(xs, XBT_NULL, path, &len);
}

char *domain_name(struct domains *ds, uint32_t domid)
{
	char entry[16], *name = NULL;

	deadline_store_begin(0);
	deadline_store_doing("reading domain %u's name", domid);
	if (store(ds)) {
		snprintf(entry, sizeof(entry), "%u", domid);
		name = name_of(ds->xs, entry);
	}
	deadline_store_end();
	return name;
}

/*
 * The domain named @name, as libxl finds it: every /local/domain entry's
 * name node. Two domains of one name (xl refuses that; another
 * toolstack may not) are an error, not a guess.
 */
static int lookup(struct xs_handle *xs, const char *name, uint32_t *domid)
{
	unsigned int n, found = 0;
	char **entries = xs_directory(xs, XBT_NULL, "/local/domain", &n);
	uint64_t id;

	for (unsigned int i = 0; entries && i < n; i++) {
		char *s = name_of(xs, entries[i]);

		if (s && strcmp(s, name) == 0 &&
		    blk_parse_u64(entries[i], DOMID_FIRST_RESERVED - 1, &id) ==
			    0) {
			if (found++) {
				fprintf(stderr,
					"blkbackctl: domains %u and %s are "
					"both named '%s'; give the domain "
					"id\n",
					*domid, entries[i], name);
				free(s);
				free(entries);
				return 1;
			}
			*domid = (uint32_t)id;
		}
		free(s);
	}
	free(entries);
	if (found)
		return 0;
	fprintf(stderr,
		"blkbackctl: there is no domain named '%s' (see xl list)\n",
		name);
	return 1;
}

int domain_arg(struct domains *ds, const char *text, uint32_t *domid)
{
	uint64_t id;
	int ret;

	if (text[0] >= '0' && text[0] <= '9') {
		if (blk_parse_u64(text, DOMID_FIRST_RESERVED - 1, &id) == 0) {
			*domid = (uint32_t)id;
			return 0;
		}
		fprintf(stderr,
			"blkbackctl: '%s' is not a domain id (0 to %u) nor a "
			"name\n",
			text, DOMID_FIRST_RESERVED - 1);
		return 2;
	}
	if (!text[0]) {
		fprintf(stderr, "blkbackctl: give a domain id or name\n");
		return 2;
	}
	deadline_store_begin(0);
	deadline_store_doing("looking up the domain named '%s'", text);
	if (!store(ds)) {
		fprintf(stderr,
			"blkbackctl: cannot reach xenstore to find domain "
			"'%s': %s; give its id\n",
			text, strerror(errno));
		ret = 1;
	} else {
		ret = lookup(ds->xs, text, domid);
	}
	deadline_store_end();
	return ret;
}

int disk_arg(struct domains *ds, const char *cmd, const char *text,
	     struct disk_ref *out)
{
	const char *slash = strrchr(text, '/');
	char dom[256];

	if (!slash || slash == text || (size_t)(slash - text) >= sizeof(dom) ||
	    blk_vdev_to_devid(slash + 1, &out->devid) < 0) {
		fprintf(stderr, "blkbackctl: %s: '%s' is not a disk: give %s\n",
			cmd, text, DISK_SYNTAX);
		return 2;
	}
	memcpy(dom, text, (size_t)(slash - text));
	dom[slash - text] = '\0';
	return domain_arg(ds, dom, &out->domid);
}

void domains_close(struct domains *ds)
{
	if (ds->xs)
		xs_close(ds->xs);
	ds->xs = NULL;
	ds->tried = false;
}
