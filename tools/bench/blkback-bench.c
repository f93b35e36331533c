// SPDX-License-Identifier: MIT
/*
 * blkback-bench: does a file-backed guest disk survive concurrent guests?
 *
 * For each N in --guests, each job and each arm it starts N guests at once
 * (one process each, own image), lets each do the same fixed work, and
 * records every guest's elapsed time, the group's throughput, latency and
 * the backend's CPU. Every arm starts with its images out of the host's
 * page cache. Arms are interleaved within each round, in an order rotated
 * from round to round, after an unmeasured warm-up pass, so that
 * background noise and drift on the host hit them alike; --repeat takes
 * medians and keeps the spread.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/bench/cleanup.h"
#include "tools/bench/cpu.h"
#include "tools/bench/diskstat.h"
#include "tools/bench/engine-blkif.h"
#include "tools/bench/engine-uring.h"
#include "tools/bench/format.h"
#include "tools/bench/guests.h"
#include "tools/bench/idle.h"
#include "tools/bench/images.h"
#include "tools/bench/loopdev.h"
#include "tools/bench/nbdserve.h"
#include "tools/bench/options.h"
#include "tools/bench/procinfo.h"
#include "tools/bench/progress.h"
#include "tools/bench/rbdserve.h"
#include "tools/bench/report.h"
#include "tools/bench/syscount.h"
#include "tools/bench/xenhost.h"

struct bench {
	struct bench_options opt;
	const struct bench_config *cfg;
	struct bench_results results;
	struct bench_images images;
	char workdir[PATH_MAX];
	struct diskstat_dev disk; /* the images' block device, if any */
	struct xenhost host;
	bool host_up;
	struct rbd_store rbd; /* the RBD arm's cluster and images */
	struct idle_set idle; /* the idle guests attached while jobs run */
	char null_target[40]; /* the floor arm's image: null:SIZE */
	bool syscount_said; /* why system calls are not counted, said once */
	unsigned int run, nr_runs;
	bool warming; /* unmeasured runs: label them so */
};

/* One run of one cell: what the guests open and what the hooks sample. */
struct arm_run {
	struct bench *b;
	struct bench_cell *cell;
	enum bench_arm arm;
	char **paths; /* images, loop devices or NBD URIs in front of them */
	struct nbd_server *nbd; /* the NBD arm's servers */
	uint32_t *domids;
	double host_busy[2], host_steal[2], daemon_cpu[2];
	struct syscount calls; /* the daemon's system calls */
	double calls_made; /* counted over the run; NaN: not measured */
	uint64_t switches[2]; /* the daemon's voluntary context switches */
	bool have_switches;
	struct diskstat_sample disk[2];
	uint64_t cached_before, cached_at_start; /* bytes of the images */
};

/* The arms whose guests are simulated Xen guests served by the daemon. */
static bool uses_daemon(enum bench_arm arm)
{
	return arm == BENCH_ARM_BLKBACKD || arm == BENCH_ARM_NBD ||
	       arm == BENCH_ARM_RBD || arm == BENCH_ARM_FLOOR;
}

static void die(const char *what)
{
	fprintf(stderr, "blkback-bench: %s\n", what);
	exit(1);
}

static int open_guest_engine(unsigned int guest, void *arg,
			     const struct bench_job *job,
			     struct bench_engine **out, char *why,
			     size_t why_len)
{
	struct arm_run *r = arg;

	if (uses_daemon(r->arm))
		return engine_blkif_open(r->domids[guest], XENHOST_DEVID, job,
					 out, why, why_len);
	return engine_uring_open(r->paths[guest], job, out, why, why_len);
}

/* The host's counters at the start (0) or the end (1) of a run. */
static void sample_host(struct arm_run *r, int when)
{
	diskstat_read(&r->b->disk, &r->disk[when]);
	if (cpu_host_seconds(&r->host_busy[when], &r->host_steal[when]) < 0)
		r->host_busy[when] = r->host_steal[when] = NAN;
	if (!uses_daemon(r->arm) ||
	    xenhost_daemon_cpu(&r->b->host, &r->daemon_cpu[when]) < 0)
		r->daemon_cpu[when] = NAN;
}

/* The daemon's counts, started and stopped with the run. */
static void count_daemon(struct arm_run *r, int when)
{
	if (!uses_daemon(r->arm))
		return;
	if (when == 0)
		syscount_enable(&r->calls);
	else
		syscount_disable(&r->calls);
	if (proc_voluntary_switches(r->b->host.daemon, &r->switches[when]) < 0)
		r->have_switches = false;
}

static void on_started(void *arg)
{
	struct arm_run *r = arg;

	r->have_switches = uses_daemon(r->arm);
	count_daemon(r, 0);
	sample_host(r, 0);
}

