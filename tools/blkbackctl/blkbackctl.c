// SPDX-License-Identifier: MIT
/*
 * blkbackctl: ask a running blkbackd what it serves and how it is doing,
 * and tell it to log more or less, re-read image sizes or its
 * configuration, through its control socket. It checks what it is given
 * itself (a usage error exits 2 and asks nothing), and turns the disks and
 * domains people type into the numbers the daemon takes (disk-arg.h). The
 * daemon answers in JSON; this prints it as tables or Prometheus metrics
 * (show.h, metrics.h), or as JSON with --json. See blkbackctl(8).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libblk/parse.h"
#include "tools/blkbackctl/attach.h"
#include "tools/blkbackctl/deadline.h"
#include "tools/blkbackctl/disk-arg.h"
#include "tools/blkbackctl/http.h"
#include "tools/blkbackctl/metrics-json.h"
#include "tools/blkbackctl/metrics.h"
#include "tools/blkbackctl/move.h"
#include "tools/blkbackctl/request.h"
#include "tools/blkbackctl/show.h"
#include "tools/blkbackctl/top.h"
#include "tools/blkbackctl/snapshot.h"

/* How long a scraper may take to send its request (metrics --http). */
#define HTTP_TIMEOUT_MS 5000
#define PROMETHEUS_TEXT "text/plain; version=0.0.4; charset=utf-8"

/* A command: its arguments, its line in --help, and what runs it. */
struct cli;
struct command {
	const char *name;
	int min_args, max_args;
	const char *synopsis, *help; /* help: lines joined by \n */
	int (*run)(struct cli *c, char **args); /* returns the exit status */
};

static void usage(FILE *out);

/* How @cmd goes, after an error in what was typed for it. */
static void usage_line(const struct command *cmd)
{
	fprintf(stderr,
		"Usage: blkbackctl [OPTIONS] %s\nSee blkbackctl --help.\n",
		cmd->synopsis);
}

/*
 * A usage error in @cmd (NULL: no command): what is wrong, then how the
 * command goes. Returns 2, the exit status of usage errors.
 */
static int usage_error(const struct command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const struct command *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("blkbackctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cmd)
		usage_line(cmd);
	else
		usage(stderr);
	return 2;
}

/* What the command line asked for, beside the command and its arguments. */
struct cli {
	const char *path; /* the daemon's control socket */
	const char *textfile; /* metrics --textfile */
	const char *iops; /* limit --iops, as typed; NULL when not given */
	char bw[24]; /* limit --bw in bytes per second; "" when not given */
	int bw_unit; /* the unit --bw was typed in: 'K', 'M', 'G' or 0 */
	struct attach_options plug;
	bool plug_opts; /* an attach-only option was given */
	bool timeout_set; /* --timeout, for attach and detach */
	bool json, http;
	bool wait, cancel; /* move --wait, move --cancel */
	bool copy; /* snapshot --copy */
	struct top_options top; /* top --batch, --iterations, --delay */
	bool top_opts; /* a top-only option was given */
	struct domains ds; /* for domain names */
	const struct command *cmd;
	const char *typed; /* the command and its first argument, for errors */
};

static void print_json(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

/*
 * Ask the daemon @request; *@reply is its answer, unless it was an error.
 * Returns 0, or the exit status after saying why: 1 for a daemon out of
 * reach or an error it answered (no such device), 2 for a request it
 * found wrong (a log level it does not know).
 */
static int query(struct cli *c, const char *request, json_object **reply)
{
	char *text = request_ask(c->path, request);
	json_object *err, *bad;
	int ret = 0;

	if (!text)
		return 1;
	*reply = json_tokener_parse(text);
	free(text);
	if (!*reply) {
		fprintf(stderr, "blkbackctl: the daemon's reply is not JSON\n");
		return 1;
	}
	if (json_object_object_get_ex(*reply, "error", &err)) {
		if (json_object_object_get_ex(*reply, "bad_request", &bad) &&
		    json_object_get_boolean(bad)) {
			ret = usage_error(c->cmd, "%s: %s", c->typed,
					  json_object_get_string(err));
		} else {
			fprintf(stderr, "blkbackctl: %s: %s\n", c->typed,
				json_object_get_string(err));
			ret = 1;
		}
		json_object_put(*reply);
		*reply = NULL;
	}
	return ret;
}

/*
 * The "devices" of @reply, each given the "domain" name of its guest
 * (null when xenstore does not tell it), as xl list shows it.
 */
static json_object *named_devices(struct cli *c, json_object *reply)
{
	json_object *devices;

	if (!json_object_object_get_ex(reply, "devices", &devices))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i), *id;
		char *name = NULL;

		if (json_object_object_get_ex(d, "domid", &id))
			name = domain_name(&c->ds,
					   (uint32_t)json_object_get_int64(id));
		json_object_object_add(d, "domain",
				       name ? json_object_new_string(name)
					    : NULL);
		free(name);
	}
	return devices;
}

