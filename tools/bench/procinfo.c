// SPDX-License-Identifier: MIT
#include "tools/bench/procinfo.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The number after "@key:" in /proc/PID/status. */
static int status_field(FILE *f, const char *key, unsigned long *out)
{
	char line[256];
	size_t len = strlen(key);

	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			return sscanf(line + len + 1, "%lu", out) == 1
				       ? 0
				       : -EINVAL;
	return -ENOENT;
}

static int count_fds(pid_t pid, unsigned int *out)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	*out = 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			(*out)++;
	closedir(d);
	return 0;
}

static int nofile_limit(pid_t pid, unsigned long *out)
{
	char path[64], line[256];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Max open files", 14))
			ret = sscanf(line + 14, "%lu", out) == 1 ? 0 : -EINVAL;
	fclose(f);
	return ret;
}

int proc_usage_of(pid_t pid, struct proc_usage *out)
{
	char path[64];
	unsigned long rss_kib, anon_kib, file_kib, shmem_kib, threads;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ret = status_field(f, "VmRSS", &rss_kib);
	if (!ret)
		ret = status_field(f, "RssAnon", &anon_kib);
	if (!ret)
		ret = status_field(f, "RssFile", &file_kib);
	if (!ret)
		ret = status_field(f, "RssShmem", &shmem_kib);
	if (!ret)
		ret = status_field(f, "Threads", &threads);
	fclose(f);
	if (!ret)
		ret = count_fds(pid, &out->fds);
	if (!ret)
		ret = nofile_limit(pid, &out->nofile_limit);
	if (ret < 0)
		return ret;
	out->rss_mib = (double)rss_kib / 1024;
	out->anon_mib = (double)anon_kib / 1024;
	out->shared_mib = (double)(file_kib + shmem_kib) / 1024;
	out->threads = (unsigned int)threads;
	return 0;
}

int proc_voluntary_switches(pid_t pid, uint64_t *out)
{
	char dir[64], path[128];
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long v;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		/* Thread ids are numbers: %.32s only bounds what cannot be. */
		snprintf(path, sizeof(path), "%s/%.32s/status", dir,
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!status_field(f, "voluntary_ctxt_switches", &v))
			sum += v;
		fclose(f);
	}
	closedir(d);
	*out = sum;
	return 0;
}
