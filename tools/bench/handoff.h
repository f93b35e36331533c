/* SPDX-License-Identifier: MIT */
/*
 * The host's cost of handing work from one thread to another that sleeps:
 * the round trip of a one-byte datagram between two threads, both on one
 * CPU, then on two. Under the simulator every request through blkbackd
 * makes two such hand-offs that raw io_uring does not (the guest's event
 * to the daemon's worker, the worker's answer back to the guest), so this
 * is the floor under the latency the blkbackd arm adds. On a virtual
 * machine a wake-up that crosses CPUs can cost tens of microseconds (the
 * sleeping vCPU has to be woken by the hypervisor), against one or two on
 * the same CPU; which of the two a request pays depends on where the
 * scheduler put the guest and the worker.
 *
 * Called from the main thread only, before the arms run, so that nothing
 * else competes for the CPUs it measures.
 */
#ifndef BENCH_HANDOFF_H
#define BENCH_HANDOFF_H

#include <stdbool.h>

struct handoff_figures {
	bool same_measured, cross_measured;
	double same_cpu_us; /* median round trip, both threads on cpu_a */
	double cross_cpu_us; /* median round trip, one on cpu_a, one on cpu_b */
	int cpu_a, cpu_b;
	char note[128]; /* why a figure is missing */
};

/* Fill @f; never fails as a whole: what could not be measured says why. */
void handoff_measure(struct handoff_figures *f);

#endif /* BENCH_HANDOFF_H */
