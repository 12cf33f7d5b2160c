/* jail_cgroup.c: the run's cgroups, v2 when ours is delegated, else v1 as
 * root: made with the memory and pids limits before the start, init put
 * into them, and after the run their breach counters read and the
 * directories removed. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JAIL_CG_FILE_MAX 65536       /* /proc/self/cgroup and a cgroup's flat-keyed files are far smaller */
#define JAIL_CG_CONTROL_MAX 4096     /* cgroup.subtree_control: a few controller names */
#define JAIL_CG_REMOVE_TRIES 200     /* with JAIL_CG_REMOVE_WAIT_US: 200 ms for the last processes to leave */
#define JAIL_CG_REMOVE_WAIT_US 1000

/* This process's cgroup v2 directory when it is delegated to us: writable,
 * with memory and pids enabled for its children (cgroup.subtree_control).
 * Caller frees; NULL otherwise. */
static char *v2_own_dir(void)
{
    cleanup_free char *cg = NULL;
    size_t n;
    if (util_read_file_at(AT_FDCWD, "/proc/self/cgroup", JAIL_CG_FILE_MAX, &cg, &n) < 0)
        return NULL;
    char *line = strstr(cg, "0::");
    if (!line || (line != cg && line[-1] != '\n'))
        return NULL;
    char *end = strchr(line, '\n');
    if (end)
        *end = '\0';
    const char *mnt = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified";
    char *dir;
    if (asprintf(&dir, "%s%s", mnt, line + 3) < 0)
        return NULL;
    char path[PATH_MAX];
    cleanup_free char *ctl = NULL;
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
    if (access(dir, W_OK) < 0 || util_read_file_at(AT_FDCWD, path, JAIL_CG_CONTROL_MAX, &ctl, &n) < 0 || !strstr(ctl, "memory") ||
        !strstr(ctl, "pids")) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* The directory of this process's cgroup in a v1 hierarchy (caller frees). */
static char *v1_own_dir(const char *controller)
{
    cleanup_free char *cg = NULL;
    size_t n;
    if (util_read_file_at(AT_FDCWD, "/proc/self/cgroup", JAIL_CG_FILE_MAX, &cg, &n) < 0)
        return NULL;
    for (char *line = cg, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        /* The controller list may hold several, comma-separated. */
        for (char *tok = c1 + 1, *comma; tok; tok = comma ? comma + 1 : NULL) {
            comma = strchr(tok, ',');
            size_t len = comma ? (size_t)(comma - tok) : strlen(tok);
            if (len == strlen(controller) && !strncmp(tok, controller, len)) {
                char *p;
                if (asprintf(&p, "/sys/fs/cgroup/%s%s", controller, c2 + 1) < 0)
                    return NULL;
                return p;
            }
        }
    }
    return NULL;
}

static int write_text(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    cleanup_fd int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    return util_write_all(fd, text, strlen(text));
}

/* Makes DIR/rms-TAG under our own cgroup of a controller; NULL when the
 * controller is not ours to use. */
static char *cg_make(const char *controller, const char *tag)
{
    cleanup_free char *own = v1_own_dir(controller);
    char *dir;
    if (!own || access(own, W_OK) < 0)
        return NULL;
    if (asprintf(&dir, "%s/rms-%s", own, tag) < 0)
        return NULL;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* cgroup v2, delegated: one directory with memory.max and pids.max. */
static bool cg_setup_v2(struct jail_proc *p, const struct jail_opts *o)
{
    char v[32];
    cleanup_free char *own = v2_own_dir();
    char *dir;
    if (!own || asprintf(&dir, "%s/rms-%s", own, o->tag) < 0)
        return false;
    if (mkdir(dir, 0755) < 0) {
        free(dir);
        return false;
    }
    int rc = 0;
    if (o->limits->memory > 0) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->memory);
        rc = write_text(dir, "memory.max", v);
        if (rc == 0)
            discard(write_text(dir, "memory.swap.max", "0")); /* absent without swap */
    }
    if (rc == 0 && o->limits->processes > 0) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->processes + 1);
        rc = write_text(dir, "pids.max", v);
    }
    if (rc < 0) {
        rmdir(dir);
        free(dir);
        return false;
    }
    p->cg_v2 = true;
    p->cg_memory = dir;
    return true;
}

