/* warm_learn.c: what the warm pool learns of each environment, beneath
 * warm_pool.c: the module paths its runs import (matplotlib.pyplot, not
 * only matplotlib) after warm_modules, the ones a zygote of it could not
 * import safely (skipped from then on), what its last zygote imported, and
 * how often its runs came. STATE/.warm/learned keeps it across restarts,
 * so that a pool that starts again starts the environments most used
 * before, with what they import. The file is the pool's own (0600 in a
 * 0700 directory); what it reads back is checked as a request is: module
 * paths by warm_module_ok, environments that are still directories of
 * STATE/envs. */
#include "config.h"

#include "warm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WARM_LEARNED_EVERY_MS 30000 /* a lazy save (the counts of runs) at most this often */

bool warm_module_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > WARM_MODULE_MAX || name[0] == '.' || (name[0] >= '0' && name[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return false;
        if (c == '.' && (i + 1 == n || name[i + 1] == '.'))
            return false;
    }
    return true;
}

/* Whether name (up to len bytes) is one of e's skipped ("NAME WHY"). */
static bool is_skipped(const struct warm_env *e, const char *name, size_t len)
{
    for (size_t i = 0; i < e->skipped.n; i++)
        if (!strncmp(e->skipped.v[i], name, len) && e->skipped.v[i][len] == ' ')
            return true;
    return false;
}

static void add_module(struct warm_env *e, const char *name, size_t len)
{
    char m[WARM_MODULE_MAX + 1];
    if (!len || len > WARM_MODULE_MAX || e->mods.n >= WARM_MODULES_MAX)
        return;
    memcpy(m, name, len);
    m[len] = '\0';
    if (warm_module_ok(m) && !strv_has(&e->mods, m))
        discard(strv_push(&e->mods, m, len));
}

struct warm_env *warm__env_of(struct warm_learning *l, const char *env, bool make)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].env, env))
            return &l->v[i];
    if (!make || strlen(env) >= sizeof l->v[0].env)
        return NULL;
    struct warm_env *n = realloc(l->v, (l->n + 1) * sizeof *n);
    if (!n)
        return NULL;
    l->v = n;
    struct warm_env *e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->env, sizeof e->env, "%s", env);
    /* The configured modules come first, for every environment. */
    for (const char *m = l->modules_cfg ? l->modules_cfg : ""; *m;) {
        size_t len = strcspn(m, " ,");
        add_module(e, m, len);
        m += len;
        m += strspn(m, " ,");
    }
    return e;
}

bool warm__learn(struct warm_learning *l, struct warm_env *e, const char *imports, size_t len, bool job)
{
    size_t before = e->mods.n;
    for (const char *m = imports; m < imports + len && *m; m += strlen(m) + 1)
        add_module(e, m, strnlen(m, (size_t)(imports + len - m)));
    e->uses[job ? 1 : 0]++;
    l->dirty = true;
    return e->mods.n > before;
}

int warm__modules_for(const struct warm_env *e, struct dbuf *b)
{
    int rc = 0;
    bool first = true;
    for (size_t i = 0; rc == 0 && i < e->mods.n; i++) {
        if (is_skipped(e, e->mods.v[i], strlen(e->mods.v[i])))
            continue;
        rc = dbuf_printf(b, "%s%s", first ? "" : ",", e->mods.v[i]);
        first = false;
    }
    return rc;
}

/* "NAME WHY" into e's skipped (once), the reason cut to WARM_SKIP_WHY and
 * made printable; said in the log unless it is read back (quiet). */
static void skip(struct warm_env *e, const char *msg, size_t len, bool quiet)
{
    size_t nl = strcspn(msg, " ");
    if (nl > len)
        nl = len;
    char name[WARM_MODULE_MAX + 1], line[WARM_MODULE_MAX + WARM_SKIP_WHY + 2];
    if (!nl || nl > WARM_MODULE_MAX)
        return;
    memcpy(name, msg, nl);
    name[nl] = '\0';
    if (!warm_module_ok(name) || is_skipped(e, name, nl))
        return;
    size_t k = (size_t)snprintf(line, sizeof line, "%s ", name);
    for (size_t i = nl + 1; i < len && k + 1 < sizeof line && msg[i]; i++)
        line[k++] = msg[i] >= 0x20 && msg[i] < 0x7f ? msg[i] : '?';
    if (k == nl + 1)
        line[k++] = '?';
    line[k] = '\0';
    discard(strv_push(&e->skipped, line, k));
    if (!quiet)
        log_msg(LOG_LVL_WARN, "warm pool: %s is not imported ahead for %s: %s", name, e->env, line + nl + 1);
}

char warm__report(struct warm_learning *l, struct warm_env *e, const char *msg, size_t len)
{
    if (len == 0)
        return 0;
    switch (msg[0]) {
    case 'i': {
        char *t = strndup(msg + 1, len - 1);
        if (!t)
            return 0;
        for (char *c = t; *c; c++)
            if (!(*c == ' ' || *c == '.' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
                  (*c >= 'A' && *c <= 'Z')))
                *c = '?';
        free(e->imported);
        e->imported = t;
        break;
    }
    case 's':
    case 'u':
        skip(e, msg + 1, len - 1, false);
        break;
    default:
        return 0;
    }
    l->dirty = true;
    return msg[0];
}

unsigned warm__skipped_count(const struct warm_learning *l)
{
    unsigned n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += (unsigned)l->v[i].skipped.n;
    return n;
}

/* An environment a zygote may be started for: a directory of
 * STATE/envs (the learned file's dir is STATE/.warm) that is complete. */
