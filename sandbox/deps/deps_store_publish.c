/* deps_store_publish.c: the end of new package store entries: their
 * bytecode compiled in one run of the interpreter (in the jail without
 * the network), each sealed (its size in its mark, read-only), one sync,
 * each published by rename and its lock given back; or dropped whole. */
#include "config.h"

#include "deps_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "proc.h"

#define STORE_COMPILE_BINDS 12 /* entries compiled in one run of the interpreter (one bind each) */

/* py_compile over the site/ of each of n entries being made,
 * in one start of the interpreter with a process per core, in the jail
 * without the network where io gives one (it is the wheels' text being
 * read), bounded by timeout_ms. */
static int compile_entries(const char *python, char *const *tmps, size_t n, const struct deps_install_io *io,
                           int64_t timeout_ms, char *err, size_t errlen)
{
    /* One pool of a process per core over the files of every entry (a
     * pool per directory, as compileall.compile_dir makes, starts 13
     * pools for 13 wheels, most of them for a file or two). The test
     * suites packages ship (directories named tests or test: more than
     * half of the files of pandas and numpy) are not compiled: a script
     * seldom imports them, and one that does compiles them in memory,
     * as Python does wherever it cannot write. Where processes cannot
     * share a semaphore (the fallback's Landlock keeps /dev/shm shut)
     * one process does it all. */
    static const char prog[] =
        "import os, sys, py_compile\n"
        "def files(top):\n"
        "    for root, dirs, names in os.walk(top):\n"
        "        dirs[:] = sorted(d for d in dirs if d not in ('tests', 'test', '__pycache__'))\n"
        "        for n in sorted(names):\n"
        "            if n.endswith('.py'):\n"
        "                yield os.path.join(root, n)\n"
        "def one(path):\n"
        "    try:\n"
        "        py_compile.compile(path, doraise=True)\n"
        "        return True\n"
        "    except (py_compile.PyCompileError, SyntaxError, ValueError):\n"
        "        return False\n"
        "paths = [p for d in sys.argv[1:] for p in files(d)]\n"
        "try:\n"
        "    import concurrent.futures\n"
        "    with concurrent.futures.ProcessPoolExecutor() as pool:\n"
        "        done = list(pool.map(one, paths, chunksize=16))\n"
        "except OSError:\n"
        "    done = [one(p) for p in paths]\n"
        "bad = [p for p, ok in zip(paths, done) if not ok]\n"
        "if bad:\n"
        "    print('%d files did not compile, the last %s' % (len(bad), bad[-1]))\n"
        "sys.exit(1 if bad else 0)\n";
    size_t head = 4;
    cleanup_free const char **argv = calloc(head + n + 1, sizeof *argv);
    cleanup_free char **sites = calloc(n + 1, sizeof *sites);
    cleanup_free struct jail_bind *binds = calloc(n + 1, sizeof *binds);
    int rc = argv && sites && binds ? 0 : -ENOMEM;
    const char *fixed[] = {python, "-I", "-c", prog};
    for (size_t i = 0; rc == 0 && i < head; i++)
        argv[i] = fixed[i];
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (asprintf(&sites[i], "%s/site", tmps[i]) < 0) {
            sites[i] = NULL;
            rc = -ENOMEM;
            break;
        }
        argv[head + i] = sites[i];
        binds[i] = (struct jail_bind){tmps[i], tmps[i], JAIL_BIND_RW};
    }
    cleanup_free char *out = NULL;
    int st = 0;
    if (rc == 0 && io && io->jail) {
        struct jail_tool t = *io->jail;
        t.o.binds = binds;
        t.o.n_binds = n;
        t.o.argv = argv;
        t.o.envp = deps__helper_envp;
        t.o.cwd = "/";
        t.o.network = false;
        t.o.chown_paths = (const char *const *)tmps;
        t.o.n_chown_paths = n;
        t.timeout_ms = timeout_ms;
        t.max_output = 1u << 20;
        t.line = NULL;
        rc = jail_run_tool(&t, &st, &out, err, errlen);
    } else if (rc == 0) {
        rc = proc_run(argv, deps__helper_envp, timeout_ms, 1u << 20, &out, &st, NULL, NULL);
    }
    for (size_t i = 0; sites && i < n; i++)
        free(sites[i]);
    if (rc == -ETIMEDOUT) {
        snprintf(err, errlen, "compiling the bytecode took longer than install_time");
        return rc;
    }
    if (rc < 0)
        return rc;
    /* compileall (our loop) exits 1 when a file does not compile (a module for
     * another Python version, a test of syntax errors): pip goes on, and
     * so do we; that module is compiled at import or not at all. */
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
        log_msg(LOG_LVL_INFO, "store: files left uncompiled: %s", deps__last_line(out));
    if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
        snprintf(err, errlen, "compiling the bytecode failed: %s", deps__last_line(out));
        return -EIO;
    }
    return 0;
}

