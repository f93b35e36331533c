// SPDX-License-Identifier: MIT
/*
 * blkbackctl: ask a running blkbackd what it serves and how it is doing,
 * and tell it to log more or less, re-read image sizes or its
 * configuration, through its control socket. The daemon answers in JSON;
 * this prints it as tables or Prometheus metrics, or as it came with
 * --json. See blkbackctl(8).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <xen/xen.h> /* DOMID_FIRST_RESERVED */

#include "libblk/parse.h"
#include "tools/blkbackctl/attach.h"
#include "tools/blkbackctl/http.h"
#include "tools/blkbackctl/metrics.h"

#define REPLY_MAX (16u << 20)
/* How long a scraper may take to send its request (metrics --http). */
#define HTTP_TIMEOUT_MS 5000
#define PROMETHEUS_TEXT "text/plain; version=0.0.4; charset=utf-8"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: blkbackctl [--socket PATH] [--json] COMMAND\n"
		"Commands:\n"
		"  list                 the devices blkbackd serves\n"
		"  stats [DOMID/DEVID]  their counters and stage times\n"
		"  metrics              the counters for Prometheus\n"
		"  log-level [LEVEL]    show or set the daemon's log level "
		"(err, warning,\n"
		"                       notice, info, debug)\n"
		"  resize [DOMID/DEVID] re-read image sizes, tell the guests "
		"of new ones\n"
		"  reload               read blkbackd.conf again\n"
		"  limit DOMID/DEVID [--iops N] [--bw N[K|M|G]]\n"
		"                       show or set a disk's I/O limits "
		"(0: none)\n"
		"  attach DOMID IMAGE [VDEV] [--readonly] [--cdrom] "
		"[--no-discard]\n"
		"                       give a guest no xl manages a disk "
		"(VDEV: xvda)\n"
		"  detach DOMID VDEV    take it away again\n"
		"Options:\n"
		"  -s, --socket PATH    the daemon's control socket (default "
		"%s)\n"
		"  -j, --json           print the daemon's JSON reply\n"
		"  -t, --textfile PATH  metrics: write them to PATH, "
		"atomically "
		"(node_exporter)\n"
		"      --http           metrics: answer an HTTP GET /metrics "
		"on "
		"stdin/stdout\n"
		"                       (a socket-activated service)\n"
		"      --iops N         limit: requests per second\n"
		"      --bw N           limit: bytes per second (K, M, G: "
		"KiB, MiB, GiB)\n"
		"  -r, --readonly       attach: read-only (--cdrom: as a "
		"CD-ROM)\n"
		"      --no-discard     attach: offer no discard\n"
		"      --timeout S      attach, detach: wait S seconds for "
		"blkbackd (10)\n"
		"  -h, --help, -V, --version\n",
		BLKBACKD_CONTROL_SOCKET);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Send @request, read the whole reply (the daemon closes after it). */
static char *ask(const char *path, const char *request)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int fd = connect_to(path);

	if (fd < 0) {
		fprintf(stderr,
			"blkbackctl: cannot reach blkbackd at %s: %s (is it "
			"running, and are you root?)\n",
			path, strerror(errno));
		free(buf);
		return NULL;
	}
	if (!buf || write(fd, request, strlen(request)) < 0 ||
	    write(fd, "\n", 1) < 0)
		goto fail;
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			char *bigger = cap < REPLY_MAX ? realloc(buf, cap * 2)
						       : NULL;

			if (!bigger)
				goto fail;
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	fprintf(stderr, "blkbackctl: talking to %s: %s\n", path,
		strerror(errno));
	close(fd);
	free(buf);
	return NULL;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v)
						     : "-";
}

static int64_t num(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v)
						     : 0;
}

static void print_list(json_object *devices)
{
	printf("%-6s %-6s %-10s %-7s %-5s %-10s %-7s %-12s %s\n", "DOMID",
	       "DEVID", "STATE", "QUEUES", "ORDER", "GRANTS", "ABI", "SECTORS",
	       "IMAGE");
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i);

		printf("%-6" PRId64 " %-6" PRId64 " %-10s %-7" PRId64
		       " %-5s %-10s %-7s %-12" PRId64 " %s\n",
		       num(d, "domid"), num(d, "devid"), str(d, "state"),
		       num(d, "queues"), str(d, "ring_order"), str(d, "grants"),
		       str(d, "abi"), num(d, "sectors"), str(d, "image"));
	}
}

