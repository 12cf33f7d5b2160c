/* art_outside.c: the files a run wrote in its working directory but
 * outside output/, which the caller does not get back (a run's own
 * directory is removed after it; a session's workspace keeps them, but
 * they are no artifacts). Counted, and the first few named, so that the
 * caller can be told where its files went. A file is the run's when its
 * modification time is not before the run started: not its ctime, which
 * giving the workspace to the run's uid and back changes for every file
 * (a script that sets an old mtime hides a file from a hint, no more). */
#include "config.h"

#include "art.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct outside_walk {
    struct art_outside *o;
    const char *const *skip;
    struct timespec since;
    struct util_walk uw;
};

static bool skipped(const char *const *skip, const char *name)
{
    for (size_t i = 0; skip && skip[i]; i++)
        if (!strcmp(skip[i], name))
            return true;
    return false;
}

static int outside_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct outside_walk *w = ctx;
    (void)dirfd;
    if (depth == 0)
        return UTIL_WALK_NEXT;
    if (depth == 1 && skipped(w->skip, name))
        return UTIL_WALK_SKIP;
    if (S_ISDIR(st->st_mode))
        /* Python's own byte code of a module the script imported. */
        return depth > ART_MAX_DEPTH || !strcmp(name, "__pycache__") ? UTIL_WALK_SKIP : UTIL_WALK_NEXT;
    if (!S_ISREG(st->st_mode) || st->st_mtim.tv_sec < w->since.tv_sec ||
        (st->st_mtim.tv_sec == w->since.tv_sec && st->st_mtim.tv_nsec < w->since.tv_nsec))
        return UTIL_WALK_NEXT;
    struct art_outside *o = w->o;
    o->files++;
    if (strlen(w->uw.path) > ART_MAX_PATH)
        return UTIL_WALK_NEXT;
    /* The first names in path order, whatever order the walk finds them
     * in: a full list gives its last for a name before it. */
    size_t at = o->n_names;
    if (at == ART_OUTSIDE_NAMES) {
        at = 0;
        for (size_t i = 1; i < o->n_names; i++)
            if (strcmp(o->names[i], o->names[at]) > 0)
                at = i;
        if (strcmp(w->uw.path, o->names[at]) >= 0)
            return UTIL_WALK_NEXT;
    }
    char *p = strdup(w->uw.path);
    if (!p)
        return -ENOMEM;
    if (at < o->n_names)
        free(o->names[at]);
    else
        o->n_names++;
    o->names[at] = p;
    return UTIL_WALK_NEXT;
}

/* A directory that cannot be listed is passed over: this is a hint. */
static int outside_fail(int dirfd, const char *name, const struct stat *st, int depth, int err, void *ctx)
{
    (void)dirfd, (void)name, (void)st, (void)depth, (void)err, (void)ctx;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void art_outside_free(struct art_outside *o)
{
    for (size_t i = 0; i < o->n_names; i++)
        free(o->names[i]);
    memset(o, 0, sizeof *o);
}

int art_outside_collect(int dirfd, const char *const *skip, const struct timespec *since, struct art_outside *o)
{
    memset(o, 0, sizeof *o);
    struct outside_walk w = {.o = o, .skip = skip, .since = *since};
    w.uw = (struct util_walk){.pre = outside_pre, .fail = outside_fail, .ctx = &w, .flags = UTIL_WALK_PATHS};
    int rc = util_walk_at(dirfd, "", &w.uw);
    if (rc < 0 && rc != -ESTALE) {
        art_outside_free(o);
        return rc;
    }
    if (o->n_names)
        qsort(o->names, o->n_names, sizeof *o->names, cmp_name);
    return 0;
}