static void on_finished(void *arg)
{
	sample_host(arg, 1);
	count_daemon(arg, 1);
}

/* Attach the system-call counter to the daemon, before the run. */
static void attach_counter(struct arm_run *r)
{
	char why[256];

	if (!uses_daemon(r->arm))
		return;
	if (syscount_attach(&r->calls, r->b->host.daemon, r->b->workdir, why,
			    sizeof(why)) < 0 &&
	    !r->b->syscount_said) {
		fprintf(stderr,
			"blkback-bench: the daemon's system calls are not "
			"measured: %s\n",
			why);
		r->b->syscount_said = true;
	}
}

/* "[3/12]", or "[warm-up]" for unmeasured runs. */
static const char *run_label(const struct bench *b, char *buf, size_t len)
{
	if (b->warming)
		snprintf(buf, len, "[warm-up]");
	else
		snprintf(buf, len, "[%u/%u]", b->run, b->nr_runs);
	return buf;
}

static void on_progress(void *arg, double fraction, unsigned int finished)
{
	struct arm_run *r = arg;
	char label[32];

	progress_update("%s %-9s %-8s N=%-4u %3.0f%%  %u done",
			run_label(r->b, label, sizeof(label)),
			bench_job_name(r->cell->job), bench_arm_name(r->arm),
			r->cell->n, fraction * 100, finished);
}

/* Put the arm's devices in front of the first @n images. */
static int arm_setup(struct arm_run *r, const struct bench_job *job,
		     struct loopdev *loops, char *why, size_t why_len)
{
	struct bench *b = r->b;
	unsigned int n = r->cell->n;
	int ret = 0;

	switch (r->arm) {
	case BENCH_ARM_RAW:
		for (unsigned int i = 0; i < n; i++)
			r->paths[i] = b->images.paths[i];
		return 0;
	case BENCH_ARM_LOOP:
	case BENCH_ARM_LOOP_DIO:
		for (unsigned int i = 0; i < n && !ret; i++) {
			ret = loopdev_attach(b->images.paths[i],
					     r->arm == BENCH_ARM_LOOP_DIO,
					     &loops[i], why, why_len);
			r->paths[i] = loops[i].path;
		}
		return ret;
	case BENCH_ARM_NBD:
		for (unsigned int i = 0; i < n && !ret; i++) {
			ret = nbdserve_start(&r->nbd[i], b->images.paths[i],
					     why, why_len);
			r->paths[i] = r->nbd[i].uri;
		}
		if (ret < 0)
			return ret;
		return xenhost_plug(&b->host, n, r->paths,
				    engine_blkif_guest_pages(job), r->domids,
				    why, why_len);
	case BENCH_ARM_RBD:
		return xenhost_plug(&b->host, n, b->rbd.targets,
				    engine_blkif_guest_pages(job), r->domids,
				    why, why_len);
	case BENCH_ARM_FLOOR:
		for (unsigned int i = 0; i < n; i++)
			r->paths[i] = b->null_target;
		return xenhost_plug(&b->host, n, r->paths,
				    engine_blkif_guest_pages(job), r->domids,
				    why, why_len);
	default:
		return xenhost_plug(&b->host, n, b->images.paths,
				    engine_blkif_guest_pages(job), r->domids,
				    why, why_len);
	}
}

static int arm_teardown(struct arm_run *r, struct loopdev *loops, char *why,
			size_t why_len)
{
	int ret = 0;

	switch (r->arm) {
	case BENCH_ARM_LOOP:
	case BENCH_ARM_LOOP_DIO:
		for (unsigned int i = 0; i < r->cell->n; i++)
			loopdev_detach(&loops[i]);
		return 0;
	case BENCH_ARM_BLKBACKD:
	case BENCH_ARM_NBD:
	case BENCH_ARM_RBD:
	case BENCH_ARM_FLOOR:
		ret = xenhost_unplug(&r->b->host, r->cell->n, r->domids, why,
				     why_len);
		if (!ret)
			ret = xenhost_check_daemon(&r->b->host, why, why_len);
		for (unsigned int i = 0; r->nbd && i < r->cell->n; i++)
			nbdserve_stop(&r->nbd[i]);
		return ret;
	default:
		return 0;
	}
}

/*
 * The backend's CPU seconds over the run, or NaN where the counters
 * cannot tell it from nothing (never 0 for work done): the daemon's clock
 * counts nanoseconds, so any CPU it used shows; the loop arms' figure is
 * the host's ticks minus the guests' exact time, and must stand above
 * what the ticks resolve (cpu.h) to be a measurement rather than noise.
 */
