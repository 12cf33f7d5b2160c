/* warm_pool.c: the warm pool, a process of its own beside the server's
 * workers (exec_warm_serve). It listens on STATE/.warm/pool.sock; a worker
 * (or the CLI) that wants a run started warm sends its request there
 * (jail_warm.c), and the pool hands it, descriptors and all, to the zygote
 * of the run's environment when one is ready ('F'), or answers 'C' (start
 * it cold) and starts one for next time. It learns what to import from the
 * runs' import scans (and warm_modules), and keeps zygotes within the
 * warm_* limits: how many environments, idle time, runs and minutes per
 * zygote, memory. It never touches a run once handed over: the run is the
 * zygote's child and the worker's to watch. It dies with the server, and
 * its zygotes (and their runs) with it: their init has the pool's death
 * as its SIGKILL. */
#include "config.h"

#include "warm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deps.h"
#include "jail.h"
#include "jail_internal.h"
#include "proc.h"

#define WARM_ZYGOTES_MAX 32        /* ceiling of warm_envs (each may have a successor starting) */
#define WARM_TICK_MS 1000          /* idle and age checks */
#define WARM_CLIENT_MS 500         /* a client's request must come this soon after its connect */
#define WARM_LIBPY_MS 10000        /* asking the interpreter where its libpython is */
#define WARM_STOP_MS 5000          /* a pool asked to stop has this long */
#define WARM_GREW_MS 5000          /* a zygote whose runs import more is replaced after at least this long */

struct zygote {
    bool used;
    char env[PATH_MAX];
    bool job;                      /* its root has /job: it serves a session's runs */
    int sock;                      /* to the zygote; -1 once retired */
    int env_fd;                    /* env, held (a shared lock) while the zygote lives: never evicted under it */
    struct jail_proc proc;
    bool ready, stale;
    bool grew;                     /* its environment's runs import more than it did: replaced, at most
                                    * every WARM_GREW_MS (a script's from-list can teach a name at a time) */
    bool went_away;                /* it closed its socket itself: its end is logged */
    bool unsafe;                   /* it ended for a module it could not import safely */
    char *imported;                /* its report of what it imported ('i...'), told once it is ready */
    int64_t started, last_used;
    uint32_t runs;
};

struct pool {
    const struct exec_config *cfg;
    char libpython[PATH_MAX];
    char dir[PATH_MAX];
    struct zygote z[WARM_ZYGOTES_MAX];
    struct warm_learning learn;    /* what each environment's runs import (warm_learn.c) */
    uint64_t runs_warm, started, failed;
    int stats_fd;                  /* WARM_STATS, written in place; -1 until opened */
    char stats[WARM_STATS_LEN];    /* what it holds */
};

static volatile sig_atomic_t pool_stop;

static void on_term(int sig)
{
    (void)sig;
    pool_stop = 1;
}

int warm_sock_path(const char *state_dir, char *buf, size_t n)
{
    return snprintf(buf, n, "%s/" WARM_DIR "/" WARM_SOCK, state_dir) >= (int)n ? -ENAMETOOLONG : 0;
}

/* Where the interpreter's libpython is, and that it is the interpreter's
 * own version: the zygote loads it. 0 or -errno (no shared library: no
 * warm starts with this interpreter). */
static int find_libpython(struct pool *pl)
{
    static const char q[] =
        "import sysconfig as s, sys, os\n"
        "p = os.path.join(s.get_config_var('LIBDIR') or '', s.get_config_var('INSTSONAME') or '')\n"
        "print(p if s.get_config_var('Py_ENABLE_SHARED') or os.path.exists(p) else '')\n";
    const char *argv[] = {pl->cfg->python, "-I", "-c", q, NULL};
    const char *envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
    cleanup_free char *out = NULL;
    int st = 0;
    int rc = proc_run(argv, envp, WARM_LIBPY_MS, PATH_MAX, &out, &st, NULL, NULL);
    if (rc < 0)
        return rc;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !out)
        return -ENOENT;
    out[strcspn(out, "\n")] = '\0';
    if (!out[0] || access(out, R_OK) < 0)
        return -ENOENT;
    snprintf(pl->libpython, sizeof pl->libpython, "%s", out);
    return 0;
}

