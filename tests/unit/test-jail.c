/* test-jail.c: jail_run_tool (the installer's jail), the probe, the
 * read-only binds (their submounts too, and as many as an environment's
 * store entries), the memory watch's sum, and the fallback's names. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "util.h"
#include "tap.h"

static int lines;
static void count_line(void *ctx, const char *line)
{
    (void)ctx;
    (void)line;
    lines++;
}

/* t with binds and argv of a probe's own, 20 s to run, no line callback. */
static struct jail_tool probe_tool(const struct jail_tool *t, const struct jail_bind *binds, size_t n,
                                   const char *const *argv)
{
    struct jail_tool rt = *t;
    rt.o.binds = binds;
    rt.o.n_binds = n;
    rt.o.argv = argv;
    rt.timeout_ms = 20000;
    rt.line = NULL;
    return rt;
}

/* A read-only bind is read-only all the way down: as root, in a mount
 * namespace of the test's own (nothing reaches the host's mounts), a
 * directory with a writable tmpfs inside it is bound read-only into the
 * jail, and a write into the tmpfs must fail there with EROFS. */
static void ro_submount(const char *state, struct jail_tool *t, enum jail_mode mode)
{
    const int n_checks = 4;
    const char *why = mode != JAIL_MODE_NAMESPACES ? "no namespaces here"
                      : geteuid() != 0             ? "mounting a tmpfs needs root"
                                                   : NULL;
    if (!why && (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0))
        why = "no private mount namespace for the test";
    if (why) {
        for (int i = 0; i < n_checks; i++)
            ok(1, "# SKIP %s", why);
        return;
    }
    char ro[300], sub[320], probe[340];
    snprintf(ro, sizeof ro, "%s/ro", state);
    snprintf(sub, sizeof sub, "%s/sub", ro);
    snprintf(probe, sizeof probe, "%s/outside", sub);
    ok(mkdir(ro, 0755) == 0 && mkdir(sub, 0755) == 0 && mount("tmpfs", sub, "tmpfs", 0, "size=1m,mode=1777") == 0,
       "a tmpfs below a directory, in the test's own mount namespace");
    int fd = open(probe, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ok(fd >= 0, "the tmpfs is writable outside the jail");
    if (fd >= 0)
        close(fd);
    struct jail_bind binds[] = {{ro, "/ro", 0}};
    const char *argv[] = {"/bin/sh", "-c", "echo x > /ro/sub/inside && echo wrote", NULL};
    struct jail_tool rt = probe_tool(t, binds, 1, argv);
    int st = -1;
    char *out = NULL;
    char err[256] = "";
    int rc = jail_run_tool(&rt, &st, &out, err, sizeof err);
    is_int(rc, 0, "the tool ran with the read-only bind (%s)", err);
    ok(out && strstr(out, "Read-only file system") && !strstr(out, "wrote"),
       "a write into the submount of a read-only bind fails with EROFS: %s", out ? out : "(no output)");
    free(out);
    if (umount2(sub, MNT_DETACH) < 0)
        diag("umount %s: %s", sub, strerror(errno));
}

/* An environment's store entries are one bind each, at their host
 * paths: 300 read-only binds (in the fallback, 300 Landlock rules) all
 * reach the run, and one past JAIL_BINDS_MAX is refused with a reason. */
static void many_binds(const char *state, const struct jail_tool *t)
{
    enum { N = 300 };
    static char paths[JAIL_BINDS_MAX + 1][320];
    static struct jail_bind binds[JAIL_BINDS_MAX + 1];
    bool made = true;
    for (int i = 0; i < N && made; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/many/d%03d", state, i);
        char f[340];
        made = snprintf(f, sizeof f, "%s/f", paths[i]) < (int)sizeof f && util_mkdir_p(paths[i], 0755) == 0 &&
               util_write_file_new(AT_FDCWD, f, "x\n", 2, 0644) == 0;
        binds[i] = (struct jail_bind){paths[i], paths[i], 0};
    }
    ok(made, "%d directories to bind", N);
    char script[1024];
    snprintf(script, sizeof script, "cat %s/f %s/f %s/f | wc -l", paths[0], paths[N / 2], paths[N - 1]);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    struct jail_tool rt = probe_tool(t, binds, N, argv);
    rt.o.n_chown_paths = 0;
    int st = -1;
    char *out = NULL;
    char err[256] = "";
    int rc = jail_run_tool(&rt, &st, &out, err, sizeof err);
    is_int(rc, 0, "a run with %d read-only binds (%s)", N, err);
    ok(out && strstr(out, "3"), "the first, a middle and the last are there: %s", out ? out : "(no output)");
    free(out);
    out = NULL;
    for (int i = N; i <= JAIL_BINDS_MAX; i++)
        binds[i] = binds[0];
    rt.o.n_binds = JAIL_BINDS_MAX + 1;
    err[0] = '\0';
    rc = jail_run_tool(&rt, &st, &out, err, sizeof err);
    is_int(rc, -E2BIG, "one bind past JAIL_BINDS_MAX is refused");
    ok(strstr(err, "binds") != NULL, "with a reason: %s", err);
    free(out);
}

/* jail_memory_check on a run of its own in the fallback (which never has a
 * cgroup): a sleeping process holds more than a page and less than a TiB,
 * and nothing once the run is over. */
static void memory_check(const struct jail_tool *t)
{
    struct jail_opts o = t->o;
    const char *argv[] = {"/bin/sleep", "30", NULL};
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    o.mode = JAIL_MODE_RLIMITS;
    o.argv = argv;
    o.fd_in = o.fd_out = o.fd_err = null;
    struct jail_proc p;
    char err[256] = "";
    int rc = jail_start(&o, &p, err, sizeof err);
    is_int(rc, 0, "a run to measure started (%s)", err);
    uint64_t held = 0, tiny = 0, huge = 0;
    /* The sleep may still be starting: its first pages are enough. */
    for (int i = 0; i < 200 && rc == 0 && held == 0; i++) {
        discard(jail_memory_check(&p, 4096, &held));
        if (held == 0)
            usleep(10000);
    }
    int over = rc == 0 ? jail_memory_check(&p, 4096, &tiny) : -1;
    int under = rc == 0 ? jail_memory_check(&p, 1ull << 40, &huge) : -1;
    ok(over == 1 && tiny > 4096, "over a limit of one page: %d (%llu bytes)", over, (unsigned long long)tiny);
    ok(under == 0 && huge > 0 && huge < (1ull << 40), "under a TiB: %d (%llu bytes)", under,
       (unsigned long long)huge);
    if (rc == 0) {
        jail_kill_all(&p);
        ok(jail_memory_check(&p, 4096, &held) == 0 && held == 0, "an ended run holds nothing");
        jail_proc_free(&p);
    } else {
        ok(0, "an ended run holds nothing (no run)");
    }
    if (null >= 0)
        close(null);
}

/* What a fallback run is called on hosts with and without Landlock and
 * seccomp, under each landlock setting; on refuses a host without it. */
static void fallback_names(void)
{
    static const struct {
        int abi;
        bool seccomp;
        enum exec_landlock l;
        const char *want;
    } cases[] = {
        {7, true, EXEC_LANDLOCK_AUTO, "landlock+seccomp"}, {7, true, EXEC_LANDLOCK_ON, "landlock+seccomp"},
        {7, true, EXEC_LANDLOCK_OFF, "rlimits"},           {1, false, EXEC_LANDLOCK_AUTO, "landlock"},
        {0, true, EXEC_LANDLOCK_AUTO, "rlimits+seccomp"},  {0, false, EXEC_LANDLOCK_AUTO, "rlimits"},
        {0, true, EXEC_LANDLOCK_ON, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct probe_caps c = {.landlock_abi = cases[i].abi, .seccomp = cases[i].seccomp};
        const char *got = probe_fallback_isolation(&c, cases[i].l);
        ok(got == cases[i].want || (got && cases[i].want && !strcmp(got, cases[i].want)),
           "the fallback with ABI %d, seccomp %d, landlock %d: %s (want %s)", cases[i].abi, cases[i].seccomp,
           (int)cases[i].l, got ? got : "refused", cases[i].want ? cases[i].want : "refused");
    }
}

/* jail_stdin_waiting sees a process of the run (here, in the fallback's
 * way: a descendant of ours) blocked reading the pipe, and only that: not
 * one that sleeps, nor one that reads another pipe. */
static pid_t child_doing(int read_fd, int other_fd)
{
    pid_t c = fork();
    if (c == 0) {
        char b;
        if (read_fd >= 0)
            _exit(read(read_fd, &b, 1) == 1 ? 0 : 1);
        if (other_fd >= 0)
            _exit(read(other_fd, &b, 1) == 1 ? 0 : 1);
        sleep(30);
        _exit(0);
    }
    return c;
}

static bool waits_within(struct jail_proc *p, ino_t ino, int want)
{
    for (int i = 0; i < 100; i++) {
        if (jail_stdin_waiting(p, ino) == want)
            return true;
        usleep(20000);
    }
    return false;
}

static void stdin_waiting(void)
{
    int in[2], other[2];
    struct stat st;
    ok(pipe(in) == 0 && pipe(other) == 0 && fstat(in[1], &st) == 0, "stdin: two pipes");
    pid_t sleeper = child_doing(-1, -1);
    pid_t elsewhere = child_doing(-1, other[0]);
    struct jail_proc p = {.mode = JAIL_MODE_RLIMITS, .pid = sleeper, .pidfd = -1};
    usleep(200000);
    is_int(jail_stdin_waiting(&p, st.st_ino), 0, "stdin: a process that sleeps, one that reads another pipe: not waiting");
    pid_t reader = child_doing(in[0], -1);
    ok(waits_within(&p, st.st_ino, 1), "stdin: a process blocked reading the pipe: waiting");
    ok(write(in[1], "x", 1) == 1, "stdin: a byte for it");
    int status = 0;
    ok(waitpid(reader, &status, 0) == reader && WIFEXITED(status) && WEXITSTATUS(status) == 0, "stdin: it read it");
    is_int(jail_stdin_waiting(&p, st.st_ino), 0, "stdin: then no one waits");
    p.reaped = true;
    is_int(jail_stdin_waiting(&p, st.st_ino), 0, "stdin: a run that ended waits on nothing");
    ok(write(other[1], "x", 1) == 1, "stdin: the other reader's byte");
    kill(sleeper, SIGKILL);
    waitpid(sleeper, NULL, 0);
    waitpid(elsewhere, NULL, 0);
    close(in[0]), close(in[1]), close(other[0]), close(other[1]);
}

int main(void)
{
    fallback_names();
    stdin_waiting();
    char state[] = "/tmp/rms-test-jail-XXXXXX";
    ok(mkdtemp(state) != NULL, "state directory");
    chmod(state, 0755);
    char envdir[300];
    snprintf(envdir, sizeof envdir, "%s/env", state);
    ok(mkdir(envdir, 0755) == 0, "a directory to bind");

    struct probe_caps caps;
    probe_host(&caps);
    enum jail_mode mode = caps.userns && caps.seccomp ? JAIL_MODE_NAMESPACES : JAIL_MODE_RLIMITS;
    diag("mode: %s", mode == JAIL_MODE_NAMESPACES ? "namespaces" : "rlimits");
    struct exec_limits lim;
    exec_limits_default(&lim);
    const char *inside = mode == JAIL_MODE_NAMESPACES ? "/env" : envdir;
    struct jail_bind binds[] = {{envdir, "/env", JAIL_BIND_RW}};
    char script[600];
    snprintf(script, sizeof script,
             "echo out line; echo err line >&2; echo written > %s/made; cat /proc/net/dev | wc -l", inside);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    const char *envp[] = {"PATH=/usr/bin:/bin", NULL};
    const char *chown_paths[] = {envdir};
    struct jail_tool t = {
        .o = {.mode = mode, .binds = binds, .n_binds = 1, .argv = argv, .envp = envp, .cwd = "/",
              .limits = &lim, .network = true, .state_dir = state, .tag = "0123456789abcdef0123456789abcdef",
              .uid_base = 800000, .uid_count = 16, .chown_paths = chown_paths, .n_chown_paths = 1},
        .timeout_ms = 20000,
        .max_output = 1 << 16,
        .line = count_line,
    };
    int st = -1;
    char *out = NULL;
    char err[256] = "";
    int rc = jail_run_tool(&t, &st, &out, err, sizeof err);
    is_int(rc, 0, "the tool ran (%s)", err);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "and exited 0");
    ok(out && strstr(out, "out line\n") && strstr(out, "err line\n"), "stdout and stderr are captured");
    is_int(lines, 3, "each line reaches the callback");
    char made[400];
    snprintf(made, sizeof made, "%s/made", envdir);
    ok(access(made, F_OK) == 0, "the tool wrote into its bound directory");
    if (mode == JAIL_MODE_NAMESPACES) {
        /* /proc/net/dev: two header lines, then lo and the host's
         * interfaces: 3 lines would mean lo alone. */
        ok(out && !strstr(out, "\n3\n"), "with network on, the tool sees more than lo");
    } else {
        ok(1, "# SKIP no namespaces here");
    }
    free(out);

    /* A time limit. */
    const char *slow[] = {"/bin/sleep", "30", NULL};
    t.o.argv = slow;
    t.timeout_ms = 300;
    t.line = NULL;
    out = NULL;
    rc = jail_run_tool(&t, &st, &out, err, sizeof err);
    is_int(rc, -ETIMEDOUT, "a tool past its time is killed");
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "by SIGKILL");
    free(out);

    /* A tool that cannot start says why. */
    const char *missing[] = {"/nonexistent/tool", NULL};
    t.o.argv = missing;
    t.timeout_ms = 5000;
    out = NULL;
    rc = jail_run_tool(&t, &st, &out, err, sizeof err);
    ok(rc < 0 && strstr(err, "starting the interpreter"), "a missing tool fails to start: %s", err);
    free(out);

    t.o.argv = argv;
    many_binds(state, &t);
    memory_check(&t);
    ro_submount(state, &t, mode);

    ok(util_rm_rf_at(AT_FDCWD, state) == 0, "cleanup");
    return tap_done();
}