static double backend_cpu_seconds(const struct arm_run *r, double guests_cpu)
{
	double cpu = NAN, resolution = 0;

	switch (r->arm) {
	case BENCH_ARM_BLKBACKD:
	case BENCH_ARM_NBD: /* the daemon's only, not nbdkit's */
	case BENCH_ARM_RBD: /* ... nor Ceph's */
	case BENCH_ARM_FLOOR:
		cpu = r->daemon_cpu[1] - r->daemon_cpu[0];
		break;
	case BENCH_ARM_LOOP:
	case BENCH_ARM_LOOP_DIO:
		cpu = r->host_busy[1] - r->host_busy[0] - guests_cpu;
		resolution = cpu_host_resolution();
		break;
	default:
		break;
	}
	return cpu > resolution ? cpu : NAN;
}

/*
 * The host's figures in percent of all its CPUs over the run. Busy and
 * others come from /proc/stat, which the kernel samples a tick at a time,
 * while the guests and the daemon are timed exactly: over a short run the
 * ticks missed what the clocks counted, and busy minus them went negative
 * ("others -27%"). So both are not measured (NaN) unless they stand above
 * what the ticks resolve. Steal is what it is, 0 included.
 */
static void host_figures(const struct arm_run *r, struct bench_sample *s,
			 double guests_cpu, double backend_cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double all = s->wall_seconds * (double)ncpu / 100;
	double busy = r->host_busy[1] - r->host_busy[0];
	double res = cpu_host_resolution();
	/* Everything but the guests and the daemon; for loop its workers. */
	double others =
		busy - guests_cpu - (uses_daemon(r->arm) ? backend_cpu : 0);

	s->host_busy_pct = busy > res ? busy / all : NAN;
	s->host_steal_pct = (r->host_steal[1] - r->host_steal[0]) / all;
	s->host_others_pct = others > res ? others / all : NAN;
}

static double fairness_of(const struct bench_group *g)
{
	double lo = INFINITY, hi = 0;

	for (unsigned int i = 0; i < g->n; i++) {
		const struct bench_guest_result *res = &g->res[i];
		double rate = (double)(res->bytes_read + res->bytes_written) /
			      res->seconds;

		lo = rate < lo ? rate : lo;
		hi = rate > hi ? rate : hi;
	}
	return lo > 0 ? hi / lo : INFINITY;
}

/* The daemon's sleeps a request, where they were counted. */
static double switches_per_io(const struct arm_run *r, uint64_t ops)
{
	if (!r->have_switches)
		return NAN;
	return (double)(r->switches[1] - r->switches[0]) / (double)ops;
}

/* Turn the guests' results into a sample; refuse impossible numbers. */
static int make_sample(const struct arm_run *r, const struct bench_job *job,
		       const struct bench_group *g, struct bench_sample *s,
		       char *why, size_t why_len)
{
	struct lat_hist *lat = calloc(1, sizeof(*lat));
	double guests_cpu = 0, cpu, slack = g->wall_seconds * 1.01 + 0.02;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!lat)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->guest_seconds = calloc(g->n, sizeof(double));
	if (!s->guest_seconds) {
		free(lat);
		return -ENOMEM;
	}
	s->wall_seconds = g->wall_seconds;
	for (unsigned int i = 0; i < g->n; i++) {
		const struct bench_guest_result *res = &g->res[i];
		uint64_t bytes = res->bytes_read + res->bytes_written;

		s->guest_seconds[i] = res->seconds;
		s->ops += res->ops;
		s->bytes += bytes;
		guests_cpu += res->cpu_seconds;
		lat_merge(lat, &res->lat);
		if (!(res->seconds > 0) || res->seconds > slack) {
			snprintf(why, why_len,
				 "sanity: guest %u took %.3f s in a %.3f s run",
				 i, res->seconds, g->wall_seconds);
			goto insane;
		}
		/* The work, once or (--min-time) in whole rounds. */
		if (!job->time_limit &&
		    (!bytes || bytes % job->total ||
		     (!job->min_time && bytes != job->total))) {
			snprintf(why, why_len,
				 "sanity: guest %u did %llu bytes, not %llu "
				 "or a multiple",
				 i, (unsigned long long)bytes,
				 (unsigned long long)job->total);
			goto insane;
		}
	}
	if (!(s->wall_seconds > 0) || !s->ops || lat->count != s->ops) {
		snprintf(why, why_len, "sanity: %llu ops, %llu timed, %.3f s",
			 (unsigned long long)s->ops,
			 (unsigned long long)lat->count, s->wall_seconds);
		goto insane;
	}
	s->mbps = (double)s->bytes / 1e6 / s->wall_seconds;
	s->iops = (double)s->ops / s->wall_seconds;
	s->p50_us = lat_percentile_us(lat, 50);
	s->p99_us = lat_percentile_us(lat, 99);
	s->fairness = fairness_of(g);
	s->guest_cpu_us_per_io = guests_cpu / (double)s->ops * 1e6;
	cpu = backend_cpu_seconds(r, guests_cpu);
	/* /proc/stat counts in ticks: allow for their resolution. */
	if (cpu > s->wall_seconds * ncpu + cpu_host_resolution()) {
		snprintf(why, why_len,
			 "sanity: backend used %.2f CPU s in %.2f s on %ld "
			 "CPUs",
			 cpu, s->wall_seconds, ncpu);
		goto insane;
	}
	s->backend_cpu_us_per_io = cpu / (double)s->ops * 1e6;
	s->syscalls_per_io = r->calls_made / (double)s->ops;
	s->switches_per_io = switches_per_io(r, s->ops);
	/* The floor's disks are no device: what the device did was others'. */
	s->device_us_per_io =
		r->arm == BENCH_ARM_FLOOR
			? NAN
			: diskstat_us_per_io(&r->disk[0], &r->disk[1]);
	s->cached_before_mib = (double)r->cached_before / (1 << 20);
	s->cached_at_start_mib = (double)r->cached_at_start / (1 << 20);
	host_figures(r, s, guests_cpu, cpu);
	if (s->p50_us > s->p99_us || s->p99_us > slack * 1e6 * 1.04) {
		snprintf(why, why_len, "sanity: p50 %.0f us, p99 %.0f us",
			 s->p50_us, s->p99_us);
		goto insane;
	}
	free(lat);
	return 0;
