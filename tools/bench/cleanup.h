/* SPDX-License-Identifier: MIT */
/*
 * Everything the benchmark must undo however it ends (normal exit, error,
 * Ctrl-C, SIGTERM): guest processes, the daemon, loop devices, the
 * simulated host and the image files. Registered as they are created,
 * undone in reverse dependency order by cleanup_run(), which only uses
 * async-signal-safe calls so the signal handler can run it.
 */
#ifndef BENCH_CLEANUP_H
#define BENCH_CLEANUP_H

#include <stdbool.h>
#include <sys/types.h>

/* Install the SIGINT/SIGTERM/SIGHUP handlers and the atexit hook. */
int cleanup_install(void);

/* Processes: guests get SIGKILL, the daemon SIGTERM (then SIGKILL). */
int cleanup_add_pid(pid_t pid, bool is_daemon);
void cleanup_forget_pid(pid_t pid);

/* A configured loop device, by the fd that holds it. */
int cleanup_add_loop(int fd);
void cleanup_forget_loop(int fd);

/*
 * Helpers stopped by `SCRIPT stop DIR`, after the processes: the
 * simulated host, the RBD arm's Ceph cluster. Both strings are copied.
 */
enum cleanup_stopper { CLEANUP_HOST, CLEANUP_CEPH, CLEANUP_NR_STOPPERS };
int cleanup_set_stopper(enum cleanup_stopper which, const char *script,
			const char *dir);
void cleanup_forget_stopper(enum cleanup_stopper which);

/* Files to unlink and then the directory to remove (copied). */
int cleanup_add_file(const char *path);
int cleanup_set_workdir(const char *dir);

/* Block/unblock the signals the handler catches (around fork). */
void cleanup_block_signals(void);
void cleanup_unblock_signals(void);
/* In a freshly forked child: default signal handling, no cleanup duty. */
void cleanup_in_child(void);

/*
 * fork() a helper that dies with the benchmark: the child gets default
 * signal handling, no cleanup duty and PR_SET_PDEATHSIG(SIGKILL); the
 * parent registers it to be killed on cleanup. Returns as fork() does.
 */
pid_t cleanup_fork(void);

/*
 * Stop the child @pid: @sig, then SIGKILL if it has not exited @grace_ms
 * later; reaped and forgotten either way. False if it had to be killed.
 * Every wait for a helper to exit goes through this, so that a helper
 * that hangs cannot hang the benchmark.
 */
bool cleanup_stop_child(pid_t pid, int sig, long grace_ms);

/*
 * Run the helper @argv (found in PATH) to completion, forked with
 * cleanup_fork() so that an interrupted run kills it before it runs the
 * stoppers (a `start` still running could otherwise launch what `stop`
 * has already looked for), with its output appended to @log. Its exit
 * status, 128 if a signal ended it, or -errno if it could not run.
 */
int cleanup_run_helper(char *const argv[], const char *log);

/* Undo everything registered. Idempotent. */
void cleanup_run(void);
/* The signal that interrupted the run, or 0. */
int cleanup_interrupted(void);

#endif /* BENCH_CLEANUP_H */
