// SPDX-License-Identifier: MIT
/*
 * The control protocol's request line, parsed (control-request.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "blkbackd/control-request.h"
#include "libblk/parse.h"

/* "limit D/V IOPS BPS" has the most words. */
#define MAX_WORDS 4
#define WORD_MAX 32 /* bytes, with the terminating NUL */

/* A snapshot's or move's DEST is the one word that may be longer (a path). */
struct words {
	char w[MAX_WORDS][CONTROL_DEST_MAX];
	size_t len[MAX_WORDS];
	unsigned int n;
};

static int refuse(char *why, size_t why_len, const char *msg)
{
	snprintf(why, why_len, "%s", msg);
	return -EINVAL;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Split @line into words; -EINVAL for a control byte or too many words. */
static int split(const char *line, size_t len, struct words *ws, char *why,
		 size_t why_len)
{
	size_t i = 0;

	ws->n = 0;
	while (i < len) {
		size_t start;

		if (blank(line[i])) {
			i++;
			continue;
		}
		start = i;
		while (i < len && !blank(line[i])) {
			unsigned char c = (unsigned char)line[i];

			if (c < 0x20 || c == 0x7f)
				return refuse(why, why_len,
					      "a control character in the "
					      "request");
			i++;
		}
		if (ws->n == MAX_WORDS)
			return refuse(why, why_len, "too many words");
		if (i - start >= CONTROL_DEST_MAX)
			return refuse(why, why_len, "a word too long");
		memcpy(ws->w[ws->n], line + start, i - start);
		ws->w[ws->n][i - start] = '\0';
		ws->len[ws->n++] = i - start;
	}
	return 0;
}

/* "DOMID/DEVID": two strict decimal numbers. */
static int device(const char *word, struct control_request *req, char *why,
		  size_t why_len)
{
	const char *slash = strchr(word, '/');
	char domid[WORD_MAX];
	uint64_t a, b;

	if (slash && (size_t)(slash - word) < sizeof(domid)) {
		memcpy(domid, word, (size_t)(slash - word));
		domid[slash - word] = '\0';
		if (blk_parse_u64(domid, UINT32_MAX, &a) == 0 &&
		    blk_parse_u64(slash + 1, UINT32_MAX, &b) == 0) {
			req->one = true;
			req->domid = (uint32_t)a;
			req->devid = (uint32_t)b;
			return 0;
		}
	}
	return refuse(why, why_len, "a device is DOMID/DEVID, two numbers");
}

static int limit_arg(const char *word, struct control_limit_arg *out, char *why,
		     size_t why_len)
{
	if (strcmp(word, "-") == 0) {
		*out = (struct control_limit_arg){ .keep = true };
		return 0;
	}
	*out = (struct control_limit_arg){ 0 };
	if (blk_parse_u64(word, UINT64_MAX, &out->value) == 0)
		return 0;
	return refuse(why, why_len,
		      "a limit must be a number (0: none) or - (unchanged)");
}

static const struct {
	const char *name;
	enum control_op op;
	unsigned int min_args, max_args;
} commands[] = {
	{ "list", CONTROL_LIST, 0, 0 },
	{ "stats", CONTROL_STATS, 0, 1 },
	{ "log-level", CONTROL_LOG_LEVEL, 0, 1 },
	{ "resize", CONTROL_RESIZE, 0, 1 },
	{ "reload", CONTROL_RELOAD, 0, 0 },
	{ "limit", CONTROL_LIMIT, 1, 3 },
	{ "snapshot", CONTROL_SNAPSHOT, 2, 2 },
	{ "move", CONTROL_MOVE, 2, 3 },
	{ "move-cancel", CONTROL_MOVE_CANCEL, 1, 1 },
	{ "snapshot-copy", CONTROL_SNAPSHOT_COPY, 2, 3 },
};

#define UNKNOWN                                                           \
	"unknown request (list, stats [DOMID/DEVID], log-level [LEVEL], " \
	"resize [DOMID/DEVID], reload, limit DOMID/DEVID [IOPS BPS], "    \
	"snapshot DOMID/DEVID DEST, move DOMID/DEVID DEST [BPS], "        \
	"move-cancel DOMID/DEVID, snapshot-copy DOMID/DEVID DEST [BPS])"

/* The arguments of a known command, @ws->n - 1 of them, in range. */
static int arguments(const struct words *ws, struct control_request *req,
		     char *why, size_t why_len)
{
	unsigned int args = ws->n - 1;

	switch (req->op) {
	case CONTROL_LOG_LEVEL:
		/* Shorter than WORD_MAX: control_request_parse() checked. */
		if (args)
			memcpy(req->level, ws->w[1], ws->len[1] + 1);
		return 0;
	case CONTROL_LIMIT:
		if (args == 2)
			return refuse(why, why_len,
				      "limit DOMID/DEVID takes both IOPS and "
				      "BPS, or neither");
		req->set_limits = args == 3;
		if (req->set_limits &&
		    (limit_arg(ws->w[2], &req->iops, why, why_len) < 0 ||
		     limit_arg(ws->w[3], &req->bps, why, why_len) < 0))
			return -EINVAL;
		return device(ws->w[1], req, why, why_len);
	case CONTROL_STATS:
	case CONTROL_RESIZE:
		return args ? device(ws->w[1], req, why, why_len) : 0;
	case CONTROL_SNAPSHOT:
		memcpy(req->dest, ws->w[2], ws->len[2] + 1);
		return device(ws->w[1], req, why, why_len);
	case CONTROL_MOVE:
	case CONTROL_SNAPSHOT_COPY:
		memcpy(req->dest, ws->w[2], ws->len[2] + 1);
		if (args == 3 && blk_parse_u64(ws->w[3], UINT64_MAX, &req->bw))
			return refuse(why, why_len,
				      "a move's rate is a number of bytes a "
				      "second (0: the default)");
		return device(ws->w[1], req, why, why_len);
	case CONTROL_MOVE_CANCEL:
		return device(ws->w[1], req, why, why_len);
	case CONTROL_LIST:
	case CONTROL_RELOAD:
		break;
	}
	return 0;
}

int control_request_parse(const char *line, size_t len,
			  struct control_request *req, char *why,
			  size_t why_len)
{
	struct words ws;

	*req = (struct control_request){ 0 };
	if (split(line, len, &ws, why, why_len) < 0)
		return -EINVAL;
	/* Every word is short, but a snapshot's or a move's DEST. */
	for (unsigned int i = 0; i < ws.n; i++)
		if (ws.len[i] >= WORD_MAX &&
		    !(i == 2 && (strcmp(ws.w[0], "snapshot") == 0 ||
				 strcmp(ws.w[0], "move") == 0 ||
				 strcmp(ws.w[0], "snapshot-copy") == 0)))
			return refuse(why, why_len, "a word too long");
	for (size_t i = 0; ws.n && i < sizeof(commands) / sizeof(commands[0]);
	     i++) {
		if (strcmp(ws.w[0], commands[i].name) != 0)
			continue;
		if (ws.n - 1 < commands[i].min_args ||
		    ws.n - 1 > commands[i].max_args)
			break;
		req->op = commands[i].op;
		return arguments(&ws, req, why, why_len);
	}
	return refuse(why, why_len, UNKNOWN);
}
