/* art_seen.c: which files of output/ a call made. A session's output/
 * holds what every call before left there; a call's artifacts are only the
 * files it created or changed. What output/ held before the call is taken
 * (art_seen_take: each regular file's path, inode, size and modification
 * time; not its ctime, which giving the workspace to a run's uid and back
 * changes for every file) and the list of after is cut to the files that
 * are new or differ (art_seen_keep_changed). */
#include "config.h"

#include "art.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void art_seen_free(struct art_seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].path);
    free(s->v);
    memset(s, 0, sizeof *s);
}

struct seen_walk {
    struct art_seen *s;
    struct util_walk uw;
    uint64_t max;
};

static int seen_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct seen_walk *w = ctx;
    (void)dirfd, (void)name;
    if (depth == 0)
        return UTIL_WALK_NEXT;
    if (S_ISDIR(st->st_mode))
        return depth > ART_MAX_DEPTH ? UTIL_WALK_SKIP : UTIL_WALK_NEXT;
    if (!S_ISREG(st->st_mode) || strlen(w->uw.path) > ART_MAX_PATH)
        return UTIL_WALK_NEXT;
    struct art_seen *s = w->s;
    if (w->max && s->n >= w->max)
        return UTIL_WALK_STOP; /* past output_files: those after count as new */
    if (UTIL_GROW(s->v, s->n, s->cap, 32) < 0)
        return -ENOMEM;
    char *p = strdup(w->uw.path);
    if (!p)
        return -ENOMEM;
    s->v[s->n++] = (struct art_seen_file){p, st->st_dev, st->st_ino, st->st_size, st->st_mtim};
    return UTIL_WALK_NEXT;
}

/* A directory that cannot be listed holds nothing seen. */
static int seen_fail(int dirfd, const char *name, const struct stat *st, int depth, int err, void *ctx)
{
    (void)dirfd, (void)name, (void)st, (void)depth, (void)err, (void)ctx;
    return 0;
}

static int cmp_seen(const void *a, const void *b)
{
    return strcmp(((const struct art_seen_file *)a)->path, ((const struct art_seen_file *)b)->path);
}

int art_seen_take(int outfd, uint64_t max_files, struct art_seen *s)
{
    memset(s, 0, sizeof *s);
    struct seen_walk w = {.s = s, .max = max_files};
    w.uw = (struct util_walk){.pre = seen_pre, .fail = seen_fail, .ctx = &w, .flags = UTIL_WALK_PATHS};
    int rc = util_walk_at(outfd, "", &w.uw);
    if (rc < 0 && rc != -ESTALE) {
        art_seen_free(s);
        return rc;
    }
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, cmp_seen);
    return 0;
}

static const struct art_seen_file *seen_find(const struct art_seen *s, const char *path)
{
    struct art_seen_file key = {.path = (char *)path};
    return s->n ? bsearch(&key, s->v, s->n, sizeof *s->v, cmp_seen) : NULL;
}

int art_seen_keep_changed(int outfd, const struct art_seen *before, struct art_list *l)
{
    struct art_seen after;
    int rc = art_seen_take(outfd, 0, &after);
    if (rc < 0)
        return rc;
    size_t kept = 0;
    l->bytes = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct result_artifact *a = &l->v[i];
        const struct art_seen_file *was = seen_find(before, a->path), *now = seen_find(&after, a->path);
        bool same = was && now && was->dev == now->dev && was->ino == now->ino && was->size == now->size &&
                    was->mtime.tv_sec == now->mtime.tv_sec && was->mtime.tv_nsec == now->mtime.tv_nsec;
        if (same) {
            free(a->path);
            free(a->mime);
            free(a->summary);
            continue;
        }
        a->change = was ? RESULT_ART_CHANGED : RESULT_ART_NEW;
        l->bytes += a->size;
        l->v[kept++] = *a;
    }
    l->n = kept;
    art_seen_free(&after);
    return 0;
}