insane:
	free(lat);
	free(s->guest_seconds);
	s->guest_seconds = NULL;
	return -ERANGE;
}

/* The run's line: every figure, or "not measured" where none is true. */
static void print_sample(const struct arm_run *r, const struct bench_sample *s)
{
	double lo = s->guest_seconds[0], hi = lo;
	char label[32], p50[24], p99[24], dev[24], busy[24], others[24],
		steal[24];
	int d;

	for (unsigned int i = 1; i < r->cell->n; i++) {
		lo = fmin(lo, s->guest_seconds[i]);
		hi = fmax(hi, s->guest_seconds[i]);
	}
	d = bench_decimals(lo, 2); /* both ends as the shorter one needs */
	progress_clear();
	fprintf(stderr,
		"%s %-9s %-8s N=%-4u guests %.*f-%.*f s (max/min %.3f), "
		"%.1f MB/s, %.0f IOPS, p50 %s p99 %s us, device %s, host busy "
		"%s (others %s) steal %s, cached %.0f MB before eviction\n",
		run_label(r->b, label, sizeof(label)),
		bench_job_name(r->cell->job), bench_arm_name(r->arm),
		r->cell->n, d, lo, d, hi, s->fairness, s->mbps, s->iops,
		bench_format(p50, sizeof(p50), s->p50_us, 0, "", "n/a"),
		bench_format(p99, sizeof(p99), s->p99_us, 0, "", "n/a"),
		bench_format(dev, sizeof(dev), s->device_us_per_io, 0, " us/io",
			     "not measured"),
		bench_format(busy, sizeof(busy), s->host_busy_pct, 0, "%",
			     "not measured"),
		bench_format(others, sizeof(others), s->host_others_pct, 0, "%",
			     "not measured"),
		bench_format(steal, sizeof(steal), s->host_steal_pct, 0, "%",
			     "not measured"),
		s->cached_before_mib * BENCH_MB_PER_MIB);
}

static void fail_cell(struct bench_cell *c, enum bench_cell_status st,
		      const char *why)
{
	c->status = st;
	/* A long reason is cut to fit the note. */
	snprintf(c->note, sizeof(c->note), "%.*s", (int)sizeof(c->note) - 1,
		 why);
	progress_clear();
	fprintf(stderr, "blkback-bench: %s %s N=%u %s: %s\n",
		bench_job_name(c->job), bench_arm_name(c->arm), c->n,
		st == BENCH_CELL_SKIPPED ? "skipped" : "FAILED", why);
}

/*
 * One run of @cell's arm: set up, run the guests, tear down, and turn what
 * they did into @s. On failure, @st says whether the arm cannot run here
 * (skipped) or went wrong (failed), and @why says why.
 */
