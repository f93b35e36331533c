// SPDX-License-Identifier: MIT
/*
 * Columns sized from their content (see table.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/blkbackctl/table.h"

struct table {
	size_t ncols, nrows, cap;
	char **cells; /* row-major, nrows * ncols */
};

struct table *table_new(size_t ncols, const char *const *header)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ncols = ncols;
	if (table_add(t, header) < 0) {
		table_free(t);
		return NULL;
	}
	return t;
}

int table_add(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		char **bigger =
			reallocarray(t->cells, cap * t->ncols, sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		t->cells = bigger;
		t->cap = cap;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		const char *s = cells[c] && cells[c][0] ? cells[c] : "-";
		char *copy = strdup(s);

		if (!copy) {
			while (c--)
				free(t->cells[t->nrows * t->ncols + c]);
			return -ENOMEM;
		}
		t->cells[t->nrows * t->ncols + c] = copy;
	}
	t->nrows++;
	return 0;
}

int table_print(struct table *t, FILE *out)
{
	size_t *width = calloc(t->ncols, sizeof(*width));
	int ret = 0;

	if (!width) {
		table_free(t);
		return -ENOMEM;
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t len = strlen(t->cells[r * t->ncols + c]);

			if (len > width[c])
				width[c] = len;
		}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];

			if (c + 1 < t->ncols)
				fprintf(out, "%-*s  ", (int)width[c], s);
			else
				fprintf(out, "%s\n", s);
		}
	if (ferror(out))
		ret = -EIO;
	free(width);
	table_free(t);
	return ret;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}
