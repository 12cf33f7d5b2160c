/* exec_map.c: the import map as the front doors ask it: whether the
 * configured one loads, which distribution a module comes from, and the
 * distributions whose name begins with a prefix (completions, hints). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "deps.h"
#include "executor.h"

int exec_check_data(const char *data_dir, char *err, size_t errlen)
{
    struct deps_map m;
    int rc = deps_map_load(data_dir, &m, err, errlen);
    deps_map_free(&m);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int exec_packages_each(const char *data_dir, const char *prefix, int (*fn)(const char *dist, void *ctx), void *ctx)
{
    struct deps_map m;
    char err[256];
    size_t n = 0, plen = strlen(prefix);
    int rc = deps_map_load(data_dir, &m, err, sizeof err);
    const char **hit = rc < 0 ? NULL : calloc(m.n + 1, sizeof *hit);
    if (rc == 0 && !hit)
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < m.n; i++)
        if (!strncasecmp(m.dists[i], prefix, plen) || !strncasecmp(m.imports[i], prefix, plen))
            hit[n++] = m.dists[i];
    if (n > 1)
        qsort(hit, n, sizeof *hit, cmp_str);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (i == 0 || strcmp(hit[i], hit[i - 1]))
            rc = fn(hit[i], ctx);
    free(hit);
    deps_map_free(&m);
    return rc;
}

int exec_requirement_for(const char *data_dir, const char *module, char *dist, size_t len)
{
    struct deps_map m;
    char err[256];
    if (len)
        dist[0] = '\0';
    int rc = deps_map_load(data_dir, &m, err, sizeof err);
    if (rc < 0)
        goto out;
    /* deps_map_lookup gives the name itself back for a name it lacks. */
    const char *d = deps_map_lookup(&m, module);
    if (d == module) {
        rc = 0;
        goto out;
    }
    if (strlen(d) >= len) {
        rc = -E2BIG;
        goto out;
    }
    memcpy(dist, d, strlen(d) + 1);
    rc = 1;
out:
    deps_map_free(&m);
    return rc;
}
