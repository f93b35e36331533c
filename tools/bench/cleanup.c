// SPDX-License-Identifier: MIT
/*
 * The cleanup list is global because a signal handler has no other way to
 * reach it. It is fixed-size (no allocation in the handler) and changed
 * only with the handled signals blocked.
 */
#include "tools/bench/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/loopdev.h"

#define MAX_PIDS 1024
#define MAX_LOOPS 1024
#define MAX_FILES 4096
#define PATH_BYTES 512

struct cleanup_list {
	pid_t pids[MAX_PIDS];
	bool is_daemon[MAX_PIDS];
	int loops[MAX_LOOPS];
	struct {
		char script[PATH_BYTES];
		char dir[PATH_BYTES]; /* empty: nothing to stop */
	} stopper[CLEANUP_NR_STOPPERS];
	char *files[MAX_FILES];
	unsigned int nr_files;
	char workdir[PATH_BYTES];
	pid_t owner; /* only this process cleans up */
};

static struct cleanup_list list;
static volatile sig_atomic_t interrupted_by;

static const int handled[] = { SIGINT, SIGTERM, SIGHUP };

static void say(const char *msg)
{
	ssize_t r = write(STDERR_FILENO, msg, strlen(msg));

	(void)r;
}

void cleanup_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaddset(&set, handled[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

void cleanup_unblock_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaddset(&set, handled[i]);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static int copy_path(char *dst, const char *src)
{
	if (strlen(src) >= PATH_BYTES)
		return -ENAMETOOLONG;
	strcpy(dst, src);
	return 0;
}

int cleanup_add_pid(pid_t pid, bool is_daemon)
{
	int ret = -ENOSPC;

	cleanup_block_signals();
	for (int i = 0; i < MAX_PIDS; i++) {
		if (!list.pids[i]) {
			list.pids[i] = pid;
			list.is_daemon[i] = is_daemon;
			ret = 0;
			break;
		}
	}
	cleanup_unblock_signals();
	return ret;
}

void cleanup_forget_pid(pid_t pid)
{
	cleanup_block_signals();
	for (int i = 0; i < MAX_PIDS; i++)
		if (list.pids[i] == pid)
			list.pids[i] = 0;
	cleanup_unblock_signals();
}

int cleanup_add_loop(int fd)
{
	int ret = -ENOSPC;

	cleanup_block_signals();
	for (int i = 0; i < MAX_LOOPS; i++) {
		if (!list.loops[i]) {
			list.loops[i] = fd + 1; /* 0 means empty */
			ret = 0;
			break;
		}
	}
	cleanup_unblock_signals();
	return ret;
}

void cleanup_forget_loop(int fd)
{
	cleanup_block_signals();
	for (int i = 0; i < MAX_LOOPS; i++)
		if (list.loops[i] == fd + 1)
			list.loops[i] = 0;
	cleanup_unblock_signals();
}

int cleanup_set_stopper(enum cleanup_stopper which, const char *script,
			const char *dir)
{
	int ret;

	cleanup_block_signals();
	ret = copy_path(list.stopper[which].script, script);
	if (!ret)
		ret = copy_path(list.stopper[which].dir, dir);
	cleanup_unblock_signals();
	return ret;
}

void cleanup_forget_stopper(enum cleanup_stopper which)
{
	cleanup_block_signals();
	list.stopper[which].dir[0] = 0;
	cleanup_unblock_signals();
}

int cleanup_add_file(const char *path)
{
	char *copy = strdup(path);
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	cleanup_block_signals();
	if (list.nr_files < MAX_FILES)
		list.files[list.nr_files++] = copy;
	else
		ret = -ENOSPC;
	cleanup_unblock_signals();
	if (ret)
		free(copy);
	return ret;
}

int cleanup_set_workdir(const char *dir)
{
	int ret;

	cleanup_block_signals();
	ret = copy_path(list.workdir, dir);
	cleanup_unblock_signals();
	return ret;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Reap @pid, waiting at most @ms; true once it is gone. */
static bool reap_within(pid_t pid, long ms)
{
	for (long waited = 0; waited <= ms; waited += 20) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		sleep_ms(20);
	}
	return false;
}

/* Async-signal-safe: cleanup_run() uses it from the signal handler. */
static bool stop_child(pid_t pid, int sig, long grace_ms)
{
	kill(pid, sig);
	if (reap_within(pid, grace_ms))
		return true;
	kill(pid, SIGKILL);
	reap_within(pid, 1000);
	return false;
}

bool cleanup_stop_child(pid_t pid, int sig, long grace_ms)
{
	bool in_time = stop_child(pid, sig, grace_ms);

	cleanup_forget_pid(pid);
	return in_time;
}

static void stop_processes(bool daemons)
{
	for (int i = 0; i < MAX_PIDS; i++) {
		pid_t pid = list.pids[i];

		if (!pid || list.is_daemon[i] != daemons)
			continue;
		stop_child(pid, daemons ? SIGTERM : SIGKILL, 3000);
		list.pids[i] = 0;
	}
}

static void detach_loops(void)
{
	for (int i = 0; i < MAX_LOOPS; i++) {
		if (!list.loops[i])
			continue;
		loopdev_release_fd(list.loops[i] - 1);
		list.loops[i] = 0;
	}
}

static void run_stopper(enum cleanup_stopper which)
{
	char *script = list.stopper[which].script,
	     *dir = list.stopper[which].dir;
	char *argv[] = { script, "stop", dir, NULL };
	extern char **environ;
	pid_t pid;

	if (!dir[0])
		return;
	/*
	 * vfork, not fork: this may run in the signal handler, and glibc's
	 * fork takes malloc's locks, which the interrupted code may hold (a
	 * run interrupted inside malloc would hang here for ever). The child
	 * only execs or exits.
	 */
	pid = vfork();
	if (pid == 0) {
		execve(script, argv, environ);
		_exit(127);
	}
	if (pid > 0)
		reap_within(pid, 15000);
	dir[0] = 0;
}

void cleanup_run(void)
{
	if (list.owner != getpid())
		return;
	cleanup_block_signals();
	stop_processes(false); /* guests first: they hold loop devices */
	stop_processes(true);
	detach_loops();
	for (int s = 0; s < CLEANUP_NR_STOPPERS; s++)
		run_stopper((enum cleanup_stopper)s);
	for (unsigned int i = 0; i < list.nr_files; i++)
		if (list.files[i])
			unlink(list.files[i]);
	list.nr_files = 0;
	if (list.workdir[0])
		rmdir(list.workdir);
	list.workdir[0] = 0;
	cleanup_unblock_signals();
}

static void on_signal(int sig)
{
	interrupted_by = sig;
	say("\nblkback-bench: interrupted; cleaning up\n");
	cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void at_exit(void)
{
	cleanup_run();
}

int cleanup_install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	list.owner = getpid();
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaddset(&sa.sa_mask, handled[i]);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		if (sigaction(handled[i], &sa, NULL) < 0)
			return -errno;
	return atexit(at_exit) ? -ENOMEM : 0;
}

pid_t cleanup_fork(void)
{
	pid_t pid;

	fflush(NULL);
	cleanup_block_signals();
	pid = fork();
	if (pid == 0) {
		cleanup_in_child();
		cleanup_unblock_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		return 0;
	}
	if (pid > 0)
		cleanup_add_pid(pid, false);
	cleanup_unblock_signals();
	return pid;
}

int cleanup_run_helper(char *const argv[], const char *log)
{
	pid_t pid = cleanup_fork();
	int status;

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0644);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -errno;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	cleanup_forget_pid(pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

void cleanup_in_child(void)
{
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		signal(handled[i], SIG_DFL);
	/* The list belongs to the parent; owner != getpid() disarms it. */
}

int cleanup_interrupted(void)
{
	return interrupted_by;
}
