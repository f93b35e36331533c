/* SPDX-License-Identifier: MIT */
/*
 * Where a worker runs (--pin-workers): on a CPU of its own, with the
 * interrupts of its event channels routed to that CPU.
 *
 * Why: a guest's event reaches its worker through the interrupt Linux
 * bound the port to, and Linux deals the interrupts of user ports out to
 * the CPUs in turn. A worker is then often woken from another CPU, and
 * under Xen such a wake-up costs dom0 a second vCPU's wake-up through the
 * hypervisor, where xen-blkback handles the event on the vCPU that took
 * it. The event-channel device names each port's interrupt after the
 * thread that opened the device ("evtchn:<comm>" in /proc/interrupts), so
 * a worker with a name of its own (worker.c: "blkbackd-wN") finds its
 * ports' interrupts there and sets their affinity.
 *
 * Both need rights the shipped unit does not give: sched_setaffinity()
 * (its SystemCallFilter= refuses @resources) and a writable /proc/irq
 * (ProtectKernelTunables=). blkbackd(8) says what a drop-in must change.
 *
 * Called on the worker thread itself; no state of its own.
 */
#ifndef BLKBACKD_CPU_AFFINITY_H
#define BLKBACKD_CPU_AFFINITY_H

/*
 * The CPU for worker @index: the @index-th (counting round) of the CPUs
 * the calling thread may run on. Returns it, or -errno.
 */
int affinity_pick_cpu(unsigned int index);

/* Let the calling thread run on @cpu alone. 0 or -errno. */
int affinity_pin_self(int cpu);

/*
 * Route to @cpu every interrupt whose handler is named @name in
 * /proc/interrupts and is not routed there yet. Returns how many it
 * moved, or -errno of the first it could not move.
 */
int affinity_route_irqs(const char *name, int cpu);

#endif /* BLKBACKD_CPU_AFFINITY_H */