static bool env_there(const struct warm_learning *l, const char *env)
{
    char envs[PATH_MAX], cfg[PATH_MAX + 16];
    size_t dl = strlen(l->dir);
    if (dl < sizeof WARM_DIR || snprintf(envs, sizeof envs, "%.*s/envs/", (int)(dl - sizeof WARM_DIR), l->dir) >=
                                    (int)sizeof envs)
        return false;
    const char *rest = env + strlen(envs);
    struct stat st;
    snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", env);
    return !strncmp(env, envs, strlen(envs)) && *rest && *rest != '.' && !strchr(rest, '/') &&
           lstat(env, &st) == 0 && S_ISDIR(st.st_mode) && lstat(cfg, &st) == 0 && S_ISREG(st.st_mode);
}

size_t warm__most_used(struct warm_learning *l, size_t max, struct warm_env **envs, bool *jobs)
{
    size_t n = 0;
    while (n < max) {
        struct warm_env *best = NULL;
        int best_job = 0;
        for (size_t i = 0; i < l->n; i++)
            for (int j = 0; j < 2; j++) {
                struct warm_env *e = &l->v[i];
                bool taken = false;
                for (size_t k = 0; k < n && !taken; k++)
                    taken = envs[k] == e && jobs[k] == (j == 1);
                if (!taken && e->uses[j] && (!best || e->uses[j] > best->uses[best_job]) && env_there(l, e->env)) {
                    best = e;
                    best_job = j;
                }
            }
        if (!best)
            break;
        envs[n] = best;
        jobs[n++] = best_job == 1;
    }
    return n;
}

/* One line of the learned file into the entry it belongs to (*e: the
 * last `env` line's). */
static void load_line(struct warm_learning *l, char *line, struct warm_env **e)
{
    char *sp = strchr(line, ' ');
    if (!sp)
        return;
    *sp++ = '\0';
    if (!strcmp(line, "env")) {
        *e = sp[0] == '/' ? warm__env_of(l, sp, true) : NULL;
        return;
    }
    if (!*e)
        return;
    if (!strcmp(line, "uses")) {
        unsigned long long a = 0, b = 0;
        if (sscanf(sp, "%llu %llu", &a, &b) == 2) {
            (*e)->uses[0] = a;
            (*e)->uses[1] = b;
        }
    } else if (!strcmp(line, "learned")) {
        for (char *m = sp; *m;) {
            size_t len = strcspn(m, " ");
            add_module(*e, m, len);
            m += len;
            m += strspn(m, " ");
        }
    } else if (!strcmp(line, "skipped")) {
        skip(*e, sp, strlen(sp), true);
    }
}

void warm__load(struct warm_learning *l)
{
    char path[PATH_MAX + 16];
    cleanup_free char *text = NULL;
    size_t n;
    snprintf(path, sizeof path, "%s/" WARM_LEARNED, l->dir);
    if (util_read_file_at(AT_FDCWD, path, WARM_LEARNED_MAX, &text, &n) < 0)
        return;
    struct warm_env *e = NULL;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        load_line(l, line, &e);
    }
    l->dirty = false;
}

/* The learned file's text: a block per environment. */
static int render(const struct warm_learning *l, struct dbuf *b)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        const struct warm_env *e = &l->v[i];
        rc = dbuf_printf(b, "env %s\nuses %llu %llu\nlearned", e->env, (unsigned long long)e->uses[0],
                         (unsigned long long)e->uses[1]);
        for (size_t k = 0; rc == 0 && k < e->mods.n; k++)
            rc = dbuf_printf(b, " %s", e->mods.v[k]);
        rc = rc ? rc : dbuf_printf(b, "\nimported %s\n", e->imported ? e->imported : "");
        for (size_t k = 0; rc == 0 && k < e->skipped.n; k++)
            rc = dbuf_printf(b, "skipped %s\n", e->skipped.v[k]);
        rc = rc ? rc : dbuf_printf(b, "\n");
    }
    return rc;
}

void warm__save(struct warm_learning *l, bool lazy)
{
    int64_t now = util_now_ms();
    if (!l->dirty || (lazy && now - l->written < WARM_LEARNED_EVERY_MS))
        return;
    struct dbuf b;
    dbuf_init(&b, WARM_LEARNED_MAX);
    cleanup_fd int dfd = open(l->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = dfd < 0 ? -errno : render(l, &b);
    /* A new file renamed over the old, without an fsync: the pool's loop
     * must not wait for the disk, and a file a crash left empty or old
     * only makes the next pool learn again. */
    if (rc == 0 && unlinkat(dfd, WARM_LEARNED ".new", 0) < 0 && errno != ENOENT)
        rc = -errno;
    if (rc == 0)
        rc = util_write_file_new(dfd, WARM_LEARNED ".new", b.data ? b.data : "", b.len, 0600);
    if (rc == 0 && renameat(dfd, WARM_LEARNED ".new", dfd, WARM_LEARNED) < 0)
        rc = -errno;
    dbuf_free(&b);
    if (rc < 0) {
        log_msg(LOG_LVL_WARN, "warm pool: writing %s/" WARM_LEARNED ": %s", l->dir, strerror(-rc));
        return;
    }
    l->dirty = false;
    l->written = now;
}

void warm__learning_free(struct warm_learning *l)
{
    for (size_t i = 0; i < l->n; i++) {
        strv_free(&l->v[i].mods);
        strv_free(&l->v[i].skipped);
        free(l->v[i].imported);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