static void print_op(json_object *d, const char *op)
{
	json_object *o;

	if (!json_object_object_get_ex(d, op, &o))
		return;
	printf("  %-8s %12" PRId64 " requests %14" PRId64 " sectors %8" PRId64
	       " errors\n",
	       op, num(o, "requests"), num(o, "sectors"), num(o, "errors"));
}

static void print_stages(json_object *d)
{
	json_object *stages;

	if (!json_object_object_get_ex(d, "stages_us", &stages))
		return;
	json_object_object_foreach(stages, name, t)
	{
		json_object *mean, *p50;

		if (!num(t, "count"))
			continue;
		json_object_object_get_ex(t, "mean_us", &mean);
		json_object_object_get_ex(t, "p50_us", &p50);
		printf("  stage %-8s mean %8.1f us  p50 %8.1f us  (%" PRId64
		       " requests)\n",
		       name, json_object_get_double(mean),
		       json_object_get_double(p50), num(t, "count"));
	}
}

/* "host errors: read EIO (Input/output error) 17, ..." */
static void print_host_errors(json_object *d)
{
	json_object *list;
	size_t n;

	if (!json_object_object_get_ex(d, "host_errors", &list))
		return;
	n = json_object_array_length(list);
	if (!n)
		return;
	printf("  host errors:");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(list, i);

		printf("%s %s %s (%s) %" PRId64, i ? "," : "", str(e, "op"),
		       str(e, "errno"), str(e, "message"), num(e, "count"));
	}
	printf("\n");
}

static double dbl(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v)
						     : 0;
}

/* "limit 500 requests/s, 1048576 bytes/s; held back 3.2 s" */
static void print_limit(json_object *limit)
{
	int64_t iops = num(limit, "iops"), bps = num(limit, "bytes_per_second");

	printf("limit ");
	if (!iops && !bps)
		printf("none");
	if (iops)
		printf("%" PRId64 " requests/s", iops);
	if (bps)
		printf("%s%" PRId64 " bytes/s", iops ? ", " : "", bps);
	printf("; held back %.1f s\n", dbl(limit, "throttled_seconds"));
}

/*
 * "ring moves 3 (3 kept mapped), paused 1.2 ms (0.8 closing: 0.5 draining,
 * 0.2 releasing)" (disks whose rings moved)
 */
static void print_moves(json_object *d)
{
	json_object *m;

	if (!json_object_object_get_ex(d, "moves", &m) || !num(m, "count"))
		return;
	printf("  ring moves %" PRId64 " (%" PRId64 " kept mapped), paused "
	       "%.1f ms (%.1f closing: %.1f draining, %.1f releasing)\n",
	       num(m, "count"), num(m, "kept"),
	       (double)num(m, "paused_us") / 1000,
	       (double)num(m, "closing_us") / 1000,
	       (double)num(m, "draining_us") / 1000,
	       (double)num(m, "releasing_us") / 1000);
}

/* "nbd: outages 1, ended 1, ..." (NBD disks only) */
static void print_nbd_link(json_object *d)
{
	json_object *n;

	if (!json_object_object_get_ex(d, "nbd", &n))
		return;
	printf("  nbd: outages %" PRId64 ", ended %" PRId64
	       ", requests resent %" PRId64 ", failed while away %" PRId64
	       ", connections down %" PRId64 "\n",
	       num(n, "outages"), num(n, "outages_ended"), num(n, "resent"),
	       num(n, "failed_server_away"), num(n, "connections_down"));
}

static void print_stats(json_object *devices)
{
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i), *limit;

		printf("%s\n", str(d, "name"));
		print_op(d, "read");
		print_op(d, "write");
		print_op(d, "flush");
		print_op(d, "discard");
		printf("  rejected %" PRId64 ", waited for buffers %" PRId64
		       ", merged %" PRId64 ", in flight %" PRId64 "\n",
		       num(d, "rejected"), num(d, "waited_for_buffers"),
		       num(d, "merged"), num(d, "in_flight"));
		printf("  grants mapped %" PRId64 ", refused by Xen %" PRId64
		       "\n",
		       num(d, "mapped_grants"), num(d, "grant_map_errors"));
		print_moves(d);
		print_host_errors(d);
		if (json_object_object_get_ex(d, "limit", &limit)) {
			printf("  ");
			print_limit(limit);
		}
		print_nbd_link(d);
		print_stages(d);
	}
}

/* A command: its arguments, and what the daemon is asked for it. */
struct command {
	const char *name;
	int min_args, max_args;
	const char *request; /* NULL: the command line as it is */
};

