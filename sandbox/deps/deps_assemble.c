/* deps_assemble.c: an environment assembled from the package store: the
 * set resolved to an exact list of wheels (the resolution of its key
 * kept in STATE/store/res/KEY, so that it is made once; else pip's
 * download, in the jail with the network, which saves every wheel of the
 * resolution), the wheels the store lacks unpacked into it, and each one
 * linked into the environment being built (symlinks to its directories,
 * hard links to its files: deps_store_link.c). */
#include "config.h"

#include "deps_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <unistd.h>

#define RES_MAX (64u << 10)              /* bytes of one kept resolution */
#define RES_HEAD "runmyscript-resolution 1\n"
#define STORE_DL ".store-download"       /* under the environment being built */
#define STORE_BUILT ".store-built"        /* the same, for wheels built from source distributions */
#define STORE_UNPACK_THREADS 8            /* at most, however many cores: the unpack writes more than it computes */

void deps__held_release(struct deps__held *h)
{
    for (size_t i = 0; i < h->n; i++)
        close(h->fd[i]);
    h->n = 0;
}

/* The kept resolution of key: the wheels' hashes, in order. -ENOENT when
 * there is none (or it is not one of ours). */
static int res_read(int res, const char *key, struct strv *hashes)
{
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(res, key, RES_MAX, &text, &len);
    if (rc < 0)
        return rc == -ENOENT ? rc : -ENOENT;
    if (strncmp(text, RES_HEAD, strlen(RES_HEAD)))
        return -ENOENT;
    char *save = NULL;
    for (char *line = strtok_r(text + strlen(RES_HEAD), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "wheel ", 6) || strlen(line + 6) < 64)
            return -ENOENT;
        if ((rc = strv_push(hashes, line + 6, 64)) < 0)
            return rc;
    }
    return hashes->n ? 0 : -ENOENT;
}

static int res_write(int res, const char *key, const struct strv *hashes, const struct strv *files)
{
    struct dbuf b;
    dbuf_init(&b, RES_MAX);
    int rc = dbuf_printf(&b, RES_HEAD);
    for (size_t i = 0; rc == 0 && i < hashes->n; i++)
        rc = dbuf_printf(&b, "wheel %s %s\n", hashes->v[i], i < files->n ? strrchr(files->v[i], '/') + 1 : "-");
    if (rc == 0)
        rc = util_write_file_atomic(res, key, b.data, b.len, 0644);
    dbuf_free(&b);
    return rc;
}

struct wheel_file {
    const char *file; /* borrowed from the list of files */
    char hash[65];
    int fd;           /* open, -1 once closed */
    off_t size;
};

static int cmp_wheel_file(const void *a, const void *b)
{
    return strcmp(((const struct wheel_file *)a)->hash, ((const struct wheel_file *)b)->hash);
}

static bool is_wheel(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".whl");
}

/* The requirement of set a refused wheel (its file name's distribution)
 * came in with, or that name. */
static char *refused_requirement(const struct deps_set *set, const char *file)
{
    cleanup_free char *name = deps_normalize_name(file, strcspn(file, "-"));
    for (size_t i = 0; name && i < set->n; i++)
        if (!strcmp(set->v[i].name, name))
            return strdup(set->v[i].spec);
    return steal_pointer(&name);
}

/* "sdist-SHA" in the store: the hash of the wheel built from the source
 * distribution SHA. built is "SHA REL", REL the wheel's path under tmp;
 * w the wheels with their hashes. */
static int map_sdist(const struct deps__store *s, const char *built, const struct wheel_file *w, size_t n)
{
    const char *rel = built + 65;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(w[i].file, rel))
            continue;
        cleanup_fd int store = -1;
        int rc = deps__store_open(s->state_dir, s->pyver, &store);
        char name[80], text[80];
        snprintf(name, sizeof name, "sdist-%.64s", built);
        snprintf(text, sizeof text, "%s\n", w[i].hash);
        return rc < 0 ? rc : util_write_file_atomic(store, name, text, strlen(text), 0444);
    }
    return 0;
}

/* A source distribution pip's download saved (dl/name): its wheel is the
 * one built from it before, when the store has it (joins known), or pip
 * builds it now (its path under tmp joins files, "SHA REL" joins built). */