/* The pages pid holds of its own (Private_*, in bytes): the rest of a
 * fork of the zygote is the zygote's, shared. */
static uint64_t private_bytes(long pid)
{
    char path[96];
    cleanup_free char *roll = NULL;
    size_t n;
    uint64_t sum = 0;
    snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", pid);
    if (util_read_file_at(AT_FDCWD, path, 16384, &roll, &n) < 0)
        return 0;
    for (const char *f = roll; (f = strstr(f, "\nPrivate_")); f++) {
        const char *colon = strchr(f, ':');
        if (colon)
            sum += strtoull(colon + 1, NULL, 10) * 1024;
    }
    return sum;
}

/* What pid's children named SPARE_COMM hold of their own, in bytes, with
 * their own children's (spare_children): the zygote's spares (runs'
 * inits made ahead, jail_zygote.c) and each spare's script process made
 * ahead with it; only counted into *count, not measured, when measure is
 * false. */
static uint64_t spares_bytes(pid_t pid, bool spare_children, bool measure, unsigned *count)
{
    char path[96];
    cleanup_free char *kids = NULL;
    size_t n;
    uint64_t sum = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    if (util_read_file_at(AT_FDCWD, path, 4096, &kids, &n) < 0)
        return 0;
    for (char *k = kids, *end; *k; k = end) {
        long kid = strtol(k, &end, 10);
        if (end == k)
            break;
        cleanup_free char *comm = NULL;
        snprintf(path, sizeof path, "/proc/%ld/comm", kid);
        if (util_read_file_at(AT_FDCWD, path, 64, &comm, &n) < 0 || strncmp(comm, "rms-spare\n", 10))
            continue;
        if (count)
            (*count)++;
        if (measure)
            sum += private_bytes(kid);
        if (measure && spare_children)
            sum += spares_bytes((pid_t)kid, false, true, NULL);
    }
    return sum;
}

/* The zygote's own process: its init's one child; 0 when unknown. */
static pid_t zygote_pid(const struct zygote *z)
{
    char path[96];
    cleanup_free char *kids = NULL;
    size_t n;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)z->proc.pid, (int)z->proc.pid);
    if (util_read_file_at(AT_FDCWD, path, 4096, &kids, &n) < 0)
        return 0;
    return atoi(kids);
}

/* The memory a zygote holds: the resident set of its process (init's one
 * child) and its spares' own pages, in bytes; 0 when unknown. */
static uint64_t zygote_rss(const struct zygote *z)
{
    char path[96];
    cleanup_free char *st = NULL;
    size_t n;
    pid_t zyg = zygote_pid(z);
    if (zyg <= 0)
        return 0;
    snprintf(path, sizeof path, "/proc/%d/status", (int)zyg);
    if (util_read_file_at(AT_FDCWD, path, 16384, &st, &n) < 0)
        return 0;
    const char *l = strstr(st, "\nVmRSS:");
    return l ? strtoull(l + 7, NULL, 10) * 1024 + spares_bytes(zyg, true, true, NULL) : 0;
}

/* The counters, padded to WARM_STATS_LEN with a last line of spaces and
 * written over the file in place when they changed: a reader never sees a
 * shorter file's tail, and no run makes and frees a file or waits for an
 * fsync on the pool's loop (what /healthz shows needs no durability). */
static void write_stats(struct pool *pl)
{
    char buf[WARM_STATS_LEN + 1];
    unsigned envs = 0, spares = 0;
    for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++) {
        const struct zygote *z = &pl->z[i];
        if (!z->used || !z->ready || z->sock < 0)
            continue;
        envs++;
        pid_t zyg = zygote_pid(z);
        if (zyg > 0)
            spares_bytes(zyg, false, false, &spares);
    }
    int n = snprintf(buf, sizeof buf, "envs %u\nruns %llu\nstarted %llu\nfailed %llu\nskipped %u\nspares %u\n",
                     envs, (unsigned long long)pl->runs_warm, (unsigned long long)pl->started,
                     (unsigned long long)pl->failed, warm__skipped_count(&pl->learn), spares);
    if (n < 0 || n >= WARM_STATS_LEN)
        return;
    memset(buf + n, ' ', WARM_STATS_LEN - 1 - (size_t)n);
    buf[WARM_STATS_LEN - 1] = '\n';
    if (pl->stats_fd < 0) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/" WARM_STATS, pl->dir);
        /* (a former pool's file is read as it was until the first write) */
        pl->stats_fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        memset(pl->stats, 0, sizeof pl->stats);
    }
    if (pl->stats_fd < 0 || !memcmp(buf, pl->stats, WARM_STATS_LEN))
        return;
    bool first = !pl->stats[0];
    if (pwrite(pl->stats_fd, buf, WARM_STATS_LEN, 0) == WARM_STATS_LEN &&
        (!first || ftruncate(pl->stats_fd, WARM_STATS_LEN) == 0))
        memcpy(pl->stats, buf, WARM_STATS_LEN);
}