/* @text as a DISK; returns 0 or the exit status, after a usage message. */
static int disk_of(struct cli *c, const char *text, struct disk_ref *ref)
{
	int ret = disk_arg(&c->ds, c->cmd->name, text, ref);

	if (ret == 2)
		usage_line(c->cmd);
	return ret;
}

/* The same for a DOMAIN. */
static int domain_of(struct cli *c, const char *text, uint32_t *domid)
{
	int ret = domain_arg(&c->ds, text, domid);

	if (ret == 2)
		usage_line(c->cmd);
	return ret;
}

/* A request about all devices, or one DISK: "stats" or "stats 1/51728". */
static int disk_request(struct cli *c, const char *verb, const char *disk,
			char *buf, size_t len)
{
	struct disk_ref ref;
	int ret;

	if (!disk) {
		snprintf(buf, len, "%s", verb);
		return 0;
	}
	ret = disk_of(c, disk, &ref);
	if (ret == 0)
		snprintf(buf, len, "%s %u/%u", verb, ref.domid, ref.devid);
	return ret;
}

/*
 * The commands that ask about devices and print them: list, stats,
 * resize. @show prints the devices (with their domain names) as text.
 */
static int device_command(struct cli *c, const char *verb, const char *disk,
			  int (*show)(json_object *devices))
{
	json_object *reply = NULL, *devices;
	char request[64];
	int ret = disk_request(c, verb, disk, request, sizeof(request));

	if (ret == 0)
		ret = query(c, request, &reply);
	if (ret)
		return ret;
	devices = named_devices(c, reply);
	if (!devices) {
		fprintf(stderr,
			"blkbackctl: %s: the daemon's reply has no "
			"devices\n",
			c->typed);
		ret = 1;
	} else if (c->json) {
		print_json(reply);
	} else if ((ret = show(devices)) < 0) {
		fprintf(stderr, "blkbackctl: %s: %s\n", c->typed,
			strerror(-ret));
		ret = 1;
	}
	json_object_put(reply);
	return ret;
}

static int run_list(struct cli *c, char **args)
{
	(void)args;
	return device_command(c, "list", NULL, show_list);
}

static int run_stats(struct cli *c, char **args)
{
	return device_command(c, "stats", args[0], show_stats);
}

static int run_resize(struct cli *c, char **args)
{
	return device_command(c, "resize", args[0], show_resize);
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
	} else if (!(text = request_ask(path, "stats")) ||
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

/*
 * --json metrics: the text, read back into JSON (metrics-json.h), so that
 * both forms say the same.
 */
static int print_metrics_json(json_object *devices)
{
	json_object *families = NULL;
	size_t len = 0;
	char *text = NULL;
	FILE *mem = open_memstream(&text, &len);
	int ret = mem ? metrics_write(mem, devices) : -errno;

	if (mem && fclose(mem) != 0)
		ret = ret ?: -errno;
	if (ret == 0)
		ret = metrics_text_to_json(text, &families);
	free(text);
	if (ret < 0) {
		fprintf(stderr, "blkbackctl: metrics as JSON: %s\n",
			strerror(-ret));
		return 1;
	}
	print_json(families);
	json_object_put(families);
	return 0;
}

static int run_metrics(struct cli *c, char **args)
{
	json_object *reply = NULL, *devices;
	int ret;

	(void)args;
	if (c->http)
		return serve_http(c->path);
	ret = query(c, "stats", &reply);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(reply, "devices", &devices))
		ret = 1;
	else if (c->json)
		ret = print_metrics_json(devices);
	else
		ret = print_metrics(devices, c->textfile);
	json_object_put(reply);
	return ret;
}