static int sdist_wheel(const struct exec_deps_config *cfg, const char *state_dir, const struct deps__store *s,
                       const char *pip_runner, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                       const char *name, struct strv *files, struct strv *known, struct strv *built,
                       char **failed, char *err, size_t errlen)
{
    char path[PATH_MAX], sha[65];
    snprintf(path, sizeof path, "%s/" STORE_DL "/%s", tmp, name);
    int rc = deps__store_hash(path, sha);
    cleanup_fd int store = -1;
    if (rc == 0)
        rc = deps__store_open(s->state_dir, s->pyver, &store);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", name, strerror(-rc));
        return rc;
    }
    char mapname[80];
    snprintf(mapname, sizeof mapname, "sdist-%s", sha);
    cleanup_free char *map = NULL;
    size_t len;
    if (util_read_file_at(store, mapname, 128, &map, &len) == 0 && len >= 64) {
        map[64] = '\0';
        if (deps__store_whole(store, map)) {
            log_msg(LOG_LVL_INFO, "store: %s was built before: its wheel is in the store", name);
            return strv_push(known, map, 64);
        }
    }
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/" STORE_BUILT "/%s", tmp, sha) < 0)
        return -ENOMEM;
    log_msg(LOG_LVL_INFO, "store: %s is a source distribution: pip builds its wheel, once", name);
    rc = deps__build_wheel(cfg, state_dir, pip_runner, path, install_ms, io, tmp, dir, failed, err, errlen);
    if (rc != DEPS_ENV_READY)
        return rc;
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_dir DIR *d = dfd < 0 ? NULL : util_opendir_at(dfd);
    for (struct dirent *de; d && (de = readdir(d));) {
        if (!is_wheel(de->d_name))
            continue;
        char rel[PATH_MAX], pair[PATH_MAX + 80];
        snprintf(rel, sizeof rel, STORE_BUILT "/%s/%s", sha, de->d_name);
        snprintf(pair, sizeof pair, "%s %s", sha, rel);
        if ((rc = strv_push(files, rel, strlen(rel))) < 0 || (rc = strv_push(built, pair, strlen(pair))) < 0)
            return rc;
        return DEPS_ENV_READY;
    }
    snprintf(err, errlen, "building %s made no wheel", name);
    return -EIO;
}

/* The unpacks of one build, shared by its threads: each takes the next
 * claim, the largest wheels first so that the last to finish is a small
 * one. */
struct unpack_jobs {
    const struct deps__store *s;
    const struct wheel_file *w;
    struct deps__pending *pend;
    const size_t *order, *which; /* order: into pend, largest first; which: pend's wheel in w */
    size_t n, next;
    int *rc;
    char (*why)[768];
};