/* No more runs for it: it ends once its runs have (the zygote waits for
 * them), and the pidfd says so. */
static void retire(struct zygote *z)
{
    if (z->sock >= 0) {
        close(z->sock);
        z->sock = -1;
    }
}

static void reap(struct pool *pl, struct zygote *z)
{
    jail_kill_all(&z->proc);
    int st = z->proc.wstatus; /* the zygote's own, as its init reported it */
    if (z->sock >= 0 || z->went_away)
        log_msg(LOG_LVL_WARN, "warm pool: the zygote for %s ended before it was let go (%s %d)", z->env,
                WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    jail_proc_free(&z->proc);
    free(z->imported);
    if (z->sock >= 0)
        close(z->sock);
    if (z->env_fd >= 0)
        close(z->env_fd);
    if (!z->ready && !z->unsafe)
        pl->failed++;
    memset(z, 0, sizeof *z);
    z->sock = z->env_fd = -1;
}

/* Frees room for one more zygote: the least recently used idle one of
 * another environment goes while the envs or the memory are over. */
static bool make_room(struct pool *pl, const char *env)
{
    const struct exec_warm *w = &pl->cfg->warm;
    for (;;) {
        size_t live = 0;
        uint64_t mem = 0;
        struct zygote *lru = NULL;
        for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++) {
            struct zygote *z = &pl->z[i];
            if (!z->used || z->sock < 0)
                continue;
            live++;
            mem += w->memory ? zygote_rss(z) : 0;
            if (z->ready && strcmp(z->env, env) && (!lru || z->last_used < lru->last_used))
                lru = z;
        }
        bool over = live >= w->envs || (w->memory && mem >= w->memory);
        if (!over)
            return live < WARM_ZYGOTES_MAX;
        if (!lru)
            return false;
        log_msg(LOG_LVL_INFO, "warm pool: retiring the zygote of %s to make room", lru->env);
        retire(lru);
    }
}

/* Starts a zygote for env with what its runs import (job: for a
 * session's runs, whose root has a /job; the root of others has none). */