static int run_arm(struct bench *b, struct bench_cell *cell,
		   const struct bench_job *job, struct bench_sample *s,
		   enum bench_cell_status *st, char *why, size_t why_len)
{
	unsigned int n = cell->n;
	struct arm_run r = { .b = b, .cell = cell, .arm = cell->arm };
	struct bench_group_hooks hooks = { on_started, on_finished, on_progress,
					   &r };
	struct loopdev *loops = calloc(n, sizeof(*loops));
	struct bench_group g = { 0 };
	char why2[512] = "";
	int ret, ret2;

	r.paths = calloc(n, sizeof(char *));
	r.nbd = calloc(n, sizeof(*r.nbd));
	r.domids = calloc(n, sizeof(uint32_t));
	for (unsigned int i = 0; loops && i < n; i++)
		loops[i].fd = -1;
	if (!loops || !r.paths || !r.nbd || !r.domids)
		die("out of memory");
	*st = BENCH_CELL_FAILED;
	images_evict(&b->images, n, &r.cached_before, &r.cached_at_start);
	ret = arm_setup(&r, job, loops, why, why_len);
	if (ret < 0) {
		arm_teardown(&r, loops, why2, sizeof(why2));
		/* No loop devices at all: the arm cannot run here. */
		if (ret == -ENOENT || ret == -EACCES)
			*st = BENCH_CELL_SKIPPED;
		goto out;
	}
	attach_counter(&r);
	ret = bench_group_run(n, job, open_guest_engine, &r, &hooks, &g, why,
			      why_len);
	r.calls_made = syscount_finish(&r.calls);
	ret2 = arm_teardown(&r, loops, why2, sizeof(why2));
	if (!ret && ret2 < 0) {
		snprintf(why, why_len, "%s", why2);
		ret = ret2;
	}
	if (!ret)
		ret = make_sample(&r, job, &g, s, why, why_len);
	if (!ret)
		print_sample(&r, s);
	bench_group_free(&g);
out:
	free(loops);
	free(r.paths);
	free(r.nbd);
	free(r.domids);
	return ret;
}

static void run_cell_once(struct bench *b, struct bench_cell *cell,
			  const struct bench_job *job)
{
	enum bench_cell_status st;
	char why[512] = "";

	if (run_arm(b, cell, job, &cell->samples[cell->nr_samples], &st, why,
		    sizeof(why)) < 0) {
		fail_cell(cell, st, why);
		return;
	}
	cell->nr_samples++;
	cell->status = BENCH_CELL_OK;
}

/*
 * An unmeasured run: the first runs of a fresh process, daemon and disk
 * are slower than the rest (page tables, thread pools, the disk's own
 * caches), and would otherwise always land on the first arm.
 */
static void warm_up(struct bench *b, struct bench_cell *cell,
		    const struct bench_job *job)
{
	struct bench_sample s = { 0 };
	enum bench_cell_status st;
	char why[512] = "";

	if (run_arm(b, cell, job, &s, &st, why, sizeof(why)) < 0) {
		progress_clear();
		fprintf(stderr, "blkback-bench: warm-up %s %s N=%u: %s\n",
			bench_job_name(cell->job), bench_arm_name(cell->arm),
			cell->n, why);
	}
	free(s.guest_seconds);
}

static enum bench_cpu_method cpu_method_of(enum bench_arm arm)
{
	switch (arm) {
	case BENCH_ARM_BLKBACKD:
	case BENCH_ARM_NBD:
	case BENCH_ARM_RBD:
	case BENCH_ARM_FLOOR:
		return BENCH_CPU_DAEMON;
	case BENCH_ARM_LOOP:
	case BENCH_ARM_LOOP_DIO:
		return BENCH_CPU_HOST_MINUS_GUESTS;
	default:
		return BENCH_CPU_NONE;
	}
}

static void make_cells(struct bench *b)
{
	const struct bench_config *cfg = b->cfg;
	unsigned int k = 0;

	b->results.cfg = cfg;
	b->results.nr_cells = cfg->nr_jobs * cfg->nr_arms * cfg->nr_guests;
	b->results.cells =
		calloc(b->results.nr_cells + 1, sizeof(struct bench_cell));
	if (!b->results.cells)
		die("out of memory");
	for (unsigned int j = 0; j < cfg->nr_jobs; j++)
		for (unsigned int a = 0; a < cfg->nr_arms; a++)
			for (unsigned int g = 0; g < cfg->nr_guests; g++) {
				struct bench_cell *c = &b->results.cells[k++];

				c->job = cfg->jobs[j];
				c->arm = cfg->arms[a];
				c->n = cfg->guests[g];
				c->cpu_method = cpu_method_of(c->arm);
			}
}

