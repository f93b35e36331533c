// SPDX-License-Identifier: MIT
/*
 * Fuzz harness: blkbackd.conf as the daemon parses it (config_parse() in
 * blkbackd/config-file.c, over the option table of blkbackd/options.c).
 *
 * Input: the file's bytes, as they are (NUL bytes, long lines, no final
 * newline and all). The size cap and the refusal of what is no regular
 * file come before the parser (config_load()) and are covered by
 * tests/config-not-a-file.sh instead.
 *
 * log_msg() is this file's, which takes precedence over blkbackd/log.c
 * (not linked): the parser runs unchanged, and its errors are counted
 * and checked instead of printed.
 *
 * Invariants: the parse returns 0 or -EINVAL, never anything else; it
 * fails exactly when it logged an error, and every error names the file,
 * and a line of it where it names one; a setting that differs from its
 * default after a good parse is named in the input; parsing the same
 * input again gives the same settings; and nothing leaks or overflows
 * (ASan, UBSan).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>

#include "blkbackd/config-file.h"
#include "blkbackd/log.h"
#include "tests/fuzz/fuzz.h"

#define PATH "fuzz.conf"

static struct {
	unsigned int errors;
	unsigned int max_line; /* the input's lines, plus one */
} seen;

/* Every error the parser reports comes here; the rest is dropped. */
void log_msg(int priority, const char *fmt, ...)
{
	char msg[2048];
	unsigned long line;
	char *end;
	va_list ap;

	if (priority > LOG_ERR)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	seen.errors++;
	FUZZ_ASSERT(strstr(msg, PATH) != NULL);
	if (strncmp(msg, PATH ":", strlen(PATH) + 1) != 0)
		return;
	line = strtoul(msg + strlen(PATH) + 1, &end, 10);
	FUZZ_ASSERT(*end == ':');
	FUZZ_ASSERT(line >= 1 && line <= seen.max_line);
}

/* Not called by the parser; here so that nothing else needs log.c. */
void log_disk_msg(int priority, const struct log_disk *disk, int err,
		  const char *fmt, ...)
{
	(void)priority;
	(void)disk;
	(void)err;
	(void)fmt;
}

struct input {
	const uint8_t *data;
	size_t size;
};

static void named_in_input(const struct opt_desc *d, void *arg)
{
	const struct input *in = arg;

	FUZZ_ASSERT(memmem(in->data, in->size, d->name, strlen(d->name)));
}

static void never_differs(const struct opt_desc *d, void *arg)
{
	(void)d;
	(void)arg;
	FUZZ_ASSERT(!"the same input gave other settings");
}

/* Parse @data over the defaults into @o; its result. */
static int parse(struct options *o, const uint8_t *data, size_t size)
{
	FUZZ_ASSERT(options_set_defaults(o) == 0);
	return config_parse(o, PATH, (const char *)data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct options defaults, first, again;
	struct input in = { data, size };
	unsigned int errors;
	int ret;

	if (size > CONFIG_MAX_BYTES)
		return 0; /* config_load() refuses it before parsing */
	seen.errors = 0;
	seen.max_line = 1;
	for (size_t i = 0; i < size; i++)
		seen.max_line += data[i] == '\n';
	ret = parse(&first, data, size);
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL);
	FUZZ_ASSERT((ret == 0) == (seen.errors == 0));
	errors = seen.errors;

	FUZZ_ASSERT(options_set_defaults(&defaults) == 0);
	if (ret == 0)
		options_each_change(&defaults, &first, named_in_input, &in);

	seen.errors = 0;
	FUZZ_ASSERT(parse(&again, data, size) == ret);
	FUZZ_ASSERT(seen.errors == errors);
	options_each_change(&first, &again, never_differs, NULL);

	options_release(&defaults);
	options_release(&first);
	options_release(&again);
	return 0;
}