static void start_zygote(struct pool *pl, const char *env, bool job)
{
    struct zygote *z = NULL;
    for (size_t i = 0; i < WARM_ZYGOTES_MAX && !z; i++)
        if (!pl->z[i].used)
            z = &pl->z[i];
    struct warm_env *e = warm__env_of(&pl->learn, env, true);
    if (e && e->too_big && util_now_ms() - e->too_big < pl->cfg->warm.idle_ms)
        return;
    if (!z || !make_room(pl, env))
        return;
    struct dbuf mods;
    dbuf_init(&mods, WARM_MODULES_MAX * (WARM_MODULE_MAX + 1));
    if (e)
        discard(warm__modules_for(e, &mods));
    /* The environment held as a run holds it (a shared lock, still at its
     * name), and its root as a run's: /env and the store entries it links
     * (deps_env_binds, as a cold run's layout has them). */
    struct deps_env_binds eb = {0};
    struct jail_bind *binds = NULL;
    int sv[2] = {-1, -1};
    int env_fd = open(env, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat a, b;
    int erc = env_fd < 0 ? -errno : flock(env_fd, LOCK_SH | LOCK_NB) < 0 ? -errno : 0;
    if (erc == 0 && (fstat(env_fd, &a) < 0 || stat(env, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev))
        erc = -ENOENT; /* evicted meanwhile */
    if (erc == 0)
        erc = deps_env_binds(env, &eb);
    if (erc == 0 && !(binds = calloc(3 + eb.n, sizeof *binds)))
        erc = -ENOMEM;
    if (erc == 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        erc = -errno;
    if (erc < 0) {
        log_msg(LOG_LVL_INFO, "warm pool: no zygote for %s: %s", env, strerror(-erc));
        if (env_fd >= 0)
            close(env_fd);
        free(binds);
        deps_env_binds_free(&eb);
        dbuf_free(&mods);
        return;
    }
    char empty[PATH_MAX + 8];
    snprintf(empty, sizeof empty, "%s/empty", pl->dir);
    size_t n_binds = 0;
    binds[n_binds++] = (struct jail_bind){env, "/env", 0};
    binds[n_binds++] = (struct jail_bind){empty, "/work", 0};
    if (job)
        binds[n_binds++] = (struct jail_bind){empty, "/job", 0};
    for (size_t i = 0; i < eb.n; i++)
        binds[n_binds++] = eb.v[i];
    char threads[48], home[PATH_MAX], spares[48];
    snprintf(spares, sizeof spares, "RUNMYSCRIPT_WARM_SPARES=%u", pl->cfg->warm.spares);
    snprintf(threads, sizeof threads, "RUNMYSCRIPT_WARM_THREADS=%ld", sysconf(_SC_NPROCESSORS_ONLN));
    /* HOME laid out from the environment's caches, in the zygote as in
     * each of its runs (what it imports finds them where a run would). */
    const char *home_from = deps_env_home_cache(env);
    snprintf(home, sizeof home, "RUNMYSCRIPT_WARM_HOME=%s", home_from ? home_from : "");
    const char *envp[] = {"PATH=/env/bin:/usr/local/bin:/usr/bin:/bin", "HOME=/tmp/home", "LANG=C.UTF-8",
                          "TMPDIR=/tmp", "PYTHONUNBUFFERED=1", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1",
                          "MKL_NUM_THREADS=1", threads, home, spares,
#ifdef __SANITIZE_ADDRESS__
                          /* A sanitizer build's zygote is this program: its leak check at a
                           * run's exit cannot trace under the filter, and the interpreter's
                           * memory is not ours to check. */
                          "ASAN_OPTIONS=detect_leaks=0",
#endif
                          NULL};
    const char *argv[] = {"/env/bin/python3", NULL};
    struct exec_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.tmp_bytes = pl->cfg->limits.tmp_bytes;
    lim.tmp_files = pl->cfg->limits.tmp_files;
    struct jail_opts o = {
        .mode = JAIL_MODE_NAMESPACES, .binds = binds, .n_binds = n_binds, .argv = argv,
        .interpreter = pl->cfg->python, .envp = envp, .cwd = "/", .fd_in = sv[1], .fd_out = 2, .fd_err = 2,
        .limits = &lim, .state_dir = pl->cfg->state_dir, .uid_base = pl->cfg->uid_base,
        .uid_count = pl->cfg->uid_count, .zygote = true, .zygote_lib = pl->libpython,
        .zygote_modules = mods.data ? mods.data : "", .home_from = home_from,
        .shared_proc = pl->cfg->shared_proc,
    };
    char err[256] = "";
    int rc = jail_start(&o, &z->proc, err, sizeof err);
    close(sv[1]);
    dbuf_free(&mods);
    free(binds);
    deps_env_binds_free(&eb);
    if (rc < 0) {
        close(sv[0]);
        close(env_fd);
        pl->failed++;
        log_msg(LOG_LVL_WARN, "warm pool: a zygote for %s did not start: %s", env, err);
        return;
    }
    /* A zygote busy with a fork must not hold up the pool: a request it
     * cannot queue goes cold. */
    discard(util_set_nonblock(sv[0]));
    z->used = true;
    z->sock = sv[0];
    z->env_fd = env_fd;
    z->started = z->last_used = util_now_ms();
    z->job = job;
    snprintf(z->env, sizeof z->env, "%s", env);
    pl->started++;
    log_msg(LOG_LVL_INFO, "warm pool: a zygote for %s is starting", env);
}

/* The zygote a run of env (job: a session's) goes to: the newest ready
 * one. */
static struct zygote *zygote_for(struct pool *pl, const char *env, bool job, bool *starting)
{
    struct zygote *best = NULL;
    *starting = false;
    for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++) {
        struct zygote *z = &pl->z[i];
        if (!z->used || z->sock < 0 || strcmp(z->env, env) || z->job != job)
            continue;
        if (!z->ready)
            *starting = true;
        else if (!best || z->started > best->started)
            best = z;
    }
    return best;
}

/* A zygote whose environment's runs import more than it did is replaced
 * once it has served WARM_GREW_MS: names learned meanwhile go to the same
 * successor, and scripts that each teach a name of a from-list (which may
 * be no module at all) do not replace it at every run. */
static bool replace_grown(const struct zygote *z)
{
    return z->grew && util_now_ms() - z->started >= WARM_GREW_MS;
}

/* One worker's request: to a zygote, or 'C'. */
static void serve_client(struct pool *pl, int c)
{
    static struct jail_warm_req q;
    int fds[JAIL_WARM_NFDS];
    size_t nfds = 0;
    struct pollfd p = {c, POLLIN, 0};
    char answer = 'C';
    bool answered = false;
    ssize_t w;
    if (poll(&p, 1, WARM_CLIENT_MS) != 1)
        return;
    ssize_t r = jail__recv_fds(c, &q, sizeof q, fds, &nfds);
    if (r != (ssize_t)sizeof q || q.magic != JAIL_WARM_MAGIC || q.env_dir[0] != '/' ||
        !memchr(q.env_dir, '\0', sizeof q.env_dir) || !memchr(q.imports, '\0', sizeof q.imports))
        goto out;
    q.imports[sizeof q.imports - 1] = q.imports[sizeof q.imports - 2] = '\0';
    struct warm_env *e = warm__env_of(&pl->learn, q.env_dir, true);
    bool grew = e && warm__learn(&pl->learn, e, q.imports, sizeof q.imports, q.job);
    bool starting;
    struct zygote *z = zygote_for(pl, q.env_dir, q.job, &starting);
    if (z && grew)
        z->grew = true;
    if (z && jail__send_fds(z->sock, &q, sizeof q, fds, nfds) == 0) {
        answer = 'F';
        z->runs++;
        z->last_used = util_now_ms();
        pl->runs_warm++;
        if (pl->cfg->warm.runs && z->runs >= pl->cfg->warm.runs)
            z->stale = true;
    } else if (z) {
        log_msg(LOG_LVL_WARN, "warm pool: the zygote for %s takes no request (%s): it is replaced", z->env,
                strerror(errno));
        retire(z); /* it does not take requests: it is no use */
        z = NULL;
    } else {
        log_msg(LOG_LVL_INFO, "warm pool: no zygote ready for %s: the run starts cold", q.env_dir);
    }
    /* The answer first: the start of a zygote takes a while, and the
     * worker waits for the answer only so long. */
    w = write(c, &answer, 1);
    (void)w;
    answered = true;
    if ((!z || z->stale || replace_grown(z)) && !starting)
        start_zygote(pl, q.env_dir, q.job);
    write_stats(pl);
out:
    for (size_t i = 0; i < nfds; i++)
        close(fds[i]);
    if (!answered) {
        w = write(c, &answer, 1);
        (void)w;
    }
}

/* A zygote is ready: older ones of its environment retire; one alone
 * past warm_memory goes, and its runs start cold for warm_idle. */
static void zygote_ready(struct pool *pl, struct zygote *z)
{
    z->ready = true;
    uint64_t mine = zygote_rss(z), budget = pl->cfg->warm.memory;
    if (budget && mine > budget) {
        struct warm_env *e = warm__env_of(&pl->learn, z->env, false);
        if (e)
            e->too_big = util_now_ms();
        log_msg(LOG_LVL_WARN, "warm pool: the zygote for %s holds %llu bytes, past warm_memory: its runs start cold",
                z->env, (unsigned long long)mine);
        retire(z);
        return;
    }
    log_msg(LOG_LVL_INFO, "warm pool: the zygote for %s is ready", z->env);
    for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++) {
        struct zygote *o = &pl->z[i];
        if (o != z && o->used && o->sock >= 0 && !strcmp(o->env, z->env) && o->job == z->job)
            retire(o);
    }
}

/* A zygote said it is ready (or went away); older ones of its
 * environment and stale ones retire. Before "ready" it reports what it
 * imported and skipped (warm__report); one that found a module unsafe
 * ends, and another starts without it. */
static void zygote_event(struct pool *pl, struct zygote *z)
{
    static char msg[WARM_REPORT_MAX + 1];
    ssize_t r = read(z->sock, msg, WARM_REPORT_MAX);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return; /* nothing after all: not an end */
    if (r > 1 && msg[0] == 'i' && !z->ready) {
        /* What it imported counts once it is ready: a run may then go to it. */
        free(z->imported);
        z->imported = strndup(msg, (size_t)r);
        return;
    }
    struct warm_env *e = r > 1 ? warm__env_of(&pl->learn, z->env, true) : NULL;
    char kind = e ? warm__report(&pl->learn, e, msg, (size_t)r) : 0;
    if (kind == 'u') {
        char env[PATH_MAX];
        bool job = z->job;
        snprintf(env, sizeof env, "%s", z->env);
        z->unsafe = true;
        retire(z); /* it ends by itself: no warning for it */
        warm__save(&pl->learn, false);
        start_zygote(pl, env, job);
    } else if (kind) {
        warm__save(&pl->learn, false);
        return;
    }
    if (r == 1 && msg[0] == 'r' && !z->ready) {
        struct warm_env *re = z->imported ? warm__env_of(&pl->learn, z->env, true) : NULL;
        if (re && warm__report(&pl->learn, re, z->imported, strlen(z->imported)))
            warm__save(&pl->learn, false);
        zygote_ready(pl, z);
    } else if (r <= 0) {
        z->went_away = true;
        retire(z);
    }
    write_stats(pl);
}

/* Idle, old or used up: replaced (or let go when idle). */
static void tick(struct pool *pl, int64_t now)
{
    const struct exec_warm *w = &pl->cfg->warm;
    bool starting;
    for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++) {
        struct zygote *z = &pl->z[i];
        if (!z->used || z->sock < 0 || !z->ready)
            continue;
        if (w->idle_ms && now - z->last_used > w->idle_ms) {
            log_msg(LOG_LVL_INFO, "warm pool: the zygote for %s was idle; it goes", z->env);
            retire(z);
        } else if ((w->lifetime_ms && now - z->started > w->lifetime_ms) || z->stale || replace_grown(z)) {
            /* Its successor first; it serves until that one is ready. */
            if (zygote_for(pl, z->env, z->job, &starting) == z && !starting)
                start_zygote(pl, z->env, z->job);
        }
    }
    write_stats(pl);
}

