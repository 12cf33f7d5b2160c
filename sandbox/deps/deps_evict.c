/* deps_evict.c: eviction, by the run that built an environment: the least
 * recently used environments past env_cache_size (and, with the package
 * store, while they and the entries they link pass store_bytes), then the
 * store entries no environment links, least recently linked first; what
 * killed builds and unpacks left, and trash, removed on the way. Nothing a
 * run or a build holds is taken (the locks: deps_env.c, deps_store.c). */
#include "config.h"

#include "deps_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------ the environments */

struct cand {
    char name[40];
    struct timespec used;
    uint64_t bytes;
    struct strv wheels; /* "pyX.Y/HASH" it links */
    bool gone;
};

static int cmp_time(const struct timespec *x, const struct timespec *y)
{
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? -1 : 1;
    if (x->tv_nsec != y->tv_nsec)
        return x->tv_nsec < y->tv_nsec ? -1 : 1;
    return 0;
}

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    int c = cmp_time(&x->used, &y->used);
    return c ? c : strcmp(x->name, y->name);
}

static int cmp_entry(const void *a, const void *b)
{
    const struct deps__store_entry *x = a, *y = b;
    int c = cmp_time(&x->used, &y->used);
    return c ? c : strcmp(x->hash, y->hash);
}

static bool is_key(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* Removes envs/NAME (a .tmp- of a key) when nobody holds the key's build
 * lock: then the build that made it is dead. */
static void remove_stale_tmp(int envs, const char *name)
{
    char lockname[64];
    if (strlen(name) < 5 + 32 || !is_key(name + 5, 32))
        return;
    snprintf(lockname, sizeof lockname, ".%.32s.lock", name + 5);
    cleanup_fd int fd = openat(envs, lockname, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
        return; /* a build of this key is running */
    log_msg(LOG_LVL_INFO, "removing %s, left by a build that did not finish", name);
    discard(deps__remove_tree(envs, name));
}

/* The published environments, with what their manifests say; killed
 * builds' leftovers and trash removed on the way. */
static int list_cands(int envs, struct cand **out, size_t *n_out)
{
    struct cand *c = NULL;
    size_t n = 0, capn = 0;
    cleanup_dir DIR *d = util_opendir_at(envs);
    if (!d)
        return -errno;
    for (struct dirent *de; (de = readdir(d));) {
        const char *nm = de->d_name;
        if (!strncmp(nm, ".trash-", 7)) {
            discard(deps__remove_tree(envs, nm));
            continue;
        }
        if (!strncmp(nm, ".tmp-", 5)) {
            remove_stale_tmp(envs, nm);
            continue;
        }
        if (strlen(nm) != 32 || !is_key(nm, 32))
            continue;
        if (UTIL_GROW(c, n, capn, 16) < 0) {
            for (size_t i = 0; i < n; i++)
                strv_free(&c[i].wheels);
            free(c);
            return -ENOMEM;
        }
        memset(&c[n], 0, sizeof c[n]);
        cleanup_fd int fd = openat(envs, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || deps__manifest_read(fd, NULL, &c[n].bytes, &c[n].wheels) < 0) {
            strv_free(&c[n].wheels);
            continue;
        }
        snprintf(c[n].name, sizeof c[n].name, "%s", nm);
        c[n].used = st.st_mtim;
        n++;
    }
    *out = c;
    *n_out = n;
    return 0;
}

/* Evicts envs/NAME unless a run holds it (deps__evict_dir). 0, or
 * -EBUSY / -errno. */
static int evict_env(int envs, struct cand *c)
{
    int rc = deps__evict_dir(envs, c->name, NULL, NULL);
    if (rc < 0)
        return rc;
    log_msg(LOG_LVL_INFO, "evicted environment %s (%llu bytes, least recently used)", c->name,
            (unsigned long long)c->bytes);
    c->gone = true;
    return 0;
}

/* The store's part of the budget: how many environments still link each
 * entry, and the bytes of those they do. */
static uint64_t linked_bytes(const struct cand *c, size_t n, struct deps__store_entry *se, size_t ns,
                             unsigned *refs)
{
    uint64_t b = 0;
    memset(refs, 0, ns * sizeof *refs);
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; !c[i].gone && w < c[i].wheels.n; w++)
            for (size_t j = 0; j < ns; j++) {
                const char *ref = c[i].wheels.v[w], *slash = strchr(ref, '/');
                if (slash && !strcmp(slash + 1, se[j].hash) && (size_t)(slash - ref) == strlen(se[j].py) &&
                    !strncmp(ref, se[j].py, strlen(se[j].py)))
                    refs[j]++;
            }
    for (size_t j = 0; j < ns; j++)
        if (refs[j])
            b += se[j].bytes;
    return b;
}

/* ------------------------------------------------------ the store's entries */

/* The store's whole entries; dead unpacks and trash removed on the way.
 * *out is the caller's to free. */
static int list_entries(const char *state_dir, struct deps__store_entry **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    cleanup_free char *top = NULL;
    if (asprintf(&top, "%s/store", state_dir) < 0)
        return -ENOMEM;
    cleanup_fd int tfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (tfd < 0)
        return errno == ENOENT ? 0 : -errno;
    cleanup_dir DIR *td = util_opendir_at(tfd);
    size_t cap = 0;
    for (struct dirent *pe; td && (pe = readdir(td));) {
        if (strncmp(pe->d_name, "py", 2) || strlen(pe->d_name) >= sizeof (*out)->py)
            continue;
        cleanup_fd int pfd = openat(tfd, pe->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_dir DIR *pd = pfd < 0 ? NULL : util_opendir_at(pfd);
        for (struct dirent *de; pd && (de = readdir(pd));) {
            const char *nm = de->d_name;
            if (!strncmp(nm, ".trash-", 7)) {
                discard(deps__remove_tree(pfd, nm));
                continue;
            }
            if (!strncmp(nm, ".tmp-", 5) && strlen(nm) > 5 + 64) {
                /* A dead unpack: nobody holds its lock. */
                char lockname[80];
                snprintf(lockname, sizeof lockname, ".%.64s.lock", nm + 5);
                cleanup_fd int lf = openat(pfd, lockname, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
                if (lf < 0 || flock(lf, LOCK_EX | LOCK_NB) == 0) {
                    log_msg(LOG_LVL_INFO, "store: removing %s, left by an unpack that did not finish", nm);
                    discard(deps__remove_tree(pfd, nm));
                }
                continue;
            }
            if (strlen(nm) != 64 || nm[0] == '.')
                continue;
            cleanup_fd int efd = openat(pfd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            cleanup_free char *mark = NULL;
            size_t len;
            struct stat st;
            if (efd < 0 || fstat(efd, &st) < 0 || util_read_file_at(efd, DEPS_STORE_MARK, 4096, &mark, &len) < 0)
                continue;
            if (UTIL_GROW(*out, *n_out, cap, 64) < 0)
                return -ENOMEM;
            struct deps__store_entry *e = &(*out)[(*n_out)++];
            memset(e, 0, sizeof *e);
            memcpy(e->py, pe->d_name, strlen(pe->d_name) + 1);
            memcpy(e->hash, nm, 65);
            e->used = st.st_mtim;
            const char *b = strstr(mark, "\nbytes ");
            e->bytes = b ? strtoull(b + 7, NULL, 10) : 0;
        }
    }
    return 0;
}

/* Whether a published environment's manifest names the entry: asked
 * again under the entry's lock, since one published after the eviction
 * pass read the manifests links it now (through symlinks, which its
 * files would not outlive as hard links do). */
struct entry_ref {
    const char *state_dir;
    char ref[96]; /* pyX.Y/HASH */
};

static bool entry_linked(void *ctx)
{
    const struct entry_ref *r = ctx;
    cleanup_free char *envs = NULL;
    if (asprintf(&envs, "%s/envs", r->state_dir) < 0)
        return true;
    cleanup_fd int efd = open(envs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_dir DIR *d = efd < 0 ? NULL : util_opendir_at(efd);
    if (!d)
        return errno != ENOENT; /* not known: kept */
    bool linked = false;
    for (struct dirent *de; !linked && (de = readdir(d));) {
        if (strlen(de->d_name) != 32 || de->d_name[0] == '.')
            continue;
        cleanup_fd int env = openat(efd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_free char *store = NULL;
        struct strv w = {0};
        if (env >= 0 && deps__manifest_links(env, &store, &w) == 0)
            linked = strv_has(&w, r->ref);
        strv_free(&w);
    }
    return linked;
}

int deps__store_remove(const char *state_dir, const struct deps__store_entry *e)
{
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/store/%s", state_dir, e->py) < 0)
        return -ENOMEM;
    cleanup_fd int pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0)
        return -errno;
    struct entry_ref r = {state_dir, ""};
    snprintf(r.ref, sizeof r.ref, "%s/%s", e->py, e->hash);
    /* -EBUSY: a build is linking it, or an environment links it now */
    int rc = deps__evict_dir(pfd, e->hash, entry_linked, &r);
    if (rc == 0)
        log_msg(LOG_LVL_INFO, "store: evicted %s/%s (%llu bytes, no environment links it)", e->py, e->hash,
                (unsigned long long)e->bytes);
    return rc;
}

/* ------------------------------------------------------------ the pass */

int deps_evict(const char *state_dir, uint64_t cap, uint64_t store_cap, const char *keep_key)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/envs", state_dir);
    cleanup_fd int envs = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (envs < 0)
        return -errno;
    struct cand *c = NULL;
    struct deps__store_entry *se = NULL;
    unsigned *refs = NULL;
    size_t n = 0, ns = 0;
    uint64_t total = 0, stored = 0;
    int evicted = 0, rc = list_cands(envs, &c, &n);
    if (rc < 0)
        return rc;
    if (store_cap && (rc = list_entries(state_dir, &se, &ns)) < 0)
        goto out;
    if (ns && !(refs = calloc(ns, sizeof *refs))) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        total += c[i].bytes;
    for (size_t j = 0; j < ns; j++)
        stored += se[j].bytes;
    qsort(c, n, sizeof *c, cmp_cand);
    /* The environments first, least recently used first: one is made
     * again from the store in milliseconds, a store entry costs a
     * download. Past env_cache_size, or while what they link and hold
     * passes store_bytes. */
    for (size_t i = 0; i < n; i++) {
        bool over = (cap && total > cap) ||
                    (store_cap && total + linked_bytes(c, n, se, ns, refs) > store_cap);
        if (!over)
            break;
        if (keep_key && !strcmp(c[i].name, keep_key))
            continue;
        int e = evict_env(envs, &c[i]);
        if (e == -EBUSY)
            continue;
        if (e < 0) {
            rc = e;
            continue;
        }
        total -= c[i].bytes;
        evicted++;
    }
    /* Then the store entries no environment links, least recently
     * linked first, never one a build holds. */
    if (store_cap && total + stored > store_cap) {
        qsort(se, ns, sizeof *se, cmp_entry);
        (void)linked_bytes(c, n, se, ns, refs);
        for (size_t j = 0; j < ns && total + stored > store_cap; j++) {
            if (refs[j] || deps__store_remove(state_dir, &se[j]) < 0)
                continue;
            stored -= se[j].bytes;
            evicted++;
        }
    }
out:
    for (size_t i = 0; i < n; i++)
        strv_free(&c[i].wheels);
    free(c);
    free(se);
    free(refs);
    return rc < 0 && evicted == 0 ? rc : evicted;
}