/* top's sample: a stats reply and its devices. */
static int top_sample(void *arg, json_object **reply, json_object **devices)
{
	struct cli *c = arg;
	int ret = query(c, "stats", reply);

	if (ret)
		return ret;
	if (!json_object_object_get_ex(*reply, "devices", devices)) {
		fprintf(stderr, "blkbackctl: top: the daemon's reply has no "
				"devices\n");
		json_object_put(*reply);
		return 1;
	}
	return 0;
}

static int run_top(struct cli *c, char **args)
{
	(void)args;
	c->top.json = c->json;
	/* Not on a terminal, the screen is not redrawn: batch it is. */
	if (!isatty(STDOUT_FILENO))
		c->top.batch = true;
	return top_run(&c->top, top_sample, c);
}

/* A request whose reply @show prints as text, or --json as it came. */
static int simple_command(struct cli *c, const char *request,
			  void (*show)(json_object *reply, int arg), int arg)
{
	json_object *reply = NULL;
	int ret = query(c, request, &reply);

	if (ret)
		return ret;
	if (c->json)
		print_json(reply);
	else
		show(reply, arg);
	json_object_put(reply);
	return 0;
}

static void show_log_level(json_object *reply, int arg)
{
	json_object *level;

	(void)arg;
	if (json_object_object_get_ex(reply, "log_level", &level))
		puts(json_object_get_string(level));
}

static int run_log_level(struct cli *c, char **args)
{
	char request[64];

	snprintf(request, sizeof(request), "log-level%s%s", args[0] ? " " : "",
		 args[0] ? args[0] : "");
	return simple_command(c, request, show_log_level, 0);
}

static void show_reloaded(json_object *reply, int arg)
{
	(void)arg;
	show_reload(reply);
}