static int pool_listen(struct pool *pl, char *err, size_t errlen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int rc = warm_sock_path(pl->cfg->state_dir, a.sun_path, sizeof a.sun_path);
    char empty[PATH_MAX + 8];
    if (rc < 0) {
        snprintf(err, errlen, "the state directory's path is too long for a socket");
        return rc;
    }
    snprintf(empty, sizeof empty, "%s/empty", pl->dir);
    if ((mkdir(pl->dir, 0700) < 0 && errno != EEXIST) || (mkdir(empty, 0755) < 0 && errno != EEXIST)) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", pl->dir, strerror(errno));
        return rc;
    }
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    unlink(a.sun_path);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 64) < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", a.sun_path, strerror(errno));
        close(s);
        return rc;
    }
    return s;
}

/* A pool that starts: the base environment's zygote, then those of the
 * environments most used
 * before (STATE/.warm/learned), most used first, within warm_envs. So the
 * first call of a server just started is warm. */
static void start_known(struct pool *pl)
{
    size_t max = pl->cfg->warm.envs;
    struct warm_env *envs[WARM_ZYGOTES_MAX];
    bool jobs[WARM_ZYGOTES_MAX];
    size_t started = 0;
    cleanup_free char *base = NULL;
    char err[256] = "";
    if (deps_base_env(pl->cfg->state_dir, pl->cfg->python, &base, err, sizeof err) < 0)
        log_msg(LOG_LVL_WARN, "warm pool: no base environment (%s): its runs start cold until one is made", err);
    /* (every run has a /job now: one zygote serves them all) */
    if (base && started < max) {
        start_zygote(pl, base, true);
        started++;
    }
    size_t n = warm__most_used(&pl->learn, max < WARM_ZYGOTES_MAX ? max : WARM_ZYGOTES_MAX, envs, jobs);
    for (size_t i = 0; i < n && started < max; i++) {
        if (base && !strcmp(envs[i]->env, base))
            continue;
        char env[PATH_MAX];
        snprintf(env, sizeof env, "%s", envs[i]->env); /* (start_zygote may grow the list) */
        start_zygote(pl, env, jobs[i]);
        started++;
    }
}