/* Mark every cell of @arm skipped, before anything ran. */
static void skip_arm(struct bench *b, enum bench_arm arm, const char *why)
{
	fprintf(stderr, "blkback-bench: arm %s skipped: %s\n",
		bench_arm_name(arm), why);
	for (unsigned int i = 0; i < b->results.nr_cells; i++) {
		struct bench_cell *c = &b->results.cells[i];

		if (c->arm == arm) {
			c->status = BENCH_CELL_SKIPPED;
			/* A long reason is cut to fit the note. */
			snprintf(c->note, sizeof(c->note), "%.*s",
				 (int)sizeof(c->note) - 1, why);
		}
	}
}

/* The RBD arm's cluster, with every image imported; else the arm skips. */
static void start_rbd(struct bench *b)
{
	char why[512];

	fprintf(stderr,
		"blkback-bench: starting a one-node Ceph cluster and "
		"importing %u images for the rbd arm\n",
		b->images.n);
	if (rbdserve_start(&b->rbd, b->cfg->ceph_cluster, b->workdir,
			   &b->images, why, sizeof(why)) < 0)
		skip_arm(b, BENCH_ARM_RBD, why);
}

/* What each arm needs, checked up front so that it fails early and once. */
static void check_arms(struct bench *b)
{
	const struct bench_config *cfg = b->cfg;
	char why[512];

	if ((bench_config_has_arm(cfg, BENCH_ARM_LOOP) ||
	     bench_config_has_arm(cfg, BENCH_ARM_LOOP_DIO)) &&
	    access("/dev/loop-control", R_OK | W_OK) < 0) {
		snprintf(why, sizeof(why),
			 "no loop devices: /dev/loop-control: %s (run as "
			 "root; modprobe loop)",
			 strerror(errno));
		skip_arm(b, BENCH_ARM_LOOP, why);
		skip_arm(b, BENCH_ARM_LOOP_DIO, why);
	}
	if (bench_config_has_arm(cfg, BENCH_ARM_NBD) &&
	    nbdserve_available(why, sizeof(why)) < 0)
		skip_arm(b, BENCH_ARM_NBD, why);
	if (bench_config_has_arm(cfg, BENCH_ARM_RBD) && b->images.n)
		start_rbd(b);
	if (bench_config_has_arm(cfg, BENCH_ARM_BLKBACKD) ||
	    bench_config_has_arm(cfg, BENCH_ARM_NBD) ||
	    bench_config_has_arm(cfg, BENCH_ARM_RBD) ||
	    bench_config_has_arm(cfg, BENCH_ARM_FLOOR)) {
		fprintf(stderr,
			"blkback-bench: starting the simulated host "
			"and %s\n",
			cfg->blkbackd);
		if (xenhost_start(&b->host, cfg->xensim_host, cfg->blkbackd,
				  b->opt.daemon_args, b->workdir, why,
				  sizeof(why)) < 0) {
			skip_arm(b, BENCH_ARM_BLKBACKD, why);
			skip_arm(b, BENCH_ARM_NBD, why);
			skip_arm(b, BENCH_ARM_RBD, why);
			skip_arm(b, BENCH_ARM_FLOOR, why);
		} else {
			b->host_up = true;
		}
	}
}

static void print_usage(const char *who, const struct proc_usage *u)
{
	fprintf(stderr,
		"  %-18s RSS %6.1f MB (own %6.1f, mapped %6.1f), %5u fds "
		"(limit %lu), %4u threads\n",
		who, u->rss_mib * BENCH_MB_PER_MIB,
		u->anon_mib * BENCH_MB_PER_MIB,
		u->shared_mib * BENCH_MB_PER_MIB, u->fds, u->nofile_limit,
		u->threads);
}

static void print_idle(const struct idle_figures *f)
{
	fprintf(stderr,
		"blkback-bench: %u idle guests attached in %.*f s (plug %.*f "
		"s, frontends %.*f s)\n",
		f->guests, bench_decimals(f->attach_seconds, 2),
		f->attach_seconds, bench_decimals(f->plug_seconds, 2),
		f->plug_seconds, bench_decimals(f->connect_seconds, 2),
		f->connect_seconds);
	print_usage("daemon before", &f->daemon_before);
	print_usage("daemon with them", &f->daemon);
	print_usage("frontend server", &f->server);
	if (f->have_xenstored)
		print_usage("xenstored", &f->xenstored);
}

/*
 * Attach each --idle-guests count in turn, from none; all but the last
 * are detached again. Runs before the jobs, which then run beside the
 * last set.
 */
