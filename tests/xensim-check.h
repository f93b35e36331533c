/* SPDX-License-Identifier: MIT */
/* Tiny assertion helpers for the xensim unit tests. */
#ifndef XENSIM_CHECK_H
#define XENSIM_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                      \
	do {                                                                \
		long long va_ = (long long)(a), vb_ = (long long)(b);       \
		if (va_ != vb_) {                                           \
			fprintf(stderr,                                     \
				"%s:%d: %s == %lld, expected %s == %lld\n", \
				__FILE__, __LINE__, #a, va_, #b, vb_);      \
			exit(1);                                            \
		}                                                           \
	} while (0)

#endif /* XENSIM_CHECK_H */