static const struct command commands[] = {
	{ "list", 0, 0, NULL },	      { "stats", 0, 1, NULL },
	{ "metrics", 0, 0, "stats" }, { "log-level", 0, 1, NULL },
	{ "resize", 0, 1, NULL },     { "reload", 0, 0, NULL },
	{ "limit", 1, 1, NULL },      { "attach", 2, 3, NULL },
	{ "detach", 2, 2, NULL },
};

static const struct command *find_command(int argc, char **argv)
{
	int nargs = argc - 1;

	if (argc < 1)
		return NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[0], commands[i].name) == 0 &&
		    nargs >= commands[i].min_args &&
		    nargs <= commands[i].max_args)
			return &commands[i];
	return NULL;
}

/* The request line for @cmd with the arguments @argv. */
static void make_request(const struct command *cmd, int argc, char **argv,
			 char *buf, size_t len)
{
	size_t used;

	if (cmd->request) {
		snprintf(buf, len, "%s", cmd->request);
		return;
	}
	used = (size_t)snprintf(buf, len, "%s", cmd->name);
	for (int i = 1; i < argc && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %s",
					 argv[i]);
}

static int print_metrics(json_object *devices, const char *textfile)
{
	int ret;

	if (!textfile)
		return metrics_write(stdout, devices) < 0 ? 1 : 0;
	ret = metrics_write_textfile(textfile, devices);
	if (ret < 0)
		fprintf(stderr, "blkbackctl: cannot write %s: %s\n", textfile,
			strerror(-ret));
	return ret < 0 ? 1 : 0;
}

/*
 * A bandwidth: a number of bytes, or of KiB, MiB or GiB with a K, M or G
 * after it. Returns 0, or -1 for anything else.
 */