static void attach_idle_guests(struct bench *b)
{
	const struct bench_config *cfg = b->cfg;
	char why[512] = "";

	if (!cfg->nr_idle)
		return;
	if (b->host_up &&
	    idle_images_create(b->workdir, cfg->idle[cfg->nr_idle - 1], why,
			       sizeof(why)) < 0)
		die(why);
	for (unsigned int i = 0; i < cfg->nr_idle; i++) {
		struct idle_figures *f = &b->results.idle[i];

		f->guests = cfg->idle[i];
		if (!b->host_up) {
			f->error = -ENOENT;
			snprintf(f->note, sizeof(f->note),
				 "the blkbackd arm could not start");
			continue;
		}
		fprintf(stderr, "blkback-bench: attaching %u idle guests\n",
			f->guests);
		if (idle_attach(&b->host, &b->idle, f) < 0) {
			fprintf(stderr, "blkback-bench: %u idle guests: %s\n",
				f->guests, f->note);
			continue;
		}
		print_idle(f);
		if (i + 1 < cfg->nr_idle &&
		    idle_detach(&b->host, &b->idle, f) < 0)
			fprintf(stderr,
				"blkback-bench: detaching %u idle "
				"guests: %s\n",
				f->guests, f->note);
	}
}

/*
 * @dir and its missing parents, as mkdir -p makes them; they stay after
 * the run (only the work directory inside goes). On failure, -errno and
 * the directory that could not be made in @failed.
 */
