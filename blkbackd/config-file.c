// SPDX-License-Identifier: MIT
/*
 * blkbackd.conf: inih splits the file into names and values; each name is
 * looked up in the option table and its value checked there, exactly as
 * the same option on the command line is.
 */
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkbackd/config-file.h"
#include "blkbackd/config-read.h"
#include "blkbackd/log.h"

/* Enough for every setting once: a repeated one is an error, not a row. */
#define CONFIG_MAX_SEEN 32

/* A setting the file has given, and where. */
struct config_seen {
	const struct opt_desc *desc;
	unsigned int line;
};

/* The file being parsed (its text, in memory), and the line inih is at. */
struct config_reader {
	const char *path;
	const char *text; /* the whole file, @len bytes */
	size_t len;
	size_t pos; /* where the next line starts */
	unsigned int line;
	int errors;
	struct options *opts;
	struct config_seen seen[CONFIG_MAX_SEEN];
	unsigned int nr_seen;
};

static void config_error(struct config_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void config_error(struct config_reader *r, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("%s:%u: %s", r->path, r->line, msg);
	r->errors++;
}

/*
 * inih's line source, over the file in memory: it counts lines, so that
 * errors can name theirs; it turns a line too long for inih's buffer into
 * an error instead of letting inih read its tail as another line, and a
 * NUL byte into an error instead of a line cut short at it (no text
 * setting holds one); and it drops leading blanks, which inih would take
 * as the continuation of the line before (no setting has a multi-line
 * value, and an indented setting is meant as a setting).
 */
static char *read_line(char *buf, int len, void *stream)
{
	struct config_reader *r = stream;
	const char *start = r->text + r->pos, *nl;
	size_t n, blanks = 0;

	if (r->pos >= r->len)
		return NULL;
	nl = memchr(start, '\n', r->len - r->pos);
	n = nl ? (size_t)(nl - start) : r->len - r->pos;
	r->pos += n + (nl != NULL);
	r->line++;
	buf[0] = '\0';
	if (n > (size_t)len - 2) {
		config_error(r, "line longer than %d characters", len - 2);
		return buf;
	}
	if (memchr(start, '\0', n)) {
		config_error(r, "a NUL byte in the line; delete it");
		return buf;
	}
	while (blanks < n && (start[blanks] == ' ' || start[blanks] == '\t'))
		blanks++;
	memcpy(buf, start + blanks, n - blanks);
	buf[n - blanks] = '\0';
	return buf;
}

/* -1 when @d was set before; else remembers it and returns 0. */
static int remember(struct config_reader *r, const struct opt_desc *d)
{
	for (unsigned int i = 0; i < r->nr_seen; i++) {
		if (r->seen[i].desc != d)
			continue;
		config_error(r,
			     "'%s' is set again (first on line %u); delete "
			     "one of the two lines",
			     d->name, r->seen[i].line);
		return -1;
	}
	if (r->nr_seen < CONFIG_MAX_SEEN)
		r->seen[r->nr_seen++] = (struct config_seen){ d, r->line };
	return 0;
}

static void set_value(struct config_reader *r, const struct opt_desc *d,
		      const char *value)
{
	char accepts[128];
	int ret = option_set(r->opts, d, value);

	if (ret == 0)
		return;
	if (ret == -ENOMEM) {
		config_error(r, "out of memory");
		return;
	}
	option_describe(d, accepts, sizeof(accepts));
	config_error(r,
		     "'%s = %s': %s %s; write %s there, or delete the line "
		     "to use the default",
		     d->name, value,
		     ret == -ERANGE ? "out of range, it must be"
				    : "not valid, it must be",
		     accepts,
		     d->kind == OPT_CHOICE || d->kind == OPT_FLAG ? "one of "
								    "them"
								  : "one");
}

/* inih calls this for each "name = value"; errors are counted, not fatal. */
static int on_setting(void *user, const char *section, const char *name,
		      const char *value)
{
	struct config_reader *r = user;
	const struct opt_desc *d = option_find(name);
	char names[512];

	if (section[0]) {
		config_error(r,
			     "'%s' is under [%s], but blkbackd.conf has no "
			     "sections; delete the [%s] line",
			     name, section, section);
	} else if (!d) {
		options_list_settings(names, sizeof(names));
		config_error(r, "unknown setting '%s'; the settings are %s",
			     name, names);
	} else if (!option_is_setting(d)) {
		config_error(r,
			     "'%s' can only be given on the command line "
			     "(--%s); delete the line",
			     name, name);
	} else if (remember(r, d) == 0) {
		set_value(r, d, value);
	}
	return 1;
}

int config_parse(struct options *opts, const char *path, const char *text,
		 size_t len)
{
	struct config_reader r = {
		.path = path,
		.text = text,
		.len = len,
		.opts = opts,
	};
	int syntax_line;

	/*
	 * inih goes on after a line it cannot parse but returns only the
	 * first such line; the handler reports every other error itself.
	 */
	syntax_line = ini_parse_stream(read_line, &r, on_setting, &r);
	if (syntax_line > 0) {
		r.line = (unsigned int)syntax_line;
		config_error(&r, "not a 'name = value' line (comments start "
				 "with '#' or ';'); fix or delete it");
	} else if (syntax_line < 0) {
		log_err("cannot parse %s: out of memory", path);
		r.errors++;
	}
	return r.errors ? -EINVAL : 0;
}

int config_load(struct options *opts, const char *path, bool must_exist)
{
	char *text = NULL;
	size_t len = 0;
	int ret = config_read(path, must_exist, &text, &len);

	if (ret != 0)
		return ret;
	ret = config_parse(opts, path, text, len);
	free(text);
	return ret;
}
