// SPDX-License-Identifier: MIT
/*
 * The token buckets of per-disk I/O limits (libblk/throttle.h), on a
 * clock the test moves: the rates over a long run, the burst after idling,
 * byte debt, the waits it asks for, a limit changed or lifted, and the
 * time it counts as held back.
 */
#include <stdint.h>

#include "libblk/throttle.h"
#include "tests/check.h"

#define MS 1000000ull
#define S 1000000000ull

/*
 * Run a guest that always has requests of @bytes, from @start for @span
 * ns, starting each as soon as the bucket lets it and sleeping exactly the
 * wait it is told. Returns the requests started.
 */
static uint64_t run(struct blk_throttle *t, uint64_t start, uint64_t span,
		    uint64_t bytes)
{
	uint64_t now = start, n = 0, wait;

	while (now < start + span) {
		wait = blk_throttle_admit(t, now);
		if (wait) {
			CHECK(wait <= BLK_THROTTLE_MAX_WAIT_NS);
			now += wait;
			continue;
		}
		blk_throttle_charge(t, bytes);
		n++;
	}
	return n;
}

static void iops_rate(void)
{
	struct blk_throttle t;
	uint64_t n;

	blk_throttle_init(&t);
	blk_throttle_set(&t, &(struct blk_throttle_limits){ .iops = 200 });
	/* 10 s at 200/s, plus the burst of a tenth of a second. */
	n = run(&t, 1 * S, 10 * S, 4096);
	CHECK(n >= 2000 && n <= 2000 + 20 + 1);
	blk_throttle_destroy(&t);
}

static void bandwidth_rate_and_debt(void)
{
	struct blk_throttle t;
	uint64_t n;

	blk_throttle_init(&t);
	blk_throttle_set(&t, &(struct blk_throttle_limits){ .bps = 1 << 20 });
	/* 1 MiB/s in 64 KiB requests: 16 per second, 160 in 10 s. */
	n = run(&t, 1 * S, 10 * S, 65536);
	CHECK(n >= 160 && n <= 160 + 3);
	/* A request larger than the burst starts, the next one waits it off. */
	CHECK_EQ(blk_throttle_admit(&t, 20 * S), 0);
	blk_throttle_charge(&t, 4 << 20);
	n = blk_throttle_admit(&t, 20 * S);
	CHECK(n > 0);
	/* Four seconds of debt: it asks again after at most the cap. */
	CHECK_EQ(n, BLK_THROTTLE_MAX_WAIT_NS);
	CHECK(blk_throttle_admit(&t, 23 * S) > 0);
	CHECK_EQ(blk_throttle_admit(&t, 25 * S), 0);
	blk_throttle_destroy(&t);
}

static void burst_after_idle(void)
{
	struct blk_throttle t;
	uint64_t n = 0;

	blk_throttle_init(&t);
	blk_throttle_set(&t, &(struct blk_throttle_limits){ .iops = 1000 });
	run(&t, 1 * S, 1 * S, 0);
	/* Idle for a minute: no more than a tenth of a second ahead. */
	while (blk_throttle_admit(&t, 62 * S) == 0 && n < 1000)
		n++;
	CHECK_EQ(n, 100);
	blk_throttle_destroy(&t);
}

static void change_and_lift(void)
{
	struct blk_throttle t;
	struct blk_throttle_info info;
	uint64_t n;

	blk_throttle_init(&t);
	CHECK(!blk_throttle_limited(&t));
	CHECK(!blk_throttle_limited(NULL));
	blk_throttle_set(&t, &(struct blk_throttle_limits){ .iops = 10 });
	CHECK(blk_throttle_limited(&t));
	n = run(&t, 1 * S, 5 * S, 0);
	CHECK(n >= 50 && n <= 52);
	/* Held for nearly all of those five seconds. */
	blk_throttle_read(&t, 6 * S, &info);
	CHECK_EQ(info.lim.iops, 10);
	CHECK(info.throttled_ns >= 4 * S && info.throttled_ns <= 5 * S);

	blk_throttle_set(&t, &(struct blk_throttle_limits){ .iops = 1000 });
	n = run(&t, 6 * S, 1 * S, 0);
	CHECK(n >= 1000 && n <= 1100 + 1);

	/* Lifted: everything goes, and no more time is counted. */
	blk_throttle_set(&t, &(struct blk_throttle_limits){ 0 });
	CHECK(!blk_throttle_limited(&t));
	blk_throttle_read(&t, 8 * S, &info);
	n = info.throttled_ns;
	for (int i = 0; i < 100000; i++)
		CHECK_EQ(blk_throttle_admit(&t, 8 * S), 0);
	blk_throttle_read(&t, 100 * S, &info);
	CHECK_EQ(info.throttled_ns, n);
	blk_throttle_destroy(&t);
}

int main(void)
{
	iops_rate();
	bandwidth_rate_and_debt();
	burst_after_idle();
	change_and_lift();
	return check_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