static int make_dirs(const char *dir, char *failed, size_t len)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	snprintf(failed, len, "%s", dir);
	if (!n)
		return -ENOENT;
	if (n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0777) < 0 && errno != EEXIST) {
			int ret = -errno;

			snprintf(failed, len, "%s", path);
			return ret;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

static void make_workdir(struct bench *b)
{
	const char *base = b->cfg->dir;
	char failed[PATH_MAX];
	int ret;

	if (base && (ret = make_dirs(base, failed, sizeof(failed))) < 0) {
		fprintf(stderr,
			"blkback-bench: cannot create --dir %s: %s: %s "
			"(name a directory you may create)\n",
			base, failed, strerror(-ret));
		exit(1);
	}
	if (!base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/var/tmp";
	snprintf(b->workdir, sizeof(b->workdir), "%s/blkback-bench.XXXXXX",
		 base);
	if (!mkdtemp(b->workdir)) {
		fprintf(stderr,
			"blkback-bench: cannot create a directory in "
			"%s: %s\n",
			base, strerror(errno));
		exit(1);
	}
	cleanup_set_workdir(b->workdir);
	/* Without one the device column reads n/a. */
	diskstat_open(&b->disk, b->workdir);
}

static unsigned int max_guests(const struct bench_config *cfg)
{
	return cfg->guests[cfg->nr_guests - 1]; /* sorted */
}

static bool cell_can_run(const struct bench_cell *c)
{
	return c->status != BENCH_CELL_SKIPPED &&
	       c->status != BENCH_CELL_FAILED;
}

static void make_job(const struct bench_config *cfg, unsigned int j,
		     uint64_t size, uint64_t seed, struct bench_job *job)
{
	if (bench_job_init(job, cfg->jobs[j], size, cfg->image_size,
			   cfg->time_limit, cfg->min_time, seed) < 0)
		die("bad job parameters");
}

/* Warm-up passes: every job on every arm, smallest N, a quarter the work. */
static void run_warm_up(struct bench *b)
{
	const struct bench_config *cfg = b->cfg;
	uint64_t size = cfg->size / 4 > (1u << 20) ? cfg->size / 4 : 1u << 20;

	for (unsigned int w = 0; w < cfg->warmup; w++)
		for (unsigned int j = 0; j < cfg->nr_jobs; j++) {
			struct bench_job job;

			make_job(cfg, j, size, cfg->seed ^ 0x7761726dull, &job);
			for (unsigned int a = 0; a < cfg->nr_arms; a++) {
				struct bench_cell *c = bench_cell_find(
					&b->results, cfg->jobs[j], cfg->arms[a],
					cfg->guests[0]);

				if (cell_can_run(c))
					warm_up(b, c, &job);
			}
		}
}

/*
 * Round @rep runs the arms starting at arm @rep (mod the number of arms):
 * raw, loop, loop-dio, blkbackd, then loop, loop-dio, blkbackd, raw, ...,
 * so that no arm always runs first after another job or right after the
 * same neighbour.
 */
static void run_round(struct bench *b, unsigned int rep)
{
	const struct bench_config *cfg = b->cfg;

	for (unsigned int g = 0; g < cfg->nr_guests; g++)
		for (unsigned int j = 0; j < cfg->nr_jobs; j++) {
			struct bench_job job;

			make_job(cfg, j, cfg->size, cfg->seed + rep, &job);
			for (unsigned int k = 0; k < cfg->nr_arms; k++) {
				unsigned int a = (k + rep) % cfg->nr_arms;
				struct bench_cell *c = bench_cell_find(
					&b->results, cfg->jobs[j], cfg->arms[a],
					cfg->guests[g]);

				b->run++;
				if (cell_can_run(c))
					run_cell_once(b, c, &job);
			}
		}
}

static void run_everything(struct bench *b)
{
	const struct bench_config *cfg = b->cfg;

	b->nr_runs = cfg->repeat * cfg->nr_guests * cfg->nr_jobs * cfg->nr_arms;
	if (cfg->warmup)
		fprintf(stderr,
			"blkback-bench: warming up (%u pass%s, not "
			"measured)\n",
			cfg->warmup, cfg->warmup > 1 ? "es" : "");
	b->warming = true;
	run_warm_up(b);
	b->warming = false;
	for (unsigned int rep = 0; rep < cfg->repeat; rep++)
		run_round(b, rep);
}

static int write_outputs(struct bench *b)
{
	const struct bench_options *o = &b->opt;
	int ret, failed = 0;

	bool to_stdout = (o->csv && !strcmp(o->csv, "-")) ||
			 (o->json && !strcmp(o->json, "-"));

	/* Keep standard output machine-readable when a report goes there. */
	report_table(to_stdout ? stderr : stdout, &b->results);
	fflush(NULL);
	if (o->csv) {
		ret = report_csv(o->csv, &b->results);
		fprintf(stderr, "blkback-bench: CSV %s%s\n", o->csv,
			ret < 0 ? ": write FAILED" : "");
		failed |= ret < 0;
	}
	if (o->json) {
		ret = report_json(o->json, &b->results);
		fprintf(stderr, "blkback-bench: JSON %s%s\n", o->json,
			ret < 0 ? ": write FAILED" : "");
		failed |= ret < 0;
	}
	if (o->svg) {
		ret = report_svg(o->svg, &b->results);
		fprintf(stderr, "blkback-bench: plot %s%s\n", o->svg,
			ret < 0 ? ": write FAILED" : "");
		failed |= ret < 0;
	}
	return failed ? -EIO : 0;
}

/* 0 when every cell ran; else say which did not. */
static int summarise(struct bench *b)
{
	unsigned int bad = 0;

	for (unsigned int i = 0; i < b->results.nr_cells; i++) {
		struct bench_cell *c = &b->results.cells[i];

		if (c->status == BENCH_CELL_OK &&
		    c->nr_samples < b->cfg->repeat)
			c->status = BENCH_CELL_FAILED;
		if (c->status != BENCH_CELL_OK)
			bad++;
	}
	for (unsigned int i = 0; i < b->cfg->nr_idle; i++)
		bad += b->results.idle[i].error < 0;
	if (bench_results_summarise(&b->results) < 0)
		die("out of memory");
	if (bad)
		fprintf(stderr,
			"blkback-bench: %u of %u results skipped or failed "
			"(see the table)\n",
			bad, b->results.nr_cells + b->cfg->nr_idle);
	return bad ? -EIO : 0;
}

int main(int argc, char **argv)
{
	static struct bench b;
	char why[512] = "";
	int ret;

	ret = bench_parse_options(argc, argv, &b.opt, why, sizeof(why));
	if (ret == 1)
		return 0;
	if (ret < 0) {
		fprintf(stderr,
			"blkback-bench: %s\nTry 'blkback-bench "
			"--help'.\n",
			why);
		return 2;
	}
	b.cfg = &b.opt.cfg;
	progress_init();
	if (cleanup_install() < 0)
		die("cannot install signal handlers");
	make_workdir(&b);
	make_cells(&b);
	/* The floor arm's disks: the same size, storing nothing. */
	snprintf(b.null_target, sizeof(b.null_target), "null:%llu",
		 (unsigned long long)b.cfg->image_size);
	if (b.cfg->nr_jobs &&
	    images_create(&b.images, b.workdir, max_guests(b.cfg),
			  b.cfg->image_size, why, sizeof(why)) < 0)
		die(why);
	if (b.cfg->nr_idle)
		idle_raise_nofile(b.cfg->idle[b.cfg->nr_idle - 1]);
	check_arms(&b);
	if (b.cfg->nr_jobs)
		handoff_measure(&b.results.handoff);
	attach_idle_guests(&b);
	run_everything(&b);
	if (b.host_up) {
		idle_abandon(&b.idle); /* the host goes, and with it the rest */
		xenhost_stop(&b.host);
	}
	rbdserve_stop(&b.rbd);
	ret = summarise(&b);
	if (write_outputs(&b) < 0)
		ret = -EIO;
	cleanup_run();
	images_free(&b.images);
	idle_images_free();
	return ret < 0 ? 1 : 0;
}