static void *unpack_jobs_run(void *arg)
{
    struct unpack_jobs *j = arg;
    for (size_t k; (k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->n;) {
        size_t i = j->order[k];
        const struct wheel_file *wf = &j->w[j->which[i]];
        j->rc[i] = deps__store_unpack(j->s, wf->fd, wf->file, &j->pend[i], j->why[i], sizeof j->why[i]);
    }
    return NULL;
}

/* Unpacks the np claims of pend in threads, a thread per core (the
 * calling one among them): nothing else runs meanwhile, and nothing is
 * forked until they are all joined. The first failure in the order of
 * the claims into err, its index into *bad. */
static int unpack_claims(const struct deps__store *s, const struct wheel_file *w, const size_t *which,
                         struct deps__pending *pend, size_t np, size_t *bad, char *err, size_t errlen)
{
    if (np == 0)
        return 0;
    cleanup_free size_t *order = calloc(np, sizeof *order);
    cleanup_free int *rcs = calloc(np, sizeof *rcs);
    cleanup_free char (*why)[768] = calloc(np, sizeof *why);
    if (!order || !rcs || !why)
        return -ENOMEM;
    for (size_t i = 0; i < np; i++) { /* an insertion sort: a few dozen at most */
        size_t k = i;
        for (; k > 0 && w[which[order[k - 1]]].size < w[which[i]].size; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    struct unpack_jobs j = {s, w, pend, order, which, np, 0, rcs, why};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t want = cores < 1 ? 1 : (size_t)cores;
    want = want > np ? np : want > STORE_UNPACK_THREADS ? STORE_UNPACK_THREADS : want;
    pthread_t th[STORE_UNPACK_THREADS];
    size_t started = 0;
    while (started + 1 < want && pthread_create(&th[started], NULL, unpack_jobs_run, &j) == 0)
        started++; /* a thread that cannot start leaves its share to the others */
    unpack_jobs_run(&j);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (size_t i = 0; i < np; i++)
        if (rcs[i] < 0) {
            *bad = i;
            snprintf(err, errlen, "%s", why[i]);
            return rcs[i];
        }
    return 0;
}

/* Every wheel of w (in the order of their hashes) into the store: each
 * one it lacks claimed, then all of them unpacked at once; its hash
 * pushed onto hashes, *np the claims pending in pend, for
 * deps__store_finish. 0, DEPS_ENV_INSTALL_FAILED for a wheel refused
 * (*failed its requirement), or -errno; on failure no claim is left. */
static int put_wheels(const struct deps__store *s, const struct deps_set *set, const struct wheel_file *w, size_t n,
                      struct deps__pending *pend, size_t *np, struct strv *hashes, char **failed, char *err,
                      size_t errlen)
{
    cleanup_free size_t *which = calloc(n ? n : 1, sizeof *which);
    if (!which)
        return -ENOMEM;
    char why[768] = "";
    size_t bad = 0;
    int rc = 0;
    *np = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pend[*np].store = pend[*np].lock = -1;
        rc = deps__store_claim(s, w[i].file, w[i].hash, &pend[*np], why, sizeof why);
        if (rc == 1)
            which[(*np)++] = i;
        if (rc >= 0)
            rc = strv_push(hashes, w[i].hash, 64);
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", why);
    } else if ((rc = unpack_claims(s, w, which, pend, *np, &bad, why, sizeof why)) < 0) {
        const char *file = w[which[bad]].file;
        snprintf(err, errlen, "%s", why);
        if (rc == -EBADMSG || rc == -EINVAL || rc == -E2BIG || rc == -EFBIG) {
            cleanup_free char *names = deps_set_names(set);
            *failed = refused_requirement(set, file);
            snprintf(err, errlen, "installing %s failed (%s): %s", names ? names : "the requirements",
                     *failed ? *failed : file, why);
            rc = DEPS_ENV_INSTALL_FAILED;
        }
    }
    if (rc != 0) {
        for (size_t i = 0; i < *np; i++)
            deps__pending_drop(&pend[i]);
        *np = 0;
    }
    return rc;
}

/* One assembly: what deps__store_build was asked for, the store it
 * assembles from, and what it finds on the way. */
struct assembly {
    const struct exec_deps_config *cfg;
    const char *state_dir;
    const char *pip_runner;
    const struct deps_set *set;
    const char *key;
    int64_t install_ms;
    const struct deps_install_io *io;
    const char *tmp;             /* the environment being built */
    char **failed;
    char *err;
    size_t errlen;
    char pyver[16];              /* "3.11" */
    char site[64];               /* lib/pythonX.Y/site-packages */
    struct deps__store s;
    int res;                     /* STATE/store/res, where resolutions are kept */
    struct strv hashes;     /* the wheels' hashes, in order */
    struct strv files;      /* a new resolution's wheels, under tmp */
    struct strv installed;  /* "Name-Version" of each wheel linked */
    size_t unpacked;             /* wheels a new resolution put into the store */
};

/* The wheels of a new resolution, open, with their hashes. */
struct wheels {
    struct wheel_file *v;
    size_t n;
};

static void wheels_close(struct wheels *w)
{
    for (size_t i = 0; w->v && i < w->n; i++)
        if (w->v[i].fd >= 0)
            close(w->v[i].fd);
    free(w->v);
}

/* pip's download of every wheel the set needs into dl. */
static int download(struct assembly *a, const char *dl)
{
    int rc = deps__download(a->cfg, a->state_dir, a->pip_runner, a->set, a->install_ms, a->io, a->tmp, dl, a->failed,
                            a->err, a->errlen);
    if (rc != DEPS_ENV_READY)
        return rc;
    deps__fault("download");
    return DEPS_ENV_READY;
}

/* What the download saved into dl, into a->files: each wheel, and the
 * wheel of each source distribution (sdist_wheel: known when the store
 * has it from before, built when pip builds it now). */
static int list_download(struct assembly *a, const char *dl, struct strv *known, struct strv *built)
{
    cleanup_fd int dfd = open(dl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 && errno == ENOENT) {
        snprintf(a->err, a->errlen, "the installer's download saved nothing");
        return -EIO;
    }
    cleanup_dir DIR *d = dfd < 0 ? NULL : util_opendir_at(dfd);
    if (!d) {
        int rc = -errno;
        snprintf(a->err, a->errlen, "%s: %s", dl, strerror(errno));
        return rc;
    }
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        int rc;
        if (!is_wheel(de->d_name)) {
            rc = sdist_wheel(a->cfg, a->state_dir, &a->s, a->pip_runner, a->install_ms, a->io, a->tmp, de->d_name,
                             &a->files, known, built, a->failed, a->err, a->errlen);
            if (rc != DEPS_ENV_READY)
                return rc;
            continue;
        }
        char rel[NAME_MAX + 32];
        snprintf(rel, sizeof rel, STORE_DL "/%s", de->d_name);
        if ((rc = strv_push(&a->files, rel, strlen(rel))) < 0)
            return rc;
    }
    return DEPS_ENV_READY;
}

/* Every wheel of a->files opened and hashed into w, in the order of
 * their hashes: two builds never hold one entry's lock while waiting for
 * another's the other holds. */
static int open_wheels(struct assembly *a, struct wheels *w)
{
    const struct strv *files = &a->files;
    w->v = calloc(files->n ? files->n : 1, sizeof *w->v);
    if (!w->v)
        return -ENOMEM;
    for (w->n = 0; w->n < files->n; w->n++)
        w->v[w->n].fd = -1;
    for (size_t i = 0; i < w->n; i++) {
        struct wheel_file *f = &w->v[i];
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", a->tmp, files->v[i]);
        f->file = files->v[i];
        struct stat st;
        f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        int rc = f->fd < 0 ? -errno : fstat(f->fd, &st) < 0 ? -errno : deps__store_hash_fd(f->fd, f->hash);
        f->size = rc == 0 ? st.st_size : 0;
        if (rc < 0) {
            snprintf(a->err, a->errlen, "reading %s: %s", path, strerror(-rc));
            return rc;
        }
    }
    qsort(w->v, w->n, sizeof *w->v, cmp_wheel_file);
    return DEPS_ENV_READY;
}

/* Every wheel of w into the store (put_wheels), their hashes onto
 * a->hashes; the entries it lacked compiled and published at once. */
static int store_wheels(struct assembly *a, const struct wheels *w)
{
    cleanup_free struct deps__pending *pend = calloc(w->n ? w->n : 1, sizeof *pend);
    if (!pend)
        return -ENOMEM;
    size_t np = 0;
    int64_t t0 = util_now_ms();
    int rc = put_wheels(&a->s, a->set, w->v, w->n, pend, &np, &a->hashes, a->failed, a->err, a->errlen);
    if (rc != 0)
        return rc;
    a->unpacked = np;
    log_msg(LOG_LVL_DEBUG, "timing: store: %zu of %zu wheels unpacked in %lld ms", np, w->n,
            (long long)(util_now_ms() - t0));
    char why[768];
    if ((rc = deps__store_finish(&a->s, pend, np, why, sizeof why)) < 0) {
        snprintf(a->err, a->errlen, "the package store: %s", why);
        return rc;
    }
    return DEPS_ENV_READY;
}

/* What was built from a source distribution is known by its hash from
 * now on; the wheels of those built before join a->hashes; a->files in
 * the order of the hashes, for the kept resolution (w borrows from
 * a->files: it is not used after this but to close its files). */
static int note_sources(struct assembly *a, const struct wheels *w, const struct strv *known,
                        const struct strv *built)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < built->n; i++)
        rc = map_sdist(&a->s, built->v[i], w->v, w->n);
    for (size_t i = 0; rc == 0 && i < known->n; i++)
        rc = strv_push(&a->hashes, known->v[i], 64);
    struct strv sorted = {0};
    for (size_t i = 0; rc == 0 && i < w->n; i++)
        rc = strv_push(&sorted, w->v[i].file, strlen(w->v[i].file));
    strv_free(&a->files);
    a->files = sorted;
    return rc;
}

