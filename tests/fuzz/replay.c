// SPDX-License-Identifier: MIT
/*
 * The harnesses without libFuzzer: feed each file named on the command
 * line, or each file in each directory named, to LLVMFuzzerTestOneInput
 * once. `make check` replays the committed seed corpora this way with the
 * project's own compiler (and, in CI's sanitizer pass, under ASan/UBSan);
 * a broken invariant aborts, naming the input first.
 *
 *   replay-NAME FILE-OR-DIR...
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

/* Inputs larger than this are not seeds; libFuzzer's default -max_len. */
#define REPLAY_MAX_BYTES (1u << 20)

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf, *exact;
	size_t n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	buf = malloc(REPLAY_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, REPLAY_MAX_BYTES + 1, f);
	fclose(f);
	if (n > REPLAY_MAX_BYTES) {
		fprintf(stderr, "replay: %s: larger than %u bytes\n", path,
			REPLAY_MAX_BYTES);
		free(buf);
		return -1;
	}
	/* Named before running, so an abort says which input broke. */
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
	/* An exact-size copy, so ASan sees any read past the input. */
	exact = realloc(buf, n ? n : 1);
	if (exact)
		buf = exact;
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

/* Replays every regular file in @dir, in no particular order. */
static int replay_dir(const char *dir, unsigned int *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL && ret == 0) {
		char path[4096];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		ret = replay_file(path);
		(*count)++;
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned int count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		int ret;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			return EXIT_FAILURE;
		}
		if (S_ISDIR(st.st_mode)) {
			ret = replay_dir(argv[i], &count);
		} else {
			ret = replay_file(argv[i]);
			count++;
		}
		if (ret < 0)
			return EXIT_FAILURE;
	}
	if (count == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return EXIT_FAILURE;
	}
	printf("replay: %u inputs, every invariant held\n", count);
	return EXIT_SUCCESS;
}
