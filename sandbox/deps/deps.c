/* deps.c: a run's requirements as one set: the declared ones (the
 * explicit list, then the script's PEP 723 block), those its imports need
 * (detected, minus the standard library, the script's own modules and what
 * an environment already provides), at most one per distribution, earlier
 * sources winning. The environments they are installed into: deps_env.c. */
#include "config.h"

#include "deps_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- the set */

void deps_set_free(struct deps_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        free(s->v[i].spec);
        free(s->v[i].module);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* True when an earlier source already names this distribution. */
static bool set_has_earlier(const struct deps_set *s, const char *name, enum deps_source src)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].source < src && !strcmp(s->v[i].name, name))
            return true;
    return false;
}

static bool set_has(const struct deps_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].name, name))
            return true;
    return false;
}

/* Steals name, spec and module. */
static int set_add(struct deps_set *s, char *name, char *spec, enum deps_source src, char *module)
{
    if (UTIL_GROW(s->v, s->n, s->cap, 8) < 0) {
        free(name);
        free(spec);
        free(module);
        return -ENOMEM;
    }
    s->v[s->n++] = (struct deps_req){name, spec, src, module};
    return 0;
}

static int add_checked(const struct exec_deps_config *cfg, struct deps_set *set, const char *spec, enum deps_source src,
                       const char *where, char *err, size_t errlen)
{
    char *name = NULL, *canon = NULL;
    char reason[600];
    int rc = deps_check_requirement(spec, cfg->requirement_urls, &name, &canon, reason, sizeof reason);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", where, reason);
        return rc;
    }
    if (set_has_earlier(set, name, src)) {
        free(name);
        free(canon);
        return 0;
    }
    if (set->n >= EXEC_MAX_REQUIREMENTS) {
        free(name);
        free(canon);
        snprintf(err, errlen, "%s: more than %d requirements", where, EXEC_MAX_REQUIREMENTS);
        return -EINVAL;
    }
    return set_add(set, name, canon, src, NULL);
}

int deps_declared(const struct exec_deps_config *cfg, const char *const *explicit_reqs, size_t n_explicit,
                  const char *code, size_t code_len, const struct deps_python *info, struct deps_set *set,
                  char *err, size_t errlen)
{
    int rc;
    for (size_t i = 0; i < n_explicit; i++) {
        rc = add_checked(cfg, set, explicit_reqs[i], DEPS_SRC_EXPLICIT, "the requirements", err, errlen);
        if (rc < 0)
            return rc;
    }
    struct deps_meta meta;
    rc = deps_read_meta(code, code_len, &meta, err, errlen);
    for (size_t i = 0; rc == 0 && i < meta.dependencies.n; i++)
        rc = add_checked(cfg, set, meta.dependencies.v[i], DEPS_SRC_SCRIPT, "the script's PEP 723 dependencies",
                         err, errlen);
    if (rc == 0 && meta.requires_python && info) {
        int ok = deps_version_satisfies(info->version, meta.requires_python);
        if (ok < 0) {
            snprintf(err, errlen, "the script's PEP 723 requires-python '%.100s' is not a valid version specifier",
                     meta.requires_python);
            rc = -EINVAL;
        } else if (ok == 0) {
            snprintf(err, errlen, "the script requires Python %.100s (PEP 723 requires-python), but %s is %s",
                     meta.requires_python, info->path, info->version);
            rc = -EINVAL;
        }
    }
    deps_meta_free(&meta);
    return rc;
}

/* ------------------------------------------------------------ detection */

/* Site-packages of an environment, for this interpreter's version. */
static char *site_packages(const char *env_dir, const struct deps_python *info)
{
    int major = 0, minor = 0;
    char *p;
    if (sscanf(info->version, "%d.%d", &major, &minor) != 2)
        return NULL;
    if (asprintf(&p, "%s/lib/python%d.%d/site-packages", env_dir, major, minor) < 0)
        return NULL;
    return p;
}

/* True when dir holds a module or package called name: NAME.py, NAME/,
 * NAME.so or NAME.<tag>.so. */
static bool dir_has_module(const char *dir, const char *name)
{
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return false;
    char f[300];
    struct stat st;
    snprintf(f, sizeof f, "%s.py", name);
    if (fstatat(dfd, f, &st, 0) == 0 && S_ISREG(st.st_mode))
        return true;
    if (fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode))
        return true;
    /* Extension modules: NAME.so or NAME.cpython-311-x86_64-linux-gnu.so. */
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return false;
    size_t nl = strlen(name);
    for (struct dirent *e; (e = readdir(d));) {
        size_t el = strlen(e->d_name);
        if (el > nl + 3 && !strncmp(e->d_name, name, nl) && e->d_name[nl] == '.' &&
            !strcmp(e->d_name + el - 3, ".so"))
            return true;
    }
    return false;
}

