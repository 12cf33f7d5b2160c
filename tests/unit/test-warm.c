/* test-warm.c: what the warm pool learns (warm_learn.c): module paths
 * checked and learned in order after warm_modules, a zygote's reports
 * (what it imported, what it skipped and why), the skipped left out of
 * what a zygote imports, the learned file written and read back, and the
 * environments most used first, only those still there. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "warm_internal.h"
#include "tap.h"

/* A \0-separated list ending in \0\0, as a run's request carries it. */
static size_t list(char *buf, size_t cap, const char *const *v)
{
    size_t at = 0;
    for (; *v; v++) {
        size_t l = strlen(*v) + 1;
        if (at + l + 1 > cap)
            break;
        memcpy(buf + at, *v, l);
        at += l;
    }
    buf[at] = '\0';
    return at + 1;
}

static char *modules(const struct warm_env *e)
{
    static char out[4096];
    struct dbuf b;
    dbuf_init(&b, sizeof out - 1);
    snprintf(out, sizeof out, "%s", warm__modules_for(e, &b) == 0 && b.data ? b.data : "");
    dbuf_free(&b);
    return out;
}

static void names(void)
{
    ok(warm_module_ok("matplotlib.pyplot") && warm_module_ok("PIL.Image") && warm_module_ok("a_b.c9"),
       "module paths are names");
    ok(!warm_module_ok("") && !warm_module_ok(".rel") && !warm_module_ok("9x") && !warm_module_ok("a..b") &&
           !warm_module_ok("a.") && !warm_module_ok("os;rm") && !warm_module_ok("a b"),
       "and nothing else: empty, relative, a digit first, empty parts, other characters");
    char big[WARM_MODULE_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ok(!warm_module_ok(big), "at most WARM_MODULE_MAX bytes");
}

static void learning(const char *state)
{
    char dir[512], env[600], env2[600], gone[600], cfgp[700];
    snprintf(dir, sizeof dir, "%s/.warm", state);
    snprintf(env, sizeof env, "%s/envs/aaaa", state);
    snprintf(env2, sizeof env2, "%s/envs/bbbb", state);
    snprintf(gone, sizeof gone, "%s/envs/cccc", state);
    snprintf(cfgp, sizeof cfgp, "%s/envs", state);
    ok(mkdir(dir, 0700) == 0 && mkdir(cfgp, 0755) == 0 && mkdir(env, 0755) == 0 && mkdir(env2, 0755) == 0,
       "a state directory with two environments");
    const char *const envs[] = {env, env2};
    for (size_t i = 0; i < 2; i++) {
        snprintf(cfgp, sizeof cfgp, "%s/pyvenv.cfg", envs[i]);
        int fd = open(cfgp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ok(fd >= 0 && close(fd) == 0, "%s is complete", envs[i]);
    }

    struct warm_learning l = {.dir = dir, .modules_cfg = "numpy, pandas"};
    struct warm_env *e = warm__env_of(&l, env, true);
    ok(e != NULL, "an environment's entry is made");
    is_str(modules(e), "numpy,pandas", "warm_modules first");
    char req[512];
    const char *const imp[] = {"matplotlib.pyplot", "os", "numpy", "bad;name", "a..b", "rms_thread", NULL};
    size_t n = list(req, sizeof req, imp);
    ok(warm__learn(&l, e, req, n, false), "a run's imports grow the list");
    is_str(modules(e), "numpy,pandas,matplotlib.pyplot,os,rms_thread", "whole paths, in order, each once, checked");
    ok(!warm__learn(&l, e, req, n, true), "the same imports again: no growth");
    ok(e->uses[0] == 1 && e->uses[1] == 1, "its runs are counted per kind");

    const char inf[] = "inumpy pandas matplotlib.pyplot os";
    is_int(warm__report(&l, e, inf, strlen(inf)), 'i', "a zygote's report of what it imported");
    is_str(e->imported, "numpy pandas matplotlib.pyplot os", "is kept");
    const char uns[] = "urms_thread a thread";
    is_int(warm__report(&l, e, uns, strlen(uns)), 'u', "a module that left a thread");
    const char fail[] = "spandas failed (ImportError)\x01";
    is_int(warm__report(&l, e, fail, strlen(fail)), 's', "a module that failed");
    is_int(warm__report(&l, e, uns, strlen(uns)), 'u', "the same again");
    is_int(warm__skipped_count(&l), 2, "each skipped once");
    is_str(modules(e), "numpy,matplotlib.pyplot,os", "what a zygote imports leaves the skipped out");
    is_int(warm__report(&l, e, "x", 1), 0, "a message of no kind means nothing");

    struct warm_env *e2 = warm__env_of(&l, env2, true);
    e = warm__env_of(&l, env, false);
    const char *const imp2[] = {"json", NULL};
    n = list(req, sizeof req, imp2);
    for (int i = 0; i < 5; i++)
        discard(warm__learn(&l, e2, req, n, true));
    struct warm_env *e3 = warm__env_of(&l, gone, true);
    for (int i = 0; i < 9; i++)
        discard(warm__learn(&l, e3, req, n, false));
    warm__save(&l, false);
    snprintf(cfgp, sizeof cfgp, "%s/" WARM_LEARNED, dir);
    struct stat st;
    ok(stat(cfgp, &st) == 0 && (st.st_mode & 0777) == 0600, "the learned file is written, the pool's own");
    warm__learning_free(&l);

    struct warm_learning back = {.dir = dir, .modules_cfg = ""};
    warm__load(&back);
    e = warm__env_of(&back, env, false);
    ok(e && e->uses[0] == 1 && e->uses[1] == 1, "read back: the counts");
    is_str(e ? modules(e) : "", "numpy,matplotlib.pyplot,os", "the modules, the skipped ones still skipped");
    is_int(warm__skipped_count(&back), 2, "and why is kept");
    struct warm_env *top[4];
    bool jobs[4];
    size_t got = warm__most_used(&back, 4, top, jobs);
    is_int(got, 3, "the environments still there, per kind (the one removed is left out)");
    ok(got == 3 && !strcmp(top[0]->env, env2) && jobs[0] && !strcmp(top[1]->env, env) && !strcmp(top[2]->env, env),
       "most used first");
    got = warm__most_used(&back, 1, top, jobs);
    is_int(got, 1, "within what is asked");
    warm__learning_free(&back);

    /* A file of nonsense: nothing of it is taken. */
    int fd = open(cfgp, O_WRONLY | O_TRUNC | O_CLOEXEC);
    const char junk[] = "env relative/path\nuses 5 5\nenv /x\nuses 3 3\nlearned ok bad;one\nskipped\nuses x\n";
    ok(fd >= 0 && write(fd, junk, sizeof junk - 1) == (ssize_t)(sizeof junk - 1) && close(fd) == 0, "a damaged file");
    struct warm_learning junked = {.dir = dir, .modules_cfg = ""};
    warm__load(&junked);
    e = warm__env_of(&junked, "/x", false);
    ok(!warm__env_of(&junked, "relative/path", false) && e && !strcmp(modules(e), "ok"),
       "only absolute environments and module paths are read back");
    is_int(warm__most_used(&junked, 4, top, jobs), 0, "and one that is no environment of the state directory is never started");
    warm__learning_free(&junked);
}

int main(void)
{
    char state[] = "/tmp/rms-test-warm-XXXXXX";
    if (!mkdtemp(state))
        return 1;
    names();
    learning(state);
    discard(util_rm_rf_at(AT_FDCWD, state));
    return tap_done();
}