static int add_blocks(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    (void)dirfd, (void)name, (void)depth;
    *(uint64_t *)ctx += (uint64_t)st->st_blocks * 512;
    return 0;
}

/* The entry compiled: its size into the mark, the mark written (the sign
 * of a whole entry), everything read-only. Not synced yet. */
static int seal_entry(const struct deps__pending *p)
{
    cleanup_fd int dir = openat(p->store, p->tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0)
        return -errno;
    uint64_t bytes = 0;
    struct util_walk wb = {.pre = add_blocks, .ctx = &bytes};
    int rc = util_walk_at(dir, "", &wb);
    struct dbuf b;
    dbuf_init(&b, 8192);
    if (rc == 0)
        rc = dbuf_printf(&b, "%sbytes %llu\n", p->mark, (unsigned long long)bytes);
    if (rc == 0)
        rc = util_write_file_atomic(dir, DEPS_STORE_MARK, b.data, b.len, 0444);
    dbuf_free(&b);
    struct util_walk wr = {.pre = deps__readonly_walk};
    if (rc == 0)
        rc = util_walk_at(dir, "", &wr);
    return rc;
}

void deps__pending_drop(struct deps__pending *p)
{
    if (p->store >= 0 && p->tmpname[0])
        discard(deps__remove_tree(p->store, p->tmpname));
    if (p->store >= 0)
        close(p->store);
    if (p->lock >= 0)
        close(p->lock);
    free(p->tmp);
    free(p->mark);
    memset(p, 0, sizeof *p);
    p->store = p->lock = -1;
}

int deps__store_finish(const struct deps__store *s, struct deps__pending *p, size_t n, char *err, size_t errlen)
{
    err[0] = '\0';
    if (n == 0)
        return 0;
    cleanup_free char **tmps = calloc(n, sizeof *tmps);
    if (!tmps)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        tmps[i] = p[i].tmp;
    int64_t t0 = util_now_ms();
    int rc = 0;
    /* A bind each: the jail's mount plan has room for STORE_COMPILE_BINDS
     * of them beside its own. */
    for (size_t i = 0; rc == 0 && i < n; i += STORE_COMPILE_BINDS)
        rc = compile_entries(s->python, tmps + i, n - i < STORE_COMPILE_BINDS ? n - i : STORE_COMPILE_BINDS, s->io,
                             s->timeout_ms, err, errlen);
    int64_t t1 = util_now_ms();
    if (rc == 0)
        deps__fault("compile");
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((rc = seal_entry(&p[i])) < 0)
            snprintf(err, errlen, "finishing the store entry %s: %s", p[i].hash, strerror(-rc));
    /* One sync for them all (syncfs: the file system they share), then
     * each published by rename. */
    if (rc == 0 && syncfs(p[0].store) < 0) {
        rc = -errno;
        snprintf(err, errlen, "syncing the store: %s", strerror(errno));
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (renameat(p[i].store, p[i].tmpname, p[i].store, p[i].hash) < 0) {
            rc = -errno;
            snprintf(err, errlen, "publishing the store entry %s: %s", p[i].hash, strerror(errno));
            break;
        }
        p[i].tmpname[0] = '\0';
        if (fsync(p[i].store) < 0)
            log_msg(LOG_LVL_WARN, "store: fsync of its directory: %s", strerror(errno));
    }
    for (size_t i = 0; i < n; i++)
        deps__pending_drop(&p[i]);
    log_msg(LOG_LVL_DEBUG, "timing: store: %zu entries compiled in %lld ms, sealed, synced and published in %lld ms", n,
            (long long)(t1 - t0), (long long)(util_now_ms() - t1));
    return rc;
}