static bool env_has_module(const char *env_dir, const struct deps_python *info, const char *module)
{
    cleanup_free char *sp = site_packages(env_dir, info);
    return sp && dir_has_module(sp, module);
}

/* Adds to mods the optional packages the script's calls need
 * (deps_scan_idioms), for the libraries it imports or the set already
 * holds (a kernel's: a cell's df.plot() without its import pandas). */
static int implied(const char *code, size_t code_len, const struct deps_set *set, struct strv *mods)
{
    struct strv have = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < mods->n; i++)
        rc = strv_push(&have, mods->v[i], strlen(mods->v[i]));
    for (size_t i = 0; rc == 0 && i < set->n; i++)
        rc = strv_push(&have, set->v[i].name, strlen(set->v[i].name));
    if (rc == 0)
        rc = deps_scan_idioms(code, code_len, &have, mods);
    strv_free(&have);
    return rc;
}

int deps_detect(const struct exec_deps_config *cfg, const char *code, size_t code_len, const struct deps_python *info,
                const char *const *local_dirs, size_t n_local, const char *have_env, struct deps_set *set,
                char *err, size_t errlen)
{
    struct strv mods = {0};
    struct deps_map map = {0};
    bool map_loaded = false;
    int rc = deps_scan_imports(code, code_len, &mods);
    if (rc == -E2BIG) {
        snprintf(err, errlen, "the script imports more than %d modules", DEPS_MAX_IMPORTS);
        goto out;
    }
    if (rc < 0)
        goto out;
    rc = implied(code, code_len, set, &mods);
    if (rc == -E2BIG) {
        snprintf(err, errlen, "the script imports more than %d modules", DEPS_MAX_IMPORTS);
        goto out;
    }
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < mods.n; i++) {
        const char *mod = mods.v[i];
        if (deps_python_is_stdlib(info, mod))
            continue;
        bool local = false;
        for (size_t k = 0; !local && k < n_local; k++)
            local = local_dirs[k] && dir_has_module(local_dirs[k], mod);
        if (local || (have_env && env_has_module(have_env, info, mod)))
            continue;
        /* The map is read only when an import needs it: a script of the
         * standard library never does. */
        if (!map_loaded) {
            rc = deps_map_load(cfg->data_dir, &map, err, errlen);
            if (rc < 0) {
                size_t n = strlen(err);
                snprintf(err + n, errlen - n, " (configuration key data_dir)");
                goto out;
            }
            map_loaded = true;
        }
        const char *dist = deps_map_lookup(&map, mod);
        char *name = deps_normalize_name(dist, strlen(dist));
        if (!name) {
            rc = -ENOMEM;
            goto out;
        }
        if (set_has(set, name)) {
            free(name);
            continue;
        }
        if (set->n >= EXEC_MAX_REQUIREMENTS) {
            free(name);
            snprintf(err, errlen, "the script needs more than %d requirements", EXEC_MAX_REQUIREMENTS);
            rc = -E2BIG;
            goto out;
        }
        char *spec = strdup(name), *module = strdup(mod);
        if (!spec || !module) {
            free(name);
            free(spec);
            free(module);
            rc = -ENOMEM;
            goto out;
        }
        rc = set_add(set, name, spec, DEPS_SRC_IMPORT, module);
        if (rc < 0)
            goto out;
    }
out:
    deps_map_free(&map);
    strv_free(&mods);
    return rc;
}

void deps_drop_provided(struct deps_set *set, const struct deps_python *info, const char *env_dir)
{
    size_t o = 0;
    for (size_t i = 0; i < set->n; i++) {
        struct deps_req *r = &set->v[i];
        if (r->source == DEPS_SRC_IMPORT && env_has_module(env_dir, info, r->module)) {
            free(r->name);
            free(r->spec);
            free(r->module);
            continue;
        }
        set->v[o++] = *r;
    }
    set->n = o;
}

int deps_set_copy(const struct deps_set *in, bool declared_only, struct deps_set *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const struct deps_req *r = &in->v[i];
        if (declared_only && r->source == DEPS_SRC_IMPORT)
            continue;
        char *name = strdup(r->name), *spec = strdup(r->spec), *module = r->module ? strdup(r->module) : NULL;
        if (!name || !spec || (r->module && !module)) {
            free(name);
            free(spec);
            free(module);
            return -ENOMEM;
        }
        int rc = set_add(out, name, spec, r->source, module);
        if (rc < 0)
            return rc;
    }
    return 0;
}

char *deps_set_names(const struct deps_set *set)
{
    struct dbuf b;
    dbuf_init(&b, 64 * 1024);
    for (size_t i = 0; i < set->n; i++)
        if ((i && dbuf_append(&b, ", ", 2) < 0) || dbuf_append(&b, set->v[i].spec, strlen(set->v[i].spec)) < 0)
            break;
    char *s = dbuf_steal(&b, NULL);
    return s ? s : strdup("");
}