/* The download and the wheels built, in the store now, removed from tmp. */
static void remove_download(const struct assembly *a, const char *dl)
{
    discard(util_rm_rf_at(AT_FDCWD, dl));
    char bd[PATH_MAX];
    snprintf(bd, sizeof bd, "%s/" STORE_BUILT, a->tmp);
    discard(util_rm_rf_at(AT_FDCWD, bd));
}

/* pip's download into tmp/STORE_DL, then every wheel of it into the
 * store. The names in a->files, their hashes in a->hashes, in one order. */
static int resolve(struct assembly *a)
{
    cleanup_free char *dl = NULL;
    if (asprintf(&dl, "%s/" STORE_DL, a->tmp) < 0)
        return -ENOMEM;
    struct strv known = {0}, built = {0};
    struct wheels w = {0};
    int rc = download(a, dl);
    if (rc == DEPS_ENV_READY)
        rc = list_download(a, dl, &known, &built);
    if (rc == DEPS_ENV_READY)
        rc = open_wheels(a, &w);
    if (rc == DEPS_ENV_READY)
        rc = store_wheels(a, &w);
    if (rc == DEPS_ENV_READY)
        rc = note_sources(a, &w, &known, &built);
    if (rc == DEPS_ENV_READY)
        remove_download(a, dl);
    wheels_close(&w);
    strv_free(&known);
    strv_free(&built);
    return rc;
}

