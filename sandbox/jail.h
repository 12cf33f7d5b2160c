/* jail.h: starting a script's process tree under its limits, signalling all
 * of it, and tearing all of it down. This module is the only place that
 * forks the script, sets its rlimits, and (with the namespaces) mounts,
 * pivots and installs seccomp filters. */
#ifndef RMS_JAIL_H
#define RMS_JAIL_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "exec.h"

/* Where things are on the host. Borrowed strings. */
struct jail_mounts {
    const char *run_dir;    /* STATE/runs/RUNID: script.py, input */
    const char *workspace;  /* cwd of the script, read-write (output/ inside) */
    const char *env_dir;    /* the Python environment (read-only) */
};

/* The same places as the script sees them. Paths are owned by the struct
 * (jail_view_free). */
struct jail_view {
    char *run_dir;
    char *workspace;
    char *env_dir;
    char *home;
    char *tmp;
};

struct jail_opts {
    const struct jail_mounts *mounts;
    const char *const *argv;      /* argv[0] is an absolute path inside the view */
    const char *const *envp;
    const char *cwd;              /* inside the view */
    int fd_in, fd_out, fd_err;    /* become 0, 1, 2 of the script */
    const struct exec_limits *limits;
    enum exec_isolation isolation;
};

/* A started run. */
struct jail_proc {
    pid_t pid;            /* the script's first process */
    int pidfd;            /* readable when it has exited; -1 when unsupported */
    bool reaped;
    int wstatus;          /* valid once reaped */
    struct rusage ru;
    const char *isolation;  /* "rlimits" or "namespaces+seccomp" */
};

/* Computes the paths the script sees for mounts under the given isolation. 0
 * or -ENOMEM. */
int jail_view(enum exec_isolation isolation, const struct jail_mounts *m, struct jail_view *v) must_check;
void jail_view_free(struct jail_view *v);

/* Creates on the host what the view needs before the start (home and tmp
 * directories under the run directory). 0 or -errno. */
int jail_prepare(const struct jail_mounts *m) must_check;

/* Starts the script. On failure returns -errno and writes a one-line reason
 * into err (errlen bytes); nothing is left running. */
int jail_start(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen) must_check;

/* Sends sig to every process of the run. 0 or -errno. */
int jail_signal(struct jail_proc *p, int sig);

/* Non-blocking reap of the first process: 1 and *wstatus, *ru filled when it
 * has exited, 0 while it runs, -errno on error. */
int jail_try_reap(struct jail_proc *p, int *wstatus, struct rusage *ru) must_check;

/* Kills every process of the run that is still there (SIGKILL, after
 * stopping the tree so that nothing forks in between) and reaps them (the
 * first process's status is kept for jail_try_reap). Safe to call more than
 * once. Returns how many processes other than the first it killed. */
int jail_kill_all(struct jail_proc *p);

/* Closes what jail_start opened. */
void jail_proc_free(struct jail_proc *p);

#endif
