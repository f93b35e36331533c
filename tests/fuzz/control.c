// SPDX-License-Identifier: MIT
/*
 * Fuzz harness: a control request line as the daemon parses it
 * (control_request_parse() in blkbackd/control-request.c). Whoever may
 * use the control socket sends it; the line is bounded by the server
 * (CONTROL_REQUEST_MAX), but its bytes are anything.
 *
 * Input: one byte, the size of the buffer for the reason of a refusal
 * (1 to 256), then the line's bytes (NUL and control bytes included).
 *
 * Invariants: the line is accepted exactly when a model written here
 * independently accepts it (the grammar of control-request.h: blank-
 * separated words, no control byte, a known command with the arguments
 * it takes, strict decimal numbers in range) and then with exactly the
 * model's values; a refusal always explains itself in a terminated
 * string that fits its buffer; and an accepted request, written back in
 * its canonical form, parses to the same request.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include "blkbackd/control-request.h"
#include "tests/fuzz/fuzz.h"

#define MODEL_WORDS 64

/* ---- the model ---- */

struct word {
	const char *p;
	size_t len;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_control(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* Strict decimal digits, at most @max. */
static bool model_number(struct word w, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (w.len == 0)
		return false;
	for (size_t i = 0; i < w.len; i++) {
		unsigned int d = (unsigned int)(w.p[i] - '0');

		if (w.p[i] < '0' || w.p[i] > '9')
			return false;
		if (v > (max - d) / 10 || d > max)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool word_is(struct word w, const char *s)
{
	return w.len == strlen(s) && memcmp(w.p, s, w.len) == 0;
}

static bool model_device(struct word w, struct control_request *r)
{
	const char *slash = memchr(w.p, '/', w.len);
	uint64_t a, b;
	struct word dom, dev;

	if (!slash)
		return false;
	dom = (struct word){ w.p, (size_t)(slash - w.p) };
	dev = (struct word){ slash + 1, w.len - dom.len - 1 };
	if (!model_number(dom, UINT32_MAX, &a) ||
	    !model_number(dev, UINT32_MAX, &b))
		return false;
	r->one = true;
	r->domid = (uint32_t)a;
	r->devid = (uint32_t)b;
	return true;
}

static bool model_limit(struct word w, struct control_limit_arg *a)
{
	if (word_is(w, "-")) {
		a->keep = true;
		return true;
	}
	return model_number(w, UINT64_MAX, &a->value);
}

/* What the line must parse to; false: it must be refused. */
static bool model(const char *line, size_t len, struct control_request *r)
{
	struct word w[MODEL_WORDS];
	size_t n = 0, i = 0;

	memset(r, 0, sizeof(*r));
	for (size_t k = 0; k < len; k++)
		if (is_control((unsigned char)line[k]))
			return false;
	while (i < len) {
		size_t start;

		for (; i < len && is_blank(line[i]); i++)
			;
		if (i == len)
			break;
		start = i;
		for (; i < len && !is_blank(line[i]); i++)
			;
		if (n == MODEL_WORDS)
			return false;
		w[n++] = (struct word){ line + start, i - start };
	}
	if (n == 0 || n > 4)
		return false;
	/* Every word is short, but a snapshot's or a move's DEST (a path). */
	for (size_t k = 0; k < n; k++)
		if (w[k].len > 31 &&
		    !(k == 2 &&
		      (word_is(w[0], "snapshot") || word_is(w[0], "move") ||
		       word_is(w[0], "snapshot-copy")) &&
		      w[k].len < CONTROL_DEST_MAX))
			return false;
	if (word_is(w[0], "list") || word_is(w[0], "reload")) {
		r->op = word_is(w[0], "list") ? CONTROL_LIST : CONTROL_RELOAD;
		return n == 1;
	}
	if (word_is(w[0], "stats") || word_is(w[0], "resize")) {
		r->op = word_is(w[0], "stats") ? CONTROL_STATS : CONTROL_RESIZE;
		return n == 1 || (n == 2 && model_device(w[1], r));
	}
	if (word_is(w[0], "log-level")) {
		r->op = CONTROL_LOG_LEVEL;
		if (n == 2)
			memcpy(r->level, w[1].p, w[1].len);
		return n <= 2;
	}
	if (word_is(w[0], "snapshot")) {
		r->op = CONTROL_SNAPSHOT;
		if (n == 3)
			memcpy(r->dest, w[2].p, w[2].len);
		return n == 3 && model_device(w[1], r);
	}
	if (word_is(w[0], "move") || word_is(w[0], "snapshot-copy")) {
		r->op = word_is(w[0], "move") ? CONTROL_MOVE
					      : CONTROL_SNAPSHOT_COPY;
		if (n >= 3)
			memcpy(r->dest, w[2].p, w[2].len);
		return (n == 3 || n == 4) && model_device(w[1], r) &&
		       (n == 3 || model_number(w[3], UINT64_MAX, &r->bw));
	}
	if (word_is(w[0], "move-cancel")) {
		r->op = CONTROL_MOVE_CANCEL;
		return n == 2 && model_device(w[1], r);
	}
	if (word_is(w[0], "limit")) {
		r->op = CONTROL_LIMIT;
		r->set_limits = n == 4;
		return (n == 2 || n == 4) && model_device(w[1], r) &&
		       (n == 2 || (model_limit(w[2], &r->iops) &&
				   model_limit(w[3], &r->bps)));
	}
	return false;
}

/* ---- the checks ---- */

static bool limit_same(const struct control_limit_arg *a,
		       const struct control_limit_arg *b)
{
	return a->keep == b->keep && a->value == b->value;
}

static bool same(const struct control_request *a,
		 const struct control_request *b)
{
	return a->op == b->op && a->one == b->one && a->domid == b->domid &&
	       a->devid == b->devid && strcmp(a->level, b->level) == 0 &&
	       a->set_limits == b->set_limits &&
	       limit_same(&a->iops, &b->iops) && limit_same(&a->bps, &b->bps) &&
	       strcmp(a->dest, b->dest) == 0 && a->bw == b->bw;
}

static const char *const op_names[] = {
	[CONTROL_LIST] = "list",
	[CONTROL_STATS] = "stats",
	[CONTROL_LOG_LEVEL] = "log-level",
	[CONTROL_RESIZE] = "resize",
	[CONTROL_RELOAD] = "reload",
	[CONTROL_LIMIT] = "limit",
	[CONTROL_SNAPSHOT] = "snapshot",
	[CONTROL_MOVE] = "move",
	[CONTROL_MOVE_CANCEL] = "move-cancel",
	[CONTROL_SNAPSHOT_COPY] = "snapshot-copy",
};

static void limit_text(const struct control_limit_arg *a, char *buf, size_t len)
{
	if (a->keep)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIu64, a->value);
}

/* The request in the form blkbackctl sends it. */
static size_t canonical(const struct control_request *r, char *buf, size_t len)
{
	char iops[24], bps[24];
	int n = snprintf(buf, len, "%s", op_names[r->op]);

	if (r->one)
		n += snprintf(buf + n, len - (size_t)n, " %" PRIu32 "/%" PRIu32,
			      r->domid, r->devid);
	if (r->level[0])
		n += snprintf(buf + n, len - (size_t)n, " %s", r->level);
	if (r->dest[0])
		n += snprintf(buf + n, len - (size_t)n, " %s", r->dest);
	if (r->bw)
		n += snprintf(buf + n, len - (size_t)n, " %" PRIu64, r->bw);
	if (r->set_limits) {
		limit_text(&r->iops, iops, sizeof(iops));
		limit_text(&r->bps, bps, sizeof(bps));
		n += snprintf(buf + n, len - (size_t)n, " %s %s", iops, bps);
	}
	FUZZ_ASSERT(n > 0 && (size_t)n < len);
	return (size_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t why_len = size ? (size_t)data[0] + 1 : 160;
	const char *line = size ? (const char *)data + 1 : "";
	size_t len = size ? size - 1 : 0;
	struct control_request got, want, again;
	char *why = malloc(why_len); /* exact: ASan sees an overrun */
	char text[CONTROL_REQUEST_MAX * 2], why2[160];
	bool ok = model(line, len, &want);
	int ret;

	FUZZ_ASSERT(why != NULL);
	memset(why, 0x5a, why_len);
	ret = control_request_parse(line, len, &got, why, why_len);
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL);
	FUZZ_ASSERT((ret == 0) == ok);
	if (ret < 0) {
		FUZZ_ASSERT(memchr(why, '\0', why_len) != NULL);
		FUZZ_ASSERT(why_len == 1 || why[0] != '\0');
		free(why);
		return 0;
	}
	free(why);
	FUZZ_ASSERT(same(&got, &want));
	len = canonical(&got, text, sizeof(text));
	FUZZ_ASSERT(control_request_parse(text, len, &again, why2,
					  sizeof(why2)) == 0);
	FUZZ_ASSERT(same(&got, &again));
	return 0;
}