static int parse_bytes(const char *text, uint64_t *out)
{
	static const char units[] = "KMG";
	const char *unit;
	char *end;
	uint64_t n;

	if (text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	n = strtoull(text, &end, 10);
	if (errno || end == text)
		return -1;
	if (*end) {
		unit = strchr(units, *end);
		if (!unit || end[1])
			return -1;
		for (long i = 0; i <= unit - units; i++) {
			if (n > UINT64_MAX / 1024)
				return -1;
			n *= 1024;
		}
	}
	*out = n;
	return 0;
}

/* "limit D/V IOPS BPS", "-" for the one not given; "limit D/V" to show. */
static void limit_request(const char *dev, const char *iops, const char *bw,
			  char *buf, size_t len)
{
	if (!iops && !bw)
		snprintf(buf, len, "limit %s", dev);
	else
		snprintf(buf, len, "limit %s %s %s", dev, iops ? iops : "-",
			 bw ? bw : "-");
}

/* attach and detach talk to xenstore, not to the daemon (attach.h). */
static int plug_command(const struct command *cmd, char **args,
			const struct attach_options *o)
{
	uint64_t domid;

	if (blk_parse_u64(args[1], DOMID_FIRST_RESERVED - 1, &domid) < 0) {
		fprintf(stderr, "blkbackctl: '%s' is not a domain id\n",
			args[1]);
		return 2;
	}
	if (strcmp(cmd->name, "detach") == 0)
		return detach_disk((uint32_t)domid, args[2], o->timeout_s);
	return attach_disk((uint32_t)domid, args[2], args[3] ? args[3] : "xvda",
			   o);
}

/* metrics --http: answer one scrape on stdin and stdout (see http.h). */
static int serve_http(const char *path)
{
	static const struct {
		int status;
		const char *reason;
	} refused[] = {
		[HTTP_NOT_FOUND] = { 404, "Not Found" },
		[HTTP_BAD_METHOD] = { 405, "Method Not Allowed" },
		[HTTP_BAD_REQUEST] = { 400, "Bad Request" },
	};
	enum http_request req =
		http_read_request(STDIN_FILENO, HTTP_TIMEOUT_MS);
	json_object *reply = NULL, *devices;
	char *text = NULL;
	int ret = 1;

	if (req != HTTP_GET_METRICS) {
		http_write_head(stdout, refused[req].status,
				refused[req].reason, "text/plain");
		printf("%s: only GET /metrics is served here\n",
		       refused[req].reason);
	} else if (!(text = ask(path, "stats")) ||
		   !(reply = json_tokener_parse(text)) ||
		   !json_object_object_get_ex(reply, "devices", &devices)) {
		http_write_head(stdout, 503, "Service Unavailable",
				"text/plain");
		printf("blkbackd does not answer on %s\n", path);
	} else {
		http_write_head(stdout, 200, "OK", PROMETHEUS_TEXT);
		ret = metrics_write(stdout, devices) < 0 ? 1 : 0;
	}
	json_object_put(reply);
	free(text);
	return fflush(stdout) == 0 ? ret : 1;
}

/* Print a reply that is not an error; returns the exit status. */
static int print_reply(const struct command *cmd, json_object *reply,
		       const char *textfile)
{
	json_object *devices;

	if (strcmp(cmd->name, "log-level") == 0) {
		printf("%s\n", str(reply, "log_level"));
		return 0;
	}
	if (strcmp(cmd->name, "limit") == 0) {
		print_limit(reply);
		return 0;
	}
	/* Nothing to say: done. */
	if (!strcmp(cmd->name, "resize") || !strcmp(cmd->name, "reload"))
		return 0;
	if (!json_object_object_get_ex(reply, "devices", &devices))
		return 1;
	if (strcmp(cmd->name, "list") == 0)
		print_list(devices);
	else if (strcmp(cmd->name, "stats") == 0)
		print_stats(devices);
	else
		return print_metrics(devices, textfile);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "textfile", required_argument, NULL, 't' },
		{ "http", no_argument, NULL, 'H' },
		{ "iops", required_argument, NULL, 'I' },
		{ "bw", required_argument, NULL, 'B' },
		{ "readonly", no_argument, NULL, 'r' },
		{ "cdrom", no_argument, NULL, 'C' },
		{ "no-discard", no_argument, NULL, 'D' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = BLKBACKD_CONTROL_SOCKET, *textfile = NULL;
	const char *iops = NULL, *bw = NULL;
	struct attach_options plug = { .timeout_s = ATTACH_DEFAULT_TIMEOUT_S };
	bool plug_opts = false;
	char bw_bytes[24];
	uint64_t n;
	const struct command *cmd;
	json_object *reply, *err;
	char request[128], *text;
	bool json = false, http = false;
	int c;

	while ((c = getopt_long(argc, argv, "s:jt:rhV", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			textfile = optarg;
			break;
		case 'H':
			http = true;
			break;
		case 'I':
			if (parse_bytes(optarg, &n) < 0 ||
			    strpbrk(optarg, "KMG")) {
				fprintf(stderr,
					"blkbackctl: --iops %s: give a number "
					"of requests per second, 0 for none\n",
					optarg);
				return 2;
			}
			iops = optarg;
			break;
		case 'B':
			if (parse_bytes(optarg, &n) < 0) {
				fprintf(stderr,
					"blkbackctl: --bw %s: give bytes per "
					"second, with K, M or G for KiB, MiB "
					"or GiB; 0 for none\n",
					optarg);
				return 2;
			}
			snprintf(bw_bytes, sizeof(bw_bytes), "%" PRIu64, n);
			bw = bw_bytes;
			break;
		case 'r':
			plug.readonly = plug_opts = true;
			break;
		case 'C':
			plug.cdrom = plug_opts = true;
			break;
		case 'D':
			plug.no_discard = plug_opts = true;
			break;
		case 'T':
			if (blk_parse_u64(optarg, 3600, &n) < 0 || !n) {
				fprintf(stderr,
					"blkbackctl: --timeout %s: give "
					"seconds, 1 to 3600\n",
					optarg);
				return 2;
			}
			plug.timeout_s = (unsigned int)n;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("blkbackctl %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	cmd = find_command(argc - optind, argv + optind);
	if (!cmd || ((textfile || http) && strcmp(cmd->name, "metrics")) ||
	    ((iops || bw) && strcmp(cmd->name, "limit")) ||
	    (plug_opts && strcmp(cmd->name, "attach")) ||
	    (http && (textfile || json))) {
		usage(stderr);
		return 2;
	}
	if (http)
		return serve_http(path);
	if (!strcmp(cmd->name, "attach") || !strcmp(cmd->name, "detach"))
		return plug_command(cmd, argv + optind, &plug);
	if (strcmp(cmd->name, "limit") == 0)
		limit_request(argv[optind + 1], iops, bw, request,
			      sizeof(request));
	else
		make_request(cmd, argc - optind, argv + optind, request,
			     sizeof(request));
	text = ask(path, request);
	if (!text)
		return 1;
	reply = json_tokener_parse(text);
	if (!reply) {
		fprintf(stderr, "blkbackctl: the daemon's reply is not JSON\n");
		free(text);
		return 1;
	}
	if (json_object_object_get_ex(reply, "error", &err)) {
		fprintf(stderr, "blkbackctl: %s\n",
			json_object_get_string(err));
		c = 1;
	} else if (json) {
		fputs(text, stdout);
		c = 0;
	} else {
		c = print_reply(cmd, reply, textfile);
	}
	json_object_put(reply);
	free(text);
	return c;
}
