// SPDX-License-Identifier: MIT
/*
 * The nodes the toolstack (libxl, or xensim's toolstack) writes into a
 * vbd's backend directory, and the hotplug script's report there: read
 * and parsed for the daemon's state machine (blkbackd/vbd.c), which keeps
 * no xenstore parsing of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/parse.h"
#include "libblk/xenbus.h"

const char *blk_xenbus_image_path(const char *params)
{
	static const char *const prefixes[] = { "aio:", "file:" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (strncmp(params, prefixes[i], n) == 0)
			return params + n;
	}
	return params;
}

bool blk_xenbus_params_vhd(const char *params)
{
	return strncmp(params, "vhd:", 4) == 0;
}

int blk_xenbus_parse_mode(const char *mode, bool *readonly)
{
	if (strcmp(mode, "r") == 0)
		*readonly = true;
	else if (mode[0] == 'w')
		*readonly = false;
	else
		return -EINVAL;
	return 0;
}

/* mode: absent means writable. */
static int read_mode(struct xs_handle *xs, const char *be, bool *readonly)
{
	char *mode;
	int ret = xenbus_read_str(xs, be, "mode", &mode);

	if (ret == -ENOENT) {
		*readonly = false;
		return 0;
	}
	if (ret < 0)
		return ret;
	ret = blk_xenbus_parse_mode(mode, readonly);
	free(mode);
	return ret;
}

/* Is @be/@key exactly @yes? False when absent or unreadable. */
static bool read_is(struct xs_handle *xs, const char *be, const char *key,
		    const char *yes)
{
	char *s;
	bool set;

	if (xenbus_read_str(xs, be, key, &s) < 0)
		return false;
	set = strcmp(s, yes) == 0;
	free(s);
	return set;
}

int blk_xenbus_read_vbd_config(struct xs_handle *xs, const char *be,
			       struct blk_vbd_config *out, const char **bad)
{
	uint64_t enable;
	int ret;

	memset(out, 0, sizeof(*out));
	*bad = "params";
	ret = xenbus_read_str(xs, be, "params", &out->params);
	if (ret < 0)
		return ret;
	*bad = NULL;
	if (blk_xenbus_params_vhd(out->params)) {
		out->vhd = true;
		out->path = out->params + 4;
		return 0;
	}
	out->path = blk_xenbus_image_path(out->params);
	if (read_mode(xs, be, &out->readonly) < 0) {
		*bad = "mode";
		blk_vbd_config_free(out);
		return -EINVAL;
	}
	out->cdrom = read_is(xs, be, "device-type", "cdrom");
	out->removable = read_is(xs, be, "removable", "1");
	out->readonly = out->readonly || out->cdrom;
	/* Absent or unreadable means enabled. */
	out->discard = xenbus_read_uint(xs, be, "discard-enable", 1, &enable) !=
			       0 ||
		       enable;
	return 0;
}

void blk_vbd_config_free(struct blk_vbd_config *c)
{
	free(c->params);
	c->params = NULL;
	c->path = NULL;
}

bool blk_xenbus_has_script(struct xs_handle *xs, const char *be)
{
	char *script;
	bool has;

	if (xenbus_read_str(xs, be, "script", &script) < 0)
		return false;
	has = script[0] != '\0';
	free(script);
	return has;
}

enum blk_hotplug_state blk_xenbus_hotplug_state(struct xs_handle *xs,
						const char *be)
{
	enum blk_hotplug_state st;
	char *status;

	if (!blk_xenbus_has_script(xs, be))
		return BLK_HOTPLUG_CONNECTED;
	if (xenbus_read_str(xs, be, "hotplug-status", &status) < 0)
		return BLK_HOTPLUG_PENDING;
	if (strcmp(status, "connected") == 0)
		st = BLK_HOTPLUG_CONNECTED;
	else if (strcmp(status, "error") == 0)
		st = BLK_HOTPLUG_FAILED;
	else
		st = BLK_HOTPLUG_PENDING;
	free(status);
	return st;
}

int blk_xenbus_read_frontend_path(struct xs_handle *xs, const char *be,
				  char *out, size_t size)
{
	char *fe;
	int ret = xenbus_read_str(xs, be, "frontend", &fe);

	if (ret < 0)
		return ret;
	if (fe[0] != '/' || strlen(fe) >= size)
		ret = -EINVAL;
	else
		strcpy(out, fe);
	free(fe);
	return ret;
}

bool blk_xenbus_online(struct xs_handle *xs, const char *be)
{
	uint64_t online;

	return xenbus_read_uint(xs, be, "online", 1, &online) == 0 &&
	       online == 1;
}

int blk_xenbus_parse_id(const char *s, const char **end, uint32_t *out)
{
	uint64_t v;

	if (blk_parse_u64_prefix(s, UINT32_MAX, &v, end) < 0 ||
	    (**end && **end != '/'))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}
