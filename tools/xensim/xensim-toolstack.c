// SPDX-License-Identifier: MIT
/*
 * xensim-toolstack: the simulated xl. Creates and destroys simulated
 * domains and plugs and unplugs disks exactly as libxl 4.17 would, against
 * the xenstored of the xensim host in $XENSIM_DIR (XENSTORED_PATH).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libblk/parse.h"
#include "libblk/toolstack.h"
#include "tools/xensim/toolstack.h"
#include "tools/xensim/xensim.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xensim-toolstack create DOMID [--mem-mb N]\n"
		"       xensim-toolstack destroy DOMID [--remove-backends]\n"
		"       xensim-toolstack attach DOMID IMAGE VDEV [--mode r|w]\n"
		"                [--device-type disk|cdrom] [--discard-enable "
		"0|1]\n"
		"                [--backend-domid N] [--script PATH | "
		"--no-script]\n"
		"                [--script-delay-ms MS] [--backendtype "
		"phy|tap]\n"
		"                [--format aio|vhd]\n"
		"       xensim-toolstack detach DOMID VDEV [--backend-domid "
		"N]\n"
		"                [--script PATH | --no-script] [--keep-nodes]\n"
		"       xensim-toolstack devid VDEV\n"
		"Needs XENSIM_DIR and XENSTORED_PATH (source the host's env "
		"file).\n"
		"The hotplug script is $XENSIM_HOTPLUG, else %s.\n",
		TOOLSTACK_DEFAULT_SCRIPT);
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (blk_parse_u64(s, UINT32_MAX, &v) < 0)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

struct options {
	uint32_t mem_mb;
	uint32_t backend_domid;
	bool readonly;
	bool no_script;
	bool keep_nodes;
	bool remove_backends;
	const char *script;
	const char *device_type;
	bool no_discard;
	uint32_t script_delay_ms;
	bool tap;
	const char *format;
};

enum {
	OPT_MEM = 1,
	OPT_MODE,
	OPT_BACKEND,
	OPT_SCRIPT,
	OPT_NO_SCRIPT,
	OPT_KEEP,
	OPT_REMOVE_BACKENDS,
	OPT_DEVICE_TYPE,
	OPT_DISCARD,
	OPT_SCRIPT_DELAY,
	OPT_BACKENDTYPE,
	OPT_FORMAT,
};

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "mem-mb", required_argument, NULL, OPT_MEM },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "backend-domid", required_argument, NULL, OPT_BACKEND },
		{ "script", required_argument, NULL, OPT_SCRIPT },
		{ "no-script", no_argument, NULL, OPT_NO_SCRIPT },
		{ "keep-nodes", no_argument, NULL, OPT_KEEP },
		{ "remove-backends", no_argument, NULL, OPT_REMOVE_BACKENDS },
		{ "device-type", required_argument, NULL, OPT_DEVICE_TYPE },
		{ "discard-enable", required_argument, NULL, OPT_DISCARD },
		{ "script-delay-ms", required_argument, NULL,
		  OPT_SCRIPT_DELAY },
		{ "backendtype", required_argument, NULL, OPT_BACKENDTYPE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_MEM:
			if (parse_u32(optarg, &o->mem_mb) < 0 || !o->mem_mb)
				return -EINVAL;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "r") && strcmp(optarg, "w"))
				return -EINVAL;
			o->readonly = optarg[0] == 'r';
			break;
		case OPT_BACKEND:
			if (parse_u32(optarg, &o->backend_domid) < 0)
				return -EINVAL;
			break;
		case OPT_SCRIPT:
			o->script = optarg;
			break;
		case OPT_NO_SCRIPT:
			o->no_script = true;
			break;
		case OPT_KEEP:
			o->keep_nodes = true;
			break;
		case OPT_REMOVE_BACKENDS:
			o->remove_backends = true;
			break;
		case OPT_DEVICE_TYPE:
			if (strcmp(optarg, "disk") && strcmp(optarg, "cdrom"))
				return -EINVAL;
			o->device_type = optarg;
			break;
		case OPT_DISCARD:
			if (strcmp(optarg, "0") && strcmp(optarg, "1"))
				return -EINVAL;
			o->no_discard = optarg[0] == '0';
			break;
		case OPT_SCRIPT_DELAY:
			if (parse_u32(optarg, &o->script_delay_ms) < 0 ||
			    o->script_delay_ms > 60000)
				return -EINVAL;
			break;
		case OPT_BACKENDTYPE:
			if (strcmp(optarg, "phy") && strcmp(optarg, "tap"))
				return -EINVAL;
			o->tap = optarg[0] == 't';
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "aio") && strcmp(optarg, "vhd"))
				return -EINVAL;
			o->format = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	return 0;
}

static const char *hotplug_script(const struct options *o)
{
	const char *env = getenv("XENSIM_HOTPLUG");

	if (o->no_script)
		return NULL;
	if (o->script)
		return o->script;
	return env && *env ? env : TOOLSTACK_DEFAULT_SCRIPT;
}

static int cmd_devid(char **args, int nargs)
{
	uint32_t devid;

	if (nargs != 1 || blk_vdev_to_devid(args[0], &devid) < 0) {
		fprintf(stderr, "xensim-toolstack: invalid vdev\n");
		return 2;
	}
	printf("%u\n", devid);
	return 0;
}

static int run_command(struct xs_handle *xs, const char *simdir,
		       const char *cmd, char **args, int nargs,
		       const struct options *o)
{
	struct toolstack_error err = { .what = "" };
	struct toolstack_disk disk = { .backend_domid = o->backend_domid,
				       .readonly = o->readonly,
				       .script = hotplug_script(o),
				       .device_type = o->device_type,
				       .no_discard = o->no_discard,
				       .script_delay_ms = o->script_delay_ms,
				       .tap = o->tap,
				       .format = o->format };
	uint32_t domid;
	int ret;

	if (nargs < 1 || parse_u32(args[0], &domid) < 0) {
		usage(stderr);
		return 2;
	}
	disk.domid = domid;
	if (!strcmp(cmd, "create") && nargs == 1) {
		ret = toolstack_domain_create(xs, simdir, domid, o->mem_mb);
		if (ret < 0)
			fprintf(stderr, "xensim-toolstack: create dom %u: %s\n",
				domid, strerror(-ret));
	} else if (!strcmp(cmd, "destroy") && nargs == 1) {
		ret = toolstack_domain_destroy(xs, simdir, domid,
					       o->remove_backends);
		if (ret < 0)
			fprintf(stderr,
				"xensim-toolstack: destroy dom %u: %s\n", domid,
				strerror(-ret));
	} else if (!strcmp(cmd, "attach") && nargs == 3) {
		disk.target = args[1];
		disk.vdev = args[2];
		ret = toolstack_disk_attach(xs, &disk, &err);
		if (ret < 0)
			fprintf(stderr,
				"xensim-toolstack: attach vbd %u/%s: %s (%s)\n",
				domid, disk.vdev, err.what, strerror(-ret));
	} else if (!strcmp(cmd, "detach") && nargs == 2) {
		disk.vdev = args[1];
		ret = toolstack_disk_detach(xs, &disk, o->keep_nodes, &err);
		if (ret < 0)
			fprintf(stderr,
				"xensim-toolstack: detach vbd %u/%s: %s (%s)\n",
				domid, disk.vdev, err.what, strerror(-ret));
	} else {
		usage(stderr);
		return 2;
	}
	return ret < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options o = { .mem_mb = 16 };
	const char *simdir, *cmd;
	struct xs_handle *xs;
	int ret;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	optind = 2;
	if (parse_options(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "devid"))
		return cmd_devid(argv + optind, argc - optind);
	simdir = xensim_dir();
	if (!simdir) {
		fprintf(stderr, "xensim-toolstack: XENSIM_DIR is not set\n");
		return 2;
	}
	xs = xs_open(0);
	if (!xs) {
		fprintf(stderr, "xensim-toolstack: xs_open: %s\n",
			strerror(errno));
		return 1;
	}
	ret = run_command(xs, simdir, cmd, argv + optind, argc - optind, &o);
	xs_close(xs);
	return ret;
}