static _Noreturn void pool_main(const struct exec_config *cfg, int server)
{
    static struct pool pl;
    char err[PATH_MAX + 64] = "";
    pl.cfg = cfg;
    log_set_id("warm-pool");
    prctl(PR_SET_NAME, "rms-warm-pool");
    /* Nothing of the server's (its FastCGI socket, its signals) but stderr,
     * the log. */
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
    }
    jail__close_all_except((const int[]){0, 1, 2, server}, 4);
    jail__reset_signals();
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    snprintf(pl.dir, sizeof pl.dir, "%s/" WARM_DIR, cfg->state_dir);
    pl.stats_fd = -1;
    for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++)
        pl.z[i].sock = pl.z[i].env_fd = -1;
    int rc = find_libpython(&pl);
    if (rc < 0) {
        log_msg(LOG_LVL_WARN, "warm pool: %s has no shared libpython: every run starts cold", cfg->python);
        _exit(0);
    }
    int ls = pool_listen(&pl, err, sizeof err);
    if (ls < 0) {
        log_msg(LOG_LVL_WARN, "warm pool: cannot listen (%s): every run starts cold", err);
        _exit(0);
    }
    write_stats(&pl); /* (serving: /healthz reads the file beside the socket) */
    pl.learn.dir = pl.dir;
    pl.learn.modules_cfg = cfg->warm.modules;
    warm__load(&pl.learn);
    start_known(&pl);
    write_stats(&pl);
    int64_t next_tick = util_now_ms() + WARM_TICK_MS;
    while (!pool_stop) {
        struct pollfd p[2 + 2 * WARM_ZYGOTES_MAX];
        struct zygote *who[ARRAY_SIZE(p)];
        size_t n = 0;
        p[n] = (struct pollfd){ls, POLLIN, 0};
        who[n++] = NULL;
        p[n] = (struct pollfd){server, POLLIN, 0}; /* the server's end is ours */
        who[n++] = NULL;
        for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++) {
            struct zygote *z = &pl.z[i];
            if (!z->used)
                continue;
            if (z->sock >= 0) {
                p[n] = (struct pollfd){z->sock, POLLIN, 0};
                who[n++] = z;
            }
            if (z->proc.pidfd >= 0) {
                p[n] = (struct pollfd){z->proc.pidfd, POLLIN, 0};
                who[n++] = z;
            }
        }
        int r = poll(p, n, WARM_TICK_MS);
        int64_t now = util_now_ms();
        if (r < 0 && errno != EINTR)
            break;
        /* One event per poll: handling one may retire, reap or start
         * zygotes, whose slots and descriptor numbers the others' entries
         * would then name wrongly (poll reports what is left again). */
        for (size_t i = 0; r > 0 && i < n; i++) {
            if (!p[i].revents)
                continue;
            r = 0;
            if (!who[i] && p[i].fd == server) {
                pool_stop = 1;
            } else if (!who[i]) {
                int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
                if (c >= 0) {
                    serve_client(&pl, c);
                    close(c);
                }
            } else if (who[i]->used && p[i].fd == who[i]->sock) {
                zygote_event(&pl, who[i]);
            } else if (who[i]->used && p[i].fd == who[i]->proc.pidfd) {
                reap(&pl, who[i]);
                write_stats(&pl);
            }
        }
        if (now >= next_tick) {
            tick(&pl, now);
            warm__save(&pl.learn, true);
            next_tick = now + WARM_TICK_MS;
        }
    }
    /* The server is going: its zygotes and their runs with it. */
    char path[PATH_MAX + 32];
    if (warm_sock_path(cfg->state_dir, path, sizeof path) == 0)
        unlink(path);
    for (size_t i = 0; i < WARM_ZYGOTES_MAX; i++)
        if (pl.z[i].used) {
            retire(&pl.z[i]);
            reap(&pl, &pl.z[i]);
        }
    write_stats(&pl);
    warm__save(&pl.learn, false);
    _exit(0);
}