static int run_reload(struct cli *c, char **args)
{
	(void)args;
	return simple_command(c, "reload", show_reloaded, 0);
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

/*
 * "limit D/V IOPS BPS", "-" for the one not given; "limit D/V" to show.
 * The limits print in the unit --bw was typed in.
 */
static int run_limit(struct cli *c, char **args)
{
	struct disk_ref ref;
	char request[128];
	int ret = disk_of(c, args[0], &ref);

	if (ret)
		return ret;
	if (!c->iops && !c->bw[0])
		snprintf(request, sizeof(request), "limit %u/%u", ref.domid,
			 ref.devid);
	else
		snprintf(request, sizeof(request), "limit %u/%u %s %s",
			 ref.domid, ref.devid, c->iops ? c->iops : "-",
			 c->bw[0] ? c->bw : "-");
	return simple_command(c, request, show_limit,
			      c->bw[0] ? c->bw_unit : -1);
}

static void show_snapshot_taken(json_object *reply, int arg)
{
	(void)arg;
	show_snapshot(reply);
}

/*
 * snapshot [--copy [--bw N]] DISK DEST: answered once taken, or copied
 * (or refused).
 */
static int run_snapshot(struct cli *c, char **args)
{
	struct disk_ref ref;
	char dest[512], request[640];
	int ret = disk_of(c, args[0], &ref);

	if (ret)
		return ret;
	/* A copy goes where a move may: a file, or an RBD image. */
	ret = c->copy ? move_dest(args[1], dest, sizeof(dest))
		      : snapshot_dest(args[1], dest, sizeof(dest));
	if (ret < 0)
		return usage_error(c->cmd, "snapshot: '%s': %s", args[1],
				   ret == -EINVAL ? "no blanks or control "
						    "characters "
						    "in DEST"
						  : "DEST is at most 511 "
						    "bytes, made "
						    "absolute");
	if (c->copy)
		snprintf(request, sizeof(request), "snapshot-copy %u/%u %s %s",
			 ref.domid, ref.devid, dest, c->bw[0] ? c->bw : "0");
	else
		snprintf(request, sizeof(request), "snapshot %u/%u %s",
			 ref.domid, ref.devid, dest);
	return simple_command(c, request, show_snapshot_taken, 0);
}

/* How often move --wait asks how the move is doing. */
#define MOVE_POLL_MS 200

/* The "move" of @domid/@devid in a stats reply; NULL: none. */
static json_object *move_in(json_object *reply)
{
	json_object *devices, *move;

	if (!json_object_object_get_ex(reply, "devices", &devices) ||
	    json_object_array_length(devices) != 1 ||
	    !json_object_object_get_ex(json_object_array_get_idx(devices, 0),
				       "move", &move))
		return NULL;
	return move;
}

/*
 * move --wait: ask until the move ended; print how (its JSON with
 * --json). 0 when it switched, 1 when not.
 */
static int wait_for_move(struct cli *c, const struct disk_ref *ref)
{
	char request[64], text[1024];
	json_object *reply, *move;
	int ret;

	snprintf(request, sizeof(request), "stats %u/%u", ref->domid,
		 ref->devid);
	for (;;) {
		ret = query(c, request, &reply);
		if (ret)
			return ret;
		move = move_in(reply);
		if (!move || move_ended(move))
			break;
		json_object_put(reply);
		usleep(MOVE_POLL_MS * 1000);
	}
	ret = move && move_switched(move) ? 0 : 1;
	if (c->json && move) {
		print_json(move);
	} else if (move) {
		move_text(move, text, sizeof(text));
		printf("%s\n", text);
	}
	json_object_put(reply);
	return ret;
}

static void show_move_started(json_object *reply, int arg)
{
	(void)reply;
	(void)arg;
	printf("move started: blkbackctl list shows its progress\n");
}

static void show_cancelled(json_object *reply, int arg)
{
	(void)reply;
	(void)arg;
	printf("move cancelled: the disk stays on its image\n");
}

/* The move began (DEST exists, writes tracked): wait for its end. */
static int move_and_wait(struct cli *c, const char *request,
			 const struct disk_ref *ref)
{
	json_object *reply;
	int ret = query(c, request, &reply);

	if (ret)
		return ret;
	json_object_put(reply);
	return wait_for_move(c, ref);
}

/* move DISK DEST [--bw N] [--wait] | move --cancel DISK */
static int run_move(struct cli *c, char **args)
{
	struct disk_ref ref;
	char dest[512], request[640];
	int ret;

	if (c->cancel != !args[1] || (c->cancel && c->bw[0]))
		return usage_error(c->cmd, "move: give DISK DEST [--bw N], or "
					   "--cancel DISK");
	ret = disk_of(c, args[0], &ref);
	if (ret)
		return ret;
	if (c->cancel) {
		snprintf(request, sizeof(request), "move-cancel %u/%u",
			 ref.domid, ref.devid);
		return simple_command(c, request, show_cancelled, 0);
	}
	ret = move_dest(args[1], dest, sizeof(dest));
	if (ret < 0)
		return usage_error(c->cmd, "move: '%s': %s", args[1],
				   ret == -EINVAL ? "no blanks or control "
						    "characters in DEST"
						  : "DEST is at most 511 "
						    "bytes, made absolute");
	snprintf(request, sizeof(request), "move %u/%u %s %s", ref.domid,
		 ref.devid, dest, c->bw[0] ? c->bw : "0");
	if (!c->wait)
		return simple_command(c, request, show_move_started, 0);
	return move_and_wait(c, request, &ref);
}

/*
 * The domain and vdev of attach and detach: "DOMAIN VDEV" as xl
 * block-detach takes them (@vdev: the one typed after), or one DISK
 * (DOMAIN/VDEV) in @arg. *@vdev_out points into one of them. attach and
 * detach talk to xenstore, not to the daemon (attach.h).
 */
static int plug_target(struct cli *c, const char *arg, const char *vdev,
		       uint32_t *domid, const char **vdev_out)
{
	const char *slash = strrchr(arg, '/');
	char name[256];

	*vdev_out = vdev;
	if (!slash)
		return domain_of(c, arg, domid);
	if (slash == arg || (size_t)(slash - arg) >= sizeof(name) || !slash[1])
		return usage_error(c->cmd,
				   "%s: '%s' is not a disk: give DOMAIN/VDEV "
				   "(7/xvdb, web1/xvdb)",
				   c->cmd->name, arg);
	snprintf(name, sizeof(name), "%.*s", (int)(slash - arg), arg);
	*vdev_out = slash + 1;
	return domain_of(c, name, domid);
}

/* attach DOMAIN IMAGE [VDEV] | attach DISK IMAGE */
static int run_attach(struct cli *c, char **args)
{
	const char *vdev;
	uint32_t domid;
	int ret;

	if (strchr(args[0], '/') && args[2])
		return usage_error(c->cmd, "attach: give the vdev in DISK or "
					   "after IMAGE, not both");
	/* The whole attach, its name lookup too: --timeout and a margin. */
	deadline_store_begin(c->plug.timeout_s);
	ret = plug_target(c, args[0], args[2] ? args[2] : "xvda", &domid,
			  &vdev);
	if (ret == 0)
		ret = attach_disk(domid, args[1], vdev, &c->plug);
	deadline_store_end();
	return ret;
}

/* detach DOMAIN VDEV | detach DISK */
static int run_detach(struct cli *c, char **args)
{
	const char *vdev;
	uint32_t domid;
	int ret;

	if (!strchr(args[0], '/') != !!args[1])
		return usage_error(c->cmd, "detach: give DOMAIN VDEV, or DISK "
					   "(DOMAIN/VDEV)");
	deadline_store_begin(c->plug.timeout_s);
	ret = plug_target(c, args[0], args[1], &domid, &vdev);
	if (ret == 0)
		ret = detach_disk(domid, vdev, &c->plug);
	deadline_store_end();
	return ret;
}

static const struct command commands[] = {
	{ "list", 0, 0, "list", "the devices blkbackd serves", run_list },
	{ "stats", 0, 1, "stats [DISK]", "their counters and stage times",
	  run_stats },
	{ "metrics", 0, 0, "metrics", "the counters for Prometheus",
	  run_metrics },
	{ "log-level", 0, 1, "log-level [LEVEL]",
	  "show or set the daemon's log level (err,\nwarning, notice, info, "
	  "debug)",
	  run_log_level },
	{ "resize", 0, 1, "resize [DISK]",
	  "re-read image sizes, tell the guests of new\nones; print old -> "
	  "new",
	  run_resize },
	{ "reload", 0, 0, "reload",
	  "read blkbackd.conf again; print what changed", run_reload },
	{ "limit", 1, 1, "limit DISK [--iops N] [--bw N[K|M|G]]",
	  "show or set a disk's I/O limits (0: none)", run_limit },
	{ "attach", 2, 3, "attach DOMAIN IMAGE [VDEV] | attach DISK IMAGE",
	  "give a guest no xl manages a disk (VDEV:\nxvda) [--readonly] "
	  "[--cdrom] [--no-discard]",
	  run_attach },
	{ "detach", 1, 2, "detach DOMAIN VDEV | detach DISK",
	  "take it away again", run_detach },
	{ "top", 0, 0, "top [-b] [-d S] [-n N]",
	  "each disk's requests and bytes per second,\nlatency, in flight and "
	  "limits, every S\nseconds (2), N times (-b: as text lines)",
	  run_top },
	{ "snapshot", 2, 2, "snapshot [--copy [--bw N]] DISK DEST",
	  "a crash-consistent copy of a running disk:\nDEST a new file "
	  "beside a file image\n(reflink), @NAME an RBD snapshot; --copy:\n"
	  "copied while the guest runs (any\nfilesystem, or rbd:POOL/IMAGE), "
	  "at up to\n--bw bytes a second (64M)",
	  run_snapshot },
	{ "move", 1, 2, "move DISK DEST [--bw N] [--wait] | move --cancel DISK",
	  "move a running disk to a new image DEST (a\nfile's path or "
	  "rbd:POOL/IMAGE) at up to\n--bw bytes a second (64M); --wait: "
	  "until it\nswitched (exit 0) or ended otherwise (1)",
	  run_move },
};
static const size_t nr_commands = sizeof(commands) / sizeof(commands[0]);

/* "  stats [DISK]         their counters...", continued lines indented. */
static void print_command_help(FILE *out, const struct command *cmd)
{
	const char *help = cmd->help;

	if (strlen(cmd->synopsis) > 20)
		fprintf(out, "  %s\n%23s", cmd->synopsis, "");
	else
		fprintf(out, "  %-20s ", cmd->synopsis);
	for (; *help; help++)
		if (*help == '\n')
			fprintf(out, "\n%23s", "");
		else
			fputc(*help, out);
	fputc('\n', out);
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: blkbackctl [OPTIONS] COMMAND\nCommands:\n");
	for (size_t i = 0; i < nr_commands; i++)
		print_command_help(out, &commands[i]);
	fprintf(out,
		"A DISK is DOMAIN/VDEV: DOMAIN a domain id or name (as xl "
		"list shows it),\n"
		"VDEV a device name or number (xvdb, 51728): 1/xvdb, "
		"web1/xvdb, 1/51728.\n"
		"Options:\n"
		"  -s, --socket PATH    the daemon's control socket (default "
		"%s)\n"
		"  -j, --json           print the reply as JSON\n"
		"  -t, --textfile PATH  metrics: write them to PATH, "
		"atomically (node_exporter)\n"
		"      --http           metrics: answer an HTTP GET /metrics "
		"on stdin/stdout\n"
		"                       (a socket-activated service)\n"
		"      --iops N         limit: requests per second\n"
		"      --bw N           limit, move, snapshot --copy: bytes "
		"per second\n"
		"                       (K, M, G: KiB, MiB, GiB)\n"
		"      --copy           snapshot: copy while the guest runs\n"
		"      --wait           move: until it ended\n"
		"      --cancel         move: cancel the disk's move\n"
		"  -r, --readonly       attach: read-only (--cdrom: as a "
		"CD-ROM)\n"
		"      --no-discard     attach: offer no discard\n"
		"      --timeout S      attach, detach: wait S seconds for "
		"blkbackd (10)\n"
		"  -b, --batch          top: print, do not redraw the screen\n"
		"  -d, --delay S        top: seconds between refreshes (2)\n"
		"  -n, --iterations N   top: stop after N refreshes\n"
		"  -h, --help, -V, --version\n",
		BLKBACKD_CONTROL_SOCKET);
}

/*
 * The command @argv names, its arguments within its bounds and its
 * options its own; NULL after a usage error (*@status: 2).
 */
static const struct command *find_command(const struct cli *c, int argc,
					  char **argv, int *status)
{
	const struct command *cmd = NULL;
	int nargs = argc - 1;

	*status = 2;
	if (argc < 1) {
		usage_error(NULL, "give a command");
		return NULL;
	}
	for (size_t i = 0; i < nr_commands && !cmd; i++)
		if (strcmp(argv[0], commands[i].name) == 0)
			cmd = &commands[i];
	if (!cmd)
		usage_error(NULL, "unknown command '%s'", argv[0]);
	else if (nargs < cmd->min_args)
		usage_error(cmd, "%s: missing argument", cmd->name);
	else if (nargs > cmd->max_args)
		usage_error(cmd, "%s: unexpected argument '%s'", cmd->name,
			    argv[cmd->max_args + 1]);
	else if ((c->textfile || c->http) && cmd->run != run_metrics)
		usage_error(cmd, "--textfile and --http go with metrics only");
	else if (c->iops && cmd->run != run_limit)
		usage_error(cmd, "--iops goes with limit only");
	else if (c->copy && cmd->run != run_snapshot)
		usage_error(cmd, "--copy goes with snapshot only");
	else if (c->bw[0] && cmd->run != run_limit && cmd->run != run_move &&
		 !c->copy)
		usage_error(cmd, "--bw goes with limit, move and snapshot "
				 "--copy only");
	else if ((c->wait || c->cancel) && cmd->run != run_move)
		usage_error(cmd, "--wait and --cancel go with move only");
	else if (c->wait && c->cancel)
		usage_error(cmd, "move: --wait or --cancel, not both");
	else if (c->plug_opts && cmd->run != run_attach)
		usage_error(cmd, "--readonly, --cdrom and --no-discard go with "
				 "attach only");
	else if (c->top_opts && cmd->run != run_top)
		usage_error(cmd, "--batch, --delay and --iterations go with "
				 "top "
				 "only");
	else if (c->timeout_set && cmd->run != run_attach &&
		 cmd->run != run_detach)
		usage_error(cmd, "--timeout goes with attach and detach only");
	else if ((c->http != 0) + (c->textfile != NULL) + c->json > 1 &&
		 cmd->run == run_metrics)
		usage_error(cmd, "--http, --textfile or --json, one of them");
	else
		return cmd;
	return NULL;
}

/*
 * optarg as a number from 1 to @max for option @opt, into *@out; else a
 * usage error saying to give @what, and 2.
 */
static int count_arg(const char *opt, uint64_t max, const char *what,
		     unsigned int *out)
{
	uint64_t n;

	if (blk_parse_u64(optarg, max, &n) < 0 || !n)
		return usage_error(NULL, "%s %s: give %s", opt, optarg, what);
	*out = (unsigned int)n;
	return 0;
}

/* Parse the options into @c; returns -1 to go on, or the exit status. */
static int parse_options(struct cli *c, int argc, char **argv)
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
		{ "wait", no_argument, NULL, 'W' },
		{ "cancel", no_argument, NULL, 'X' },
		{ "copy", no_argument, NULL, 'Y' },
		{ "batch", no_argument, NULL, 'b' },
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t n;
	int opt;

	while ((opt = getopt_long(argc, argv, "s:jt:rhVbd:n:", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
			c->path = optarg;
			break;
		case 'j':
			c->json = c->plug.json = true;
			break;
		case 't':
			c->textfile = optarg;
			break;
		case 'H':
			c->http = true;
			break;
		case 'I':
			if (parse_bytes(optarg, &n) < 0 || strpbrk(optarg, "KM"
									   "G"))
				return usage_error(NULL,
						   "--iops %s: give a number "
						   "of requests "
						   "per second, 0 for none",
						   optarg);
			c->iops = optarg;
			break;
		case 'B':
			if (parse_bytes(optarg, &n) < 0)
				return usage_error(NULL,
						   "--bw %s: give bytes per "
						   "second, with "
						   "K, M or G for KiB, MiB or "
						   "GiB; 0 for "
						   "none",
						   optarg);
			snprintf(c->bw, sizeof(c->bw), "%" PRIu64, n);
			c->bw_unit = optarg[strspn(optarg, "0123456789")];
			break;
		case 'r':
			c->plug.readonly = c->plug_opts = true;
			break;
		case 'C':
			c->plug.cdrom = c->plug_opts = true;
			break;
		case 'D':
			c->plug.no_discard = c->plug_opts = true;
			break;
		case 'T':
			if (count_arg("--timeout", 3600, "seconds, 1 to 3600",
				      &c->plug.timeout_s))
				return 2;
			c->timeout_set = true;
			break;
		case 'W':
			c->wait = true;
			break;
		case 'X':
			c->cancel = true;
			break;
		case 'Y':
			c->copy = true;
			break;
		case 'b':
			c->top.batch = c->top_opts = true;
			break;
		case 'd':
			if (count_arg("--delay", 3600, "seconds, 1 to 3600",
				      &c->top.delay_s))
				return 2;
			c->top_opts = true;
			break;
		case 'n':
			if (count_arg("--iterations", UINT32_MAX,
				      "a number of refreshes, 1 or more",
				      &c->top.iterations))
				return 2;
			c->top_opts = true;
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
	return -1;
}

int main(int argc, char **argv)
{
	struct cli c = {
		.path = BLKBACKD_CONTROL_SOCKET,
		.plug = { .timeout_s = ATTACH_DEFAULT_TIMEOUT_S },
		.top = { .delay_s = 2 },
	};
	const struct command *cmd;
	char *args[4] = { NULL };
	char typed[256];
	int ret = parse_options(&c, argc, argv);

	if (ret >= 0)
		return ret;
	cmd = find_command(&c, argc - optind, argv + optind, &ret);
	if (!cmd)
		return ret;
	if (deadline_init() < 0)
		return usage_error(cmd,
				   "BLKBACKCTL_TIMEOUT_MS=%s: give "
				   "milliseconds, "
				   "1 to 3600000",
				   getenv("BLKBACKCTL_TIMEOUT_MS"));
	for (int i = optind + 1; i < argc; i++)
		args[i - optind - 1] = argv[i];
	snprintf(typed, sizeof(typed), "%s%s%s", cmd->name, args[0] ? " " : "",
		 args[0] ? args[0] : "");
	c.typed = typed;
	c.cmd = cmd;
	ret = cmd->run(&c, args);
	domains_close(&c.ds);
	return ret;
}
