// SPDX-License-Identifier: MIT
/*
 * blkbackctl: ask a running blkbackd what it serves and how it is doing,
 * through its control socket. The daemon answers in JSON; this prints it
 * as tables, or as it came with --json. See blkbackctl(8).
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

#define REPLY_MAX (16u << 20)

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: blkbackctl [--socket PATH] [--json] COMMAND\n"
		"Commands:\n"
		"  list                 the devices blkbackd serves\n"
		"  stats [DOMID/DEVID]  their counters and stage times\n"
		"Options:\n"
		"  -s, --socket PATH    the daemon's control socket (default "
		"%s)\n"
		"  -j, --json           print the daemon's JSON reply\n"
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

static void print_stats(json_object *devices)
{
	for (size_t i = 0; i < json_object_array_length(devices); i++) {
		json_object *d = json_object_array_get_idx(devices, i);

		printf("%s\n", str(d, "name"));
		print_op(d, "read");
		print_op(d, "write");
		print_op(d, "flush");
		print_op(d, "discard");
		printf("  rejected %" PRId64 ", waited for buffers %" PRId64
		       ", merged %" PRId64 "\n",
		       num(d, "rejected"), num(d, "waited_for_buffers"),
		       num(d, "merged"));
		print_host_errors(d);
		print_stages(d);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = BLKBACKD_CONTROL_SOCKET;
	json_object *reply, *devices, *err;
	char request[128], *text;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "s:jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
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
	if (optind >= argc ||
	    (strcmp(argv[optind], "list") && strcmp(argv[optind], "stats")) ||
	    argc - optind > 2 ||
	    (argc - optind == 2 && strcmp(argv[optind], "stats"))) {
		usage(stderr);
		return 2;
	}
	snprintf(request, sizeof(request), "%s%s%s", argv[optind],
		 argc - optind == 2 ? " " : "",
		 argc - optind == 2 ? argv[optind + 1] : "");
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
	} else if (json_object_object_get_ex(reply, "devices", &devices)) {
		if (strcmp(argv[optind], "list") == 0)
			print_list(devices);
		else
			print_stats(devices);
		c = 0;
	} else {
		c = 1;
	}
	json_object_put(reply);
	free(text);
	return c;
}