/* The pool is not the server's child: the server's children are its
 * workers (what counts them, tests and operators, sees only them). An
 * intermediate forks it and exits; the pool watches the server through a
 * pidfd instead of a parent-death signal, and the server watches the pool
 * through another. */
int exec_warm_serve(const struct exec_config *cfg, struct exec_warm_pool *pool)
{
    pool->pid = -1;
    pool->pidfd = -1;
    if (!cfg->warm.on)
        return 0;
    /* Zygotes are jails: without user namespaces there is nothing to keep
     * warm (root or not, as a cold run would), and every run starts cold. */
    struct probe_caps caps;
    probe_host(&caps);
    if (!caps.userns) {
        log_msg(LOG_LVL_INFO, "warm starts need user namespaces (%s): runs start cold", caps.userns_error);
        return 0;
    }
    if (!probe_namespaces_usable(&caps, cfg->shared_proc)) {
        log_msg(LOG_LVL_INFO, "warm starts need the namespaces, and a run's /proc would be the container's "
                              "(shared_proc = off): runs start cold");
        return 0;
    }
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) < 0)
        return -errno;
    pid_t server = getpid();
    pid_t mid = fork();
    if (mid < 0) {
        int e = errno;
        close(pp[0]);
        close(pp[1]);
        return -e;
    }
    if (mid == 0) {
        int sfd = (int)syscall(SYS_pidfd_open, server, 0);
        pid_t p = sfd >= 0 && getppid() == server ? fork() : -1;
        if (p == 0) {
            close(pp[1]);
            pool_main(cfg, sfd);
        }
        ssize_t w = write(pp[1], &p, sizeof p);
        (void)w;
        _exit(p > 0 ? 0 : 1);
    }
    close(pp[1]);
    pid_t p = -1;
    int rc = util_read_exact(pp[0], &p, sizeof p);
    close(pp[0]);
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (rc < 0 || p <= 0)
        return rc < 0 ? rc : -ECHILD;
    pool->pidfd = (int)syscall(SYS_pidfd_open, p, 0);
    if (pool->pidfd < 0) {
        rc = -errno;
        kill(p, SIGTERM);
        return rc;
    }
    pool->pid = p;
    return 0;
}

