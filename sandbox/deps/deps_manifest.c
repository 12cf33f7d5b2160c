/* deps_manifest.c: an environment's manifest, runmyscript-env.txt in its
 * top directory: written when its build finishes (its size, the package
 * store entries it links and where the store is, what it was asked for,
 * what it holds), and read by a run that uses it (what it holds, whether
 * every entry it links is still whole), by eviction (its size, the entries
 * it links) and for a run's jail (the entries to bind: deps_env_links,
 * deps_env_binds). */
#include "config.h"

#include "deps_internal.h"
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --------------------------------------------------- written, read */

int deps__manifest_write(int dirfd, const struct deps_set *set, const struct strv *installed, uint64_t bytes,
                         const struct strv *wheels, size_t copied, const char *state_dir)
{
    struct dbuf b;
    dbuf_init(&b, DEPS_MANIFEST_MAX);
    int rc = dbuf_printf(&b, "runmyscript-env 1\nbytes %llu\n", (unsigned long long)bytes);
    for (size_t i = 0; rc == 0 && i < wheels->n; i++)
        rc = dbuf_printf(&b, "wheel %s\n", wheels->v[i]);
    if (rc == 0 && wheels->n)
        rc = dbuf_printf(&b, "copied %zu\nstore %s/store\n", copied, state_dir);
    for (size_t i = 0; rc == 0 && i < set->n; i++)
        rc = dbuf_printf(&b, "want %s\n", set->v[i].spec);
    for (size_t i = 0; rc == 0 && i < installed->n; i++)
        rc = dbuf_printf(&b, "have %s\n", installed->v[i]);
    if (rc == 0)
        rc = util_write_file_atomic(dirfd, DEPS_MANIFEST, b.data, b.len, 0444);
    dbuf_free(&b);
    return rc;
}

int deps__manifest_read(int dirfd, struct strv *installed, uint64_t *bytes, struct strv *wheels)
{
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(dirfd, DEPS_MANIFEST, DEPS_MANIFEST_MAX, &text, &len);
    if (rc < 0)
        return rc;
    if (strncmp(text, "runmyscript-env 1\n", 18))
        return -EINVAL;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (bytes && !strncmp(line, "bytes ", 6))
            *bytes = strtoull(line + 6, NULL, 10);
        else if (installed && !strncmp(line, "have ", 5) && (rc = strv_push(installed, line + 5, strlen(line + 5))) < 0)
            return rc;
        else if (wheels && !strncmp(line, "wheel ", 6) && (rc = strv_push(wheels, line + 6, strlen(line + 6))) < 0)
            return rc;
    }
    return 0;
}

/* ------------------------------------------- what an environment links */

/* "pyX.Y/HASH", as the manifest's wheel lines name entries, and nothing
 * else: a line that names a path elsewhere is no entry. */
static bool is_entry_ref(const char *ref)
{
    const char *p = ref;
    if (strncmp(p, "py", 2))
        return false;
    p += 2;
    size_t d = strspn(p, "0123456789");
    if (!d || p[d] != '.')
        return false;
    p += d + 1;
    d = strspn(p, "0123456789");
    if (!d || p[d] != '/')
        return false;
    p += d + 1;
    return strlen(p) == 64 && strspn(p, "0123456789abcdef") == 64;
}

int deps__manifest_links(int env, char **store, struct strv *wheels)
{
    cleanup_free char *text = NULL;
    size_t len;
    *store = NULL;
    int rc = util_read_file_at(env, DEPS_MANIFEST, DEPS_MANIFEST_MAX, &text, &len);
    if (rc < 0)
        return rc;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); rc == 0 && line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "wheel ", 6) && is_entry_ref(line + 6))
            rc = strv_push(wheels, line + 6, strlen(line + 6));
        else if (!strncmp(line, "store /", 7) && !*store && !(*store = strdup(line + 6)))
            rc = -ENOMEM;
    }
    return rc;
}

int deps__env_whole(int env)
{
    cleanup_free char *store = NULL;
    struct strv w = {0};
    int rc = deps__manifest_links(env, &store, &w);
    for (size_t i = 0; rc == 0 && store && i < w.n; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s/" DEPS_STORE_MARK, store, w.v[i]);
        if (access(p, F_OK) < 0)
            rc = errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
    }
    strv_free(&w);
    return rc;
}

int deps_env_links(const char *env_dir, struct strv *out)
{
    cleanup_fd int env = open(env_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (env < 0)
        return -errno;
    cleanup_free char *store = NULL;
    struct strv w = {0};
    int rc = deps__manifest_links(env, &store, &w);
    if (rc == -ENOENT)
        rc = 0; /* the base environment: no manifest, nothing linked */
    for (size_t i = 0; rc == 0 && store && i < w.n; i++) {
        cleanup_free char *p = NULL;
        if (asprintf(&p, "%s/%s", store, w.v[i]) < 0)
            rc = -ENOMEM;
        else
            rc = strv_push(out, p, strlen(p));
    }
    strv_free(&w);
    return rc;
}

int deps_env_binds(const char *env_dir, struct deps_env_binds *b)
{
    struct strv links = {0};
    memset(b, 0, sizeof *b);
    int rc = deps_env_links(env_dir, &links);
    if (rc == 0 && links.n && !(b->v = calloc(links.n, sizeof *b->v)))
        rc = -ENOMEM;
    if (rc < 0) {
        strv_free(&links);
        return rc;
    }
    for (size_t i = 0; i < links.n; i++)
        b->v[i] = (struct jail_bind){links.v[i], links.v[i], JAIL_BIND_ENV};
    b->paths = links.v; /* the strings, owned from here */
    b->n = links.n;
    return 0;
}

void deps_env_binds_free(struct deps_env_binds *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->paths[i]);
    free(b->paths);
    free(b->v);
    memset(b, 0, sizeof *b);
}