void jail__cg_setup(struct jail_proc *p, const struct jail_opts *o)
{
    char v[32];
    if (!o->tag)
        return;
    if (cg_setup_v2(p, o) || geteuid() != 0)
        return;
    if (o->limits->memory > 0 && (p->cg_memory = cg_make("memory", o->tag))) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->memory);
        /* memsw (memory + swap) where swap accounting is on, so that swap
         * is no way around the limit. Order matters: memsw >= memory. */
        if (write_text(p->cg_memory, "memory.limit_in_bytes", v) < 0) {
            discard(util_rm_rf_at(AT_FDCWD, p->cg_memory));
            free(p->cg_memory);
            p->cg_memory = NULL;
        } else {
            discard(write_text(p->cg_memory, "memory.memsw.limit_in_bytes", v)); /* absent without swap accounting */
        }
    }
    if (o->limits->processes > 0 && (p->cg_pids = cg_make("pids", o->tag))) {
        /* Plus one: the namespace's init is in the cgroup too. */
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->processes + 1);
        if (write_text(p->cg_pids, "pids.max", v) < 0) {
            rmdir(p->cg_pids);
            free(p->cg_pids);
            p->cg_pids = NULL;
        }
    }
}

int jail__cg_enter(const char *dir, pid_t pid)
{
    char v[32];
    snprintf(v, sizeof v, "%d", (int)pid);
    return write_text(dir, "cgroup.procs", v);
}

int jail__cg_tasks_open(const struct jail_proc *p, int fds[JAIL_CG_TASKS])
{
    const char *dirs[JAIL_CG_TASKS] = {p->cg_memory, p->cg_pids};
    int n = 0;
    if (p->cg_v2)
        return 0; /* one move, of a pid, to cgroup.procs: v2 has no such file */
    for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
        char path[PATH_MAX];
        if (!dirs[i])
            continue;
        snprintf(path, sizeof path, "%s/tasks", dirs[i]);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            while (n > 0)
                close(fds[--n]);
            return -e;
        }
        fds[n++] = fd;
    }
    return n;
}

int jail__cg_enter_self(int *fds, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && write(fds[i], "0", 1) != 1)
            rc = -errno;
        close(fds[i]);
        fds[i] = -1;
    }
    return rc;
}

/* Reads "key value" from a flat-keyed cgroup file. */
static long long cg_read_key(const char *dir, const char *file, const char *key)
{
    char path[PATH_MAX];
    cleanup_free char *text = NULL;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (util_read_file_at(AT_FDCWD, path, JAIL_CG_FILE_MAX, &text, &n) < 0)
        return -1;
    size_t kl = strlen(key);
    for (char *line = text; line && *line;) {
        if (!strncmp(line, key, kl) && line[kl] == ' ')
            return atoll(line + kl + 1);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -1;
}

static void cg_remove(char **dir)
{
    if (!*dir)
        return;
    /* The namespace is dead, but its last processes may still be exiting. */
    for (int i = 0; i < JAIL_CG_REMOVE_TRIES && rmdir(*dir) < 0 && errno == EBUSY; i++)
        usleep(JAIL_CG_REMOVE_WAIT_US);
    free(*dir);
    *dir = NULL;
}

bool jail__cg_v2_delegated(void)
{
    cleanup_free char *v2 = v2_own_dir();
    return v2 != NULL;
}

void jail__cg_collect(struct jail_proc *p)
{
    if (p->cg_v2 && p->cg_memory) {
        p->memory_breached = p->memory_breached || cg_read_key(p->cg_memory, "memory.events", "oom_kill") > 0;
        p->pids_breached = p->pids_breached || cg_read_key(p->cg_memory, "pids.events", "max") > 0;
    } else if (p->cg_memory) {
        /* oom_kill (Linux 4.13+) counts kills; failcnt counts allocations
         * that hit the limit and had to reclaim or fail. */
        long long kills = cg_read_key(p->cg_memory, "memory.oom_control", "oom_kill");
        p->memory_breached = p->memory_breached || kills > 0;
    }
    if (p->cg_pids)
        p->pids_breached = p->pids_breached || cg_read_key(p->cg_pids, "pids.events", "max") > 0;
    cg_remove(&p->cg_memory);
    cg_remove(&p->cg_pids);
}