bool exec_warm_alive(const struct exec_warm_pool *pool)
{
    struct pollfd p = {pool->pidfd, POLLIN, 0};
    return pool->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

void exec_warm_stop(struct exec_warm_pool *pool)
{
    if (pool->pidfd < 0)
        return;
    syscall(SYS_pidfd_send_signal, pool->pidfd, SIGTERM, NULL, 0);
    struct pollfd p = {pool->pidfd, POLLIN, 0};
    /* It kills its zygotes and goes: a pool that does not is killed. */
    if (poll(&p, 1, WARM_STOP_MS) == 0)
        syscall(SYS_pidfd_send_signal, pool->pidfd, SIGKILL, NULL, 0);
    close(pool->pidfd);
    pool->pidfd = -1;
    pool->pid = -1;
}

bool exec_warm_serving(const char *state_dir)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (warm_sock_path(state_dir, a.sun_path, sizeof a.sun_path) < 0)
        return false;
    cleanup_fd int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    /* A connection the pool reads nothing from: it is closed at once. */
    return s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;
}

int exec_warm_stats(const char *state_dir, struct exec_warm_stats *s)
{
    char path[PATH_MAX];
    cleanup_free char *text = NULL;
    size_t n;
    memset(s, 0, sizeof *s);
    if (snprintf(path, sizeof path, "%s/" WARM_DIR "/" WARM_STATS, state_dir) >= (int)sizeof path)
        return -ENAMETOOLONG;
    int rc = util_read_file_at(AT_FDCWD, path, 4096, &text, &n);
    if (rc < 0)
        return rc;
    unsigned long long envs = 0, runs = 0, skipped = 0;
    if (sscanf(text, "envs %llu\nruns %llu", &envs, &runs) != 2)
        return -EINVAL;
    const char *sk = strstr(text, "\nskipped "), *sp = strstr(text, "\nspares ");
    if (sk)
        skipped = strtoull(sk + 9, NULL, 10);
    if (sp)
        s->spares = strtoull(sp + 8, NULL, 10);
    s->envs = envs;
    s->runs = runs;
    s->skipped = skipped;
    s->serving = exec_warm_serving(state_dir);
    return 0;
}
