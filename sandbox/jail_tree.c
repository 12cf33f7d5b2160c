/* jail_tree.c: the fallback's process tree. Without a PID namespace the
 * run's processes are found as our descendants (we are their subreaper),
 * through /proc/PID/task/TID/children; teardown stops them all (a stopped
 * process cannot fork), repeats until the set is stable, then kills and
 * reaps until nothing is left. */
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
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : JAIL_PIDSET_FIRST;
        pid_t *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
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

/* All descendants of this process, as of now. */
static void collect_descendants(struct pidset *s)
{
    s->n = 0;
    add_children(s, getpid());
    for (size_t i = 0; i < s->n; i++)
        add_children(s, s->v[i]);
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

void jail__tree_signal(pid_t pid, int sig)
{
    struct pidset s = {0};
    /* The process group first (cheap, and covers the common case), then
     * every descendant that left it. */
    kill(-pid, sig);
    collect_descendants(&s);
    for (size_t i = 0; i < s.n; i++)
        kill(s.v[i], sig);
    free(s.v);
}

int jail__tree_kill(struct jail_proc *p)
{
    struct pidset s = {0}, stopped = {0}, killed = {0};
    /* Freeze: stop every descendant until a pass finds no new one. */
    for (int round = 0; round < JAIL_FREEZE_ROUNDS; round++) {
        collect_descendants(&s);
        int fresh = 0;
        for (size_t i = 0; i < s.n; i++) {
            if (pidset_add(&stopped, s.v[i]) > 0) {
                kill(s.v[i], SIGSTOP);
                fresh++;
            }
        }
        if (!fresh)
            break;
    }
    /* Kill the frozen tree, then keep killing and reaping until nothing is
     * left (killed parents hand their children to us). A zombie still
     * answers kill(), so "left" means "not yet reaped". */
    int64_t give_up = util_now_ms() + JAIL_KILL_GIVE_UP_MS;
    for (;;) {
        collect_descendants(&s);
        for (size_t i = 0; i < s.n; i++)
            if (kill(s.v[i], SIGKILL) == 0)
                discard(pidset_add(&killed, s.v[i]));
        reap_children(p);
        collect_descendants(&s);
        if (s.n == 0 || util_now_ms() > give_up)
            break;
        usleep(JAIL_KILL_PAUSE_US);
    }
    int n = (int)killed.n;
    if (pidset_has(&killed, p->pid))
        n--;
    free(s.v);
    free(stopped.v);
    free(killed.v);
    return n;
}
