/* SPDX-License-Identifier: MIT */
/*
 * What every fuzz harness shares: the libFuzzer entry point, a reader that
 * takes little-endian fields off the input (zeros once it runs out, so
 * every input is a valid one), and an assertion that stops the run with a
 * message the fuzzer keeps next to the crashing input.
 *
 * Each harness is built twice: with clang and libFuzzer (--enable-fuzz),
 * and with the project's compiler against tests/fuzz/replay.c, which feeds
 * it the committed seed corpus in `make check`.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant the code under test broke: report it and crash. */
#define FUZZ_ASSERT(cond)                                                \
	do {                                                             \
		if (!(cond)) {                                           \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", \
				__FILE__, __LINE__, #cond);              \
			abort();                                         \
		}                                                        \
	} while (0)

struct fuzz_input {
	const uint8_t *p;
	size_t left;
};

/* Copy @n bytes off the input into @out, zero-filled past its end. */
static inline void fuzz_take_bytes(struct fuzz_input *in, void *out, size_t n)
{
	size_t have = n < in->left ? n : in->left;

	memcpy(out, in->p, have);
	memset((uint8_t *)out + have, 0, n - have);
	in->p += have;
	in->left -= have;
}

/* The next @bytes (at most 8) bytes as a little-endian number. */
static inline uint64_t fuzz_take(struct fuzz_input *in, unsigned int bytes)
{
	uint8_t b[8];
	uint64_t v = 0;

	fuzz_take_bytes(in, b, bytes);
	while (bytes-- > 0)
		v = v << 8 | b[bytes];
	return v;
}

/* A little-endian field of @bytes bytes at @off in @buf. */
static inline uint64_t fuzz_field(const uint8_t *buf, size_t off,
				  unsigned int bytes)
{
	uint64_t v = 0;

	while (bytes-- > 0)
		v = v << 8 | buf[off + bytes];
	return v;
}

#endif /* TESTS_FUZZ_FUZZ_H */
