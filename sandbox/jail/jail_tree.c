/* jail_tree.c: the run's process tree as /proc shows it: one walk of a
 * process's descendants through /proc/PID/task/TID/children, with a visitor
 * for each. The fallback has no PID namespace, so its run is our
 * descendants (we are their subreaper): teardown stops them all (a stopped
 * process cannot fork), repeats until the set is stable, then kills and
 * reaps until nothing is left. The memory watch walks the same tree, from
 * init in the namespaces (every process of the namespace descends from it). */
#include "config.h"

#include "jail_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define JAIL_CHILDREN_FILE_MAX (1 << 20) /* a task's children file: a pid list, far smaller */
#define JAIL_FREEZE_ROUNDS 1000          /* a tree still growing after this many stop passes is stopped as it is */
#define JAIL_KILL_GIVE_UP_MS 5000        /* killing and reaping stops after this, whatever is left */
#define JAIL_KILL_PAUSE_US 500           /* between kill passes: killed parents hand their children to us */
#define JAIL_PIDSET_FIRST 64             /* pids a set makes room for at first; it doubles as it grows */

struct pidset {
    pid_t *v;
    size_t n, cap;
};

static bool pidset_has(const struct pidset *s, pid_t pid)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == pid)
            return true;
    return false;
}

static int pidset_add(struct pidset *s, pid_t pid)
{
    if (pidset_has(s, pid))
        return 0;
    if (UTIL_GROW(s->v, s->n, s->cap, JAIL_PIDSET_FIRST) < 0)
        return -ENOMEM;
    s->v[s->n++] = pid;
    return 1;
}

/* Adds the children of every task of pid to s; returns how many were new. */
static int add_children(struct pidset *s, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    cleanup_dir DIR *d = opendir(path);
    if (!d)
        return 0;
    int added = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char cpath[64 + sizeof de->d_name];
        snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", (int)pid, de->d_name);
        cleanup_free char *buf = NULL;
        size_t len;
        if (util_read_file_at(AT_FDCWD, cpath, JAIL_CHILDREN_FILE_MAX, &buf, &len) < 0)
            continue;
        for (char *tok = buf, *end; *tok; tok = end) {
            long c = strtol(tok, &end, 10);
            if (end == tok)
                break;
            if (c > 0 && pidset_add(s, (pid_t)c) > 0)
                added++;
        }
    }
    return added;
}

/* The walk: every descendant of root as of now, each visited before its
 * children are read (so that one the visitor stops adds no more once its
 * stop lands; teardown repeats the walk until none is new). */
static int walk(pid_t root, struct pidset *s, int (*visit)(pid_t pid, void *ctx), void *ctx)
{
    s->n = 0;
    add_children(s, root);
    for (size_t i = 0; i < s->n; i++) {
        int rc = visit ? visit(s->v[i], ctx) : 0;
        if (rc != 0)
            return rc;
        add_children(s, s->v[i]);
    }
    return 0;
}

int jail__tree_each(pid_t root, int (*visit)(pid_t pid, void *ctx), void *ctx)
{
    struct pidset s = {0};
    int rc = walk(root, &s, visit, ctx);
    free(s.v);
    return rc;
}

/* Reaps every exited child; the first process's status is kept. */
static void reap_children(struct jail_proc *p)
{
    struct pidset s = {0};
    add_children(&s, getpid());
    for (size_t i = 0; i < s.n; i++) {
        if (s.v[i] == p->pid) {
            if (!p->reaped && wait4(p->pid, &p->wstatus, WNOHANG, &p->ru) == p->pid)
                p->reaped = true;
            continue;
        }
        waitpid(s.v[i], NULL, WNOHANG);
    }
    free(s.v);
}

static int signal_one(pid_t pid, void *ctx)
{
    kill(pid, *(int *)ctx);
    return 0;
}

void jail__tree_signal(pid_t pid, int sig)
{
    /* The process group first (cheap, and covers the common case), then
     * every descendant that left it. */
    kill(-pid, sig);
    discard(jail__tree_each(getpid(), signal_one, &sig));
}

/* What the teardown's passes keep: who was stopped, who was killed, how
 * many a pass found that it had not seen. */
struct teardown {
    struct pidset stopped, killed;
    int fresh;
};

static int stop_one(pid_t pid, void *ctx)
{
    struct teardown *t = ctx;
    if (pidset_add(&t->stopped, pid) > 0) {
        kill(pid, SIGSTOP);
        t->fresh++;
    }
    return 0;
}

static int kill_one(pid_t pid, void *ctx)
{
    struct teardown *t = ctx;
    if (kill(pid, SIGKILL) == 0)
        discard(pidset_add(&t->killed, pid));
    return 0;
}

int jail__tree_kill(struct jail_proc *p)
{
    struct teardown t = {0};
    struct pidset left = {0};
    /* Freeze: stop every descendant until a pass finds no new one. */
    for (int round = 0; round < JAIL_FREEZE_ROUNDS; round++) {
        t.fresh = 0;
        discard(jail__tree_each(getpid(), stop_one, &t));
        if (!t.fresh)
            break;
    }
    /* Kill the frozen tree, then keep killing and reaping until nothing is
     * left (killed parents hand their children to us). A zombie still
     * answers kill(), so "left" means "not yet reaped". */
    int64_t give_up = util_now_ms() + JAIL_KILL_GIVE_UP_MS;
    for (;;) {
        discard(jail__tree_each(getpid(), kill_one, &t));
        reap_children(p);
        discard(walk(getpid(), &left, NULL, NULL));
        if (left.n == 0 || util_now_ms() > give_up)
            break;
        usleep(JAIL_KILL_PAUSE_US);
    }
    int n = (int)t.killed.n;
    if (pidset_has(&t.killed, p->pid))
        n--;
    free(left.v);
    free(t.stopped.v);
    free(t.killed.v);
    return n;
}
