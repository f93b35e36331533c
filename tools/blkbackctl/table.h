/* SPDX-License-Identifier: MIT */
/*
 * A table of text cells printed with each column as wide as its widest
 * cell, so that no value overflows into the next column whatever the
 * content (an ABI name, a long image path, a domain's name). The last
 * column is not padded. Cells are copied; a NULL or empty cell prints "-".
 */
#ifndef BLKBACKCTL_TABLE_H
#define BLKBACKCTL_TABLE_H

#include <stdio.h>

struct table;

/* A table of @ncols columns whose first row is @header; NULL on ENOMEM. */
struct table *table_new(size_t ncols, const char *const *header);

/* Append a row of ncols cells. Returns 0 or -ENOMEM. */
int table_add(struct table *t, const char *const *cells);

/* Print every row to @out and free the table. Returns 0 or -EIO. */
int table_print(struct table *t, FILE *out);

void table_free(struct table *t);

#endif /* BLKBACKCTL_TABLE_H */