/* The store of the interpreter's X.Y, and STATE/store/res open. */
static int assembly_open(struct assembly *a, const struct deps_python *info)
{
    int major = 0, minor = 0;
    if (sscanf(info->version, "%d.%d", &major, &minor) != 2)
        return -EINVAL;
    snprintf(a->pyver, sizeof a->pyver, "%d.%d", major, minor);
    snprintf(a->site, sizeof a->site, "lib/python%s/site-packages", a->pyver);
    a->s = (struct deps__store){a->state_dir, a->pyver, info->path, a->io, a->cfg->store_bytes, a->install_ms};
    cleanup_free char *resdir = NULL;
    if (asprintf(&resdir, "%s/store/res", a->state_dir) < 0)
        return -ENOMEM;
    int rc = util_mkdir_p(resdir, 0755);
    if (rc == 0 && (a->res = open(resdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = -errno;
    if (rc < 0)
        snprintf(a->err, a->errlen, "%s: %s", resdir, strerror(-rc));
    return rc;
}

static void assembly_free(struct assembly *a)
{
    if (a->res >= 0)
        close(a->res);
    strv_free(&a->hashes);
    strv_free(&a->files);
    strv_free(&a->installed);
}

/* 1 when the key was resolved before and the store still has every wheel
 * of it (their hashes in a->hashes), 0 when not, or -errno. */
static int kept_resolution(struct assembly *a)
{
    bool kept = res_read(a->res, a->key, &a->hashes) == 0;
    cleanup_free char *sdir = NULL;
    int rc;
    if (kept && (rc = deps__store_dir(a->state_dir, a->pyver, &sdir)) < 0)
        return rc;
    for (size_t i = 0; kept && i < a->hashes.n; i++) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/" DEPS_STORE_MARK, sdir, a->hashes.v[i]);
        kept = stat(p, &st) == 0;
    }
    return kept;
}

/* A new resolution (resolve), kept for the next build of the key. */
static int resolve_and_keep(struct assembly *a)
{
    strv_free(&a->hashes);
    strv_free(&a->files);
    int rc = resolve(a);
    if (rc != DEPS_ENV_READY)
        return rc;
    if ((rc = res_write(a->res, a->key, &a->hashes, &a->files)) < 0)
        snprintf(a->err, a->errlen, "keeping the resolution: %s", strerror(-rc));
    return rc;
}

/* The wheels of the set, their hashes into a->hashes: a key resolved
 * before is not resolved again, while the store still has every wheel of
 * it. */
static int resolution(struct assembly *a)
{
    int kept = kept_resolution(a);
    if (kept < 0)
        return kept;
    if (!kept)
        return resolve_and_keep(a);
    log_msg(LOG_LVL_INFO, "store: the resolution of %s is known: no installer", a->key);
    return DEPS_ENV_READY;
}

/* Every entry of a->hashes held (deps__store_hold) into held. */
static int hold_entries(struct assembly *a, struct deps__held *held)
{
    if (a->hashes.n > ARRAY_SIZE(held->fd)) {
        snprintf(a->err, a->errlen, "more than %zu wheels in one environment", ARRAY_SIZE(held->fd));
        return -E2BIG;
    }
    for (size_t i = 0; i < a->hashes.n; i++) {
        int rc = deps__store_hold(&a->s, a->hashes.v[i], &held->fd[held->n], a->err, a->errlen);
        if (rc < 0)
            return rc;
        held->n++;
    }
    return 0;
}

/* Every entry held before any is linked: one evicted after it was known
 * to be there means a resolution again (once), with nothing linked yet
 * that would have to be undone. */
static int hold_all(struct assembly *a, struct deps__held *held)
{
    int rc = hold_entries(a, held);
    if (rc != -ENOENT)
        return rc;
    log_msg(LOG_LVL_INFO, "store: an entry of %s went before it was linked: once more", a->key);
    a->unpacked = 0;
    deps__held_release(held);
    a->err[0] = '\0';
    rc = resolve_and_keep(a);
    return rc == DEPS_ENV_READY ? hold_entries(a, held) : rc;
}

/* Every entry held linked into the environment open at env, its
 * "pyX.Y/HASH" pushed onto wheels. */
static int link_entries(struct assembly *a, const struct deps__held *held, int env, size_t *copied,
                        struct strv *wheels)
{
    for (size_t i = 0; i < a->hashes.n; i++) {
        int rc = deps__store_link(&a->s, a->hashes.v[i], held->fd[i], env, a->site, copied, &a->installed, a->err,
                                  a->errlen);
        if (rc < 0)
            return rc;
        char ref[96];
        snprintf(ref, sizeof ref, "py%s/%s", a->pyver, a->hashes.v[i]);
        if ((rc = strv_push(wheels, ref, strlen(ref))) < 0)
            return rc;
    }
    return DEPS_ENV_READY;
}

/* What pip's install says at its end, for the install log. */
static void tell_installed(const struct assembly *a)
{
    if (!a->io || !a->io->line)
        return;
    struct dbuf b;
    dbuf_init(&b, 64u << 10);
    int r = dbuf_printf(&b, "Successfully installed");
    for (size_t i = 0; r == 0 && i < a->installed.n; i++)
        r = dbuf_printf(&b, " %s", a->installed.v[i]);
    if (r == 0)
        r = dbuf_printf(&b, " (from the package store; wheels unpacked now: %zu, there already: %zu)", a->unpacked,
                        a->hashes.n - a->unpacked);
    if (r == 0)
        a->io->line(a->io->ctx, b.data);
    dbuf_free(&b);
}

int deps__store_build(const struct exec_deps_config *cfg, const char *state_dir, const struct deps_python *info,
                      const char *pip_runner, const struct deps_set *set, const char *key, int64_t install_ms,
                      const struct deps_install_io *io, const char *tmp, struct strv *wheels,
                      struct deps__held *held, size_t *copied, char **failed, char *err, size_t errlen)
{
    struct assembly a = {.cfg = cfg, .state_dir = state_dir, .pip_runner = pip_runner, .set = set, .key = key,
                         .install_ms = install_ms, .io = io, .tmp = tmp, .failed = failed, .err = err,
                         .errlen = errlen, .res = -1};
    cleanup_fd int env = -1;
    int rc = assembly_open(&a, info);
    if (rc == 0)
        rc = resolution(&a);
    if (rc == DEPS_ENV_READY && (env = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = -errno;
    if (rc == DEPS_ENV_READY)
        rc = hold_all(&a, held);
    if (rc == DEPS_ENV_READY)
        rc = link_entries(&a, held, env, copied, wheels);
    if (rc == DEPS_ENV_READY)
        tell_installed(&a);
    assembly_free(&a);
    return rc;
}
