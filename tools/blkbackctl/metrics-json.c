// SPDX-License-Identifier: MIT
/*
 * The metrics' text read back as JSON (see metrics-json.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/parse.h"
#include "tools/blkbackctl/metrics-json.h"

/* A metric or label name at *@p, copied to @buf; *@p moves past it. */
static int read_name(const char **p, char *buf, size_t len)
{
	size_t n = 0;

	if (!isalpha((unsigned char)**p) && **p != '_' && **p != ':')
		return -EINVAL;
	while (isalnum((unsigned char)(*p)[n]) || (*p)[n] == '_' ||
	       (*p)[n] == ':')
		n++;
	if (n >= len)
		return -EINVAL;
	memcpy(buf, *p, n);
	buf[n] = '\0';
	*p += n;
	return 0;
}

/*
 * Text up to @end (a quote, or the end of the line) with the format's
 * escapes (\\, \", \n) undone, into @buf; *@p moves to @end.
 */
static int read_escaped(const char **p, char end, char *buf, size_t len)
{
	size_t n = 0;

	for (; **p && **p != end && **p != '\n'; (*p)++) {
		char c = **p;

		if (c == '\\') {
			c = *++*p;
			if (c == 'n')
				c = '\n';
			else if (c != '\\' && c != '"')
				return -EINVAL;
		}
		if (n + 1 >= len)
			return -EINVAL;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return **p == end ? 0 : -EINVAL;
}

/* {name="value",...} at *@p into @labels. */
static int read_labels(const char **p, json_object *labels)
{
	char name[128], value[1024];

	if (**p != '{')
		return 0;
	(*p)++;
	while (**p != '}') {
		if (read_name(p, name, sizeof(name)) < 0 || *(*p)++ != '=' ||
		    *(*p)++ != '"' ||
		    read_escaped(p, '"', value, sizeof(value)))
			return -EINVAL;
		(*p)++;
		json_object_object_add(labels, name,
				       json_object_new_string(value));
		if (**p == ',')
			(*p)++;
		else if (**p != '}')
			return -EINVAL;
	}
	(*p)++;
	return 0;
}

/* A sample's value: exact when a whole number, else a double. */
static json_object *read_value(const char *s)
{
	uint64_t n;
	char *end;
	double d;

	if (blk_parse_u64(s, UINT64_MAX, &n) == 0)
		return json_object_new_uint64(n);
	d = strtod(s, &end);
	if (end == s || *end)
		return NULL;
	return json_object_new_double(d);
}

/* "NAME{LABELS} VALUE" into the samples of @family. */
static int read_sample(const char *line, json_object *family)
{
	json_object *sample, *labels, *samples, *value;
	char name[128];

	if (!family || !json_object_object_get_ex(family, "samples", &samples))
		return -EINVAL;
	if (read_name(&line, name, sizeof(name)) < 0)
		return -EINVAL;
	labels = json_object_new_object();
	if (read_labels(&line, labels) < 0 || *line++ != ' ' ||
	    !(value = read_value(line))) {
		json_object_put(labels);
		return -EINVAL;
	}
	sample = json_object_new_object();
	json_object_object_add(sample, "name", json_object_new_string(name));
	json_object_object_add(sample, "labels", labels);
	json_object_object_add(sample, "value", value);
	json_object_array_add(samples, sample);
	return 0;
}

/*
 * "# HELP NAME TEXT" starts a family (metrics.c writes HELP, then TYPE);
 * "# TYPE NAME TYPE" gives it its type. Other comments are skipped.
 */
static int read_comment(const char *line, json_object *families,
			json_object **family)
{
	char name[128], text[1024];
	bool help = strncmp(line, "# HELP ", 7) == 0;

	if (!help && strncmp(line, "# TYPE ", 7) != 0)
		return 0;
	line += 7;
	if (read_name(&line, name, sizeof(name)) < 0 || *line++ != ' ' ||
	    read_escaped(&line, '\0', text, sizeof(text)) < 0)
		return -EINVAL;
	if (help || !*family ||
	    strcmp(json_object_get_string(json_object_object_get(*family, "nam"
									  "e")),
		   name) != 0) {
		*family = json_object_new_object();
		json_object_object_add(*family, "name",
				       json_object_new_string(name));
		json_object_object_add(*family, "samples",
				       json_object_new_array());
		json_object_array_add(families, *family);
	}
	json_object_object_add(*family, help ? "help" : "type",
			       json_object_new_string(text));
	return 0;
}

int metrics_text_to_json(const char *text, json_object **out)
{
	json_object *families = json_object_new_array(), *family = NULL;
	char *copy = strdup(text), *line, *save = NULL;
	int ret = copy ? 0 : -ENOMEM;

	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line && !ret;
	     line = strtok_r(NULL, "\n", &save))
		ret = line[0] == '#' ? read_comment(line, families, &family)
				     : read_sample(line, family);
	free(copy);
	if (ret < 0) {
		json_object_put(families);
		return ret;
	}
	*out = json_object_new_object();
	json_object_object_add(*out, "families", families);
	return 0;
}
