// SPDX-License-Identifier: MIT
/*
 * Against the xenstored that xensim-host started (XENSTORED_PATH and
 * XENSIM_DIR from its env file): reads and writes work, and
 * @introduceDomain / @releaseDomain fire for xs_introduce_domain /
 * xs_release_domain, and for a simulated domain's death (the shim's
 * VIRQ_DOM_EXC), as a backend watching them would see on Xen.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xenstore.h>

#include "tests/check.h"
#include "tools/xensim/xensim.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

/* Wait up to 5 s for a watch event with @token; others are skipped. */
static bool saw_event(struct xs_handle *xs, const char *token)
{
	long long deadline = now_ms() + 5000;
	struct pollfd pfd = { .fd = xs_fileno(xs), .events = POLLIN };
	char **ev;
	bool hit;

	while (now_ms() < deadline) {
		while ((ev = xs_check_watch(xs))) {
			hit = !strcmp(ev[XS_WATCH_TOKEN], token);
			free(ev);
			if (hit)
				return true;
		}
		poll(&pfd, 1, 100);
	}
	return false;
}

static void drain_events(struct xs_handle *xs)
{
	char **ev;

	while ((ev = xs_check_watch(xs)))
		free(ev);
}

int main(void)
{
	const char *dir = xensim_dir();
	struct xs_handle *xs;
	unsigned int len;
	char *val;

	if (!dir || !getenv("XENSTORED_PATH")) {
		fprintf(stderr, "run me from xensim-host.sh\n");
		return 77;
	}
	xs = xs_open(0);
	REQUIRE(xs != NULL);

	REQUIRE(xs_write(xs, XBT_NULL, "/test/key", "value", 5));
	val = xs_read(xs, XBT_NULL, "/test/key", &len);
	REQUIRE(val && len == 5 && !memcmp(val, "value", 5));
	free(val);

	REQUIRE(xs_watch(xs, "@introduceDomain", "intro"));
	REQUIRE(xs_watch(xs, "@releaseDomain", "release"));
	REQUIRE(saw_event(xs, "intro")); /* the initial events */
	REQUIRE(saw_event(xs, "release"));
	drain_events(xs);

	REQUIRE_EQ(xensim_domain_create(dir, 5, 4), 0);
	REQUIRE(xs_introduce_domain(xs, 5, 0x1234, 7));
	REQUIRE(saw_event(xs, "intro"));
	REQUIRE(xs_is_domain_introduced(xs, 5));
	REQUIRE(xs_release_domain(xs, 5));
	REQUIRE(saw_event(xs, "release"));
	REQUIRE(!xs_is_domain_introduced(xs, 5));

	/* A domain that dies is released by xenstored on its own. */
	REQUIRE_EQ(xensim_domain_create(dir, 6, 4), 0);
	REQUIRE(xs_introduce_domain(xs, 6, 0x1234, 7));
	REQUIRE(saw_event(xs, "intro"));
	drain_events(xs);
	REQUIRE_EQ(xensim_domain_destroy(dir, 6), 0);
	REQUIRE(saw_event(xs, "release"));
	REQUIRE(!xs_is_domain_introduced(xs, 6));
	REQUIRE(xs_is_domain_introduced(xs, 0));

	xs_close(xs);
	printf("xenstored under xsdshim: introduce/release ok\n");
	return 0;
}
