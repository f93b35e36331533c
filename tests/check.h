/* SPDX-License-Identifier: MIT */
/*
 * The smallest test harness that says what failed and where.
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures;

#define CHECK(cond)                                                    \
	do {                                                           \
		if (!(cond)) {                                         \
			fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, \
				__LINE__, #cond);                      \
			check_failures++;                              \
		}                                                      \
	} while (0)

#define CHECK_EQ(a, b)                                                    \
	do {                                                              \
		long long _a = (long long)(a), _b = (long long)(b);       \
		if (_a != _b) {                                           \
			fprintf(stderr,                                   \
				"%s:%d: FAIL: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, _a, _b);      \
			check_failures++;                                 \
		}                                                         \
	} while (0)

/* Like CHECK and CHECK_EQ, but stop the test: what follows depends on it. */
#define REQUIRE(cond)                          \
	do {                                   \
		int _before = check_failures;  \
		CHECK(cond);                   \
		if (check_failures != _before) \
			exit(EXIT_FAILURE);    \
	} while (0)

#define REQUIRE_EQ(a, b)                       \
	do {                                   \
		int _before = check_failures;  \
		CHECK_EQ(a, b);                \
		if (check_failures != _before) \
			exit(EXIT_FAILURE);    \
	} while (0)

/* A private scratch directory for the test, removed when it exits. */
static char check_dir[256];

static inline void check_remove_dir(void)
{
	char cmd[sizeof(check_dir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", check_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", check_dir);
}

static inline const char *check_make_dir(const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(check_dir, sizeof(check_dir), "%s/%s.XXXXXX",
		 tmp ? tmp : "/tmp", name);
	REQUIRE(mkdtemp(check_dir) != NULL);
	atexit(check_remove_dir);
	return check_dir;
}

static inline int check_done(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name,
			check_failures);
		return EXIT_FAILURE;
	}
	printf("%s: all checks passed\n", name);
	return EXIT_SUCCESS;
}

#endif /* TESTS_CHECK_H */
