// SPDX-License-Identifier: MIT
/*
 * Pinning a worker and routing its event channels' interrupts; see
 * cpu-affinity.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blkbackd/cpu-affinity.h"

int affinity_pick_cpu(unsigned int index)
{
	cpu_set_t set;
	int count, cpu;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	count = CPU_COUNT(&set);
	if (count <= 0)
		return -ENOENT;
	index %= (unsigned int)count;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && index-- == 0)
			return cpu;
	return -ENOENT;
}

int affinity_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/*
 * The IRQ number of one line of /proc/interrupts if its handlers, the
 * last field (several are separated by ", "), include @name; -1 if not.
 */
static int irq_named(char *line, const char *name)
{
	size_t len = strlen(line), n = strlen(name);
	char *end;
	long irq;

	while (len && isspace((unsigned char)line[len - 1]))
		line[--len] = '\0';
	if (len <= n || strcmp(line + len - n, name) != 0 ||
	    (line[len - n - 1] != ' ' && line[len - n - 1] != ','))
		return -1;
	irq = strtol(line, &end, 10);
	if (end == line || *end != ':' || irq < 0 || irq > 1 << 24)
		return -1;
	return (int)irq;
}

/* 1 when @buf went in whole, else -errno (-EIO for a short write). */
static int write_whole(int fd, const char *buf, size_t len)
{
	ssize_t done = write(fd, buf, len);

	if (done < 0)
		return -errno;
	return (size_t)done == len ? 1 : -EIO;
}

/* 1 when moved, 0 when it was routed to @cpu alone already, or -errno. */
static int route_irq(int irq, int cpu)
{
	char path[64], now[64], want[16];
	ssize_t got;
	int fd, len, ret = 0;

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(want, sizeof(want), "%d\n", cpu);
	got = read(fd, now, sizeof(now) - 1);
	if (got >= 0)
		now[got] = '\0';
	if (got < 0 || strcmp(now, want) != 0) {
		/* A seq_file: no pwrite(), but it seeks. */
		if (lseek(fd, 0, SEEK_SET) < 0)
			ret = -errno;
		else
			ret = write_whole(fd, want, (size_t)len);
	}
	close(fd);
	return ret;
}

int affinity_route_irqs(const char *name, int cpu)
{
	FILE *f = fopen("/proc/interrupts", "re");
	char *line = NULL;
	size_t cap = 0;
	int moved = 0, irq, ret;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) >= 0) {
		irq = irq_named(line, name);
		if (irq < 0)
			continue;
		ret = route_irq(irq, cpu);
		if (ret < 0) {
			moved = ret;
			break;
		}
		moved += ret;
	}
	free(line);
	fclose(f);
	return moved;
}
