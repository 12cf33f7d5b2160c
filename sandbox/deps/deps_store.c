/* deps_store.c: the package store, STATE/store/pyX.Y/HASH: every wheel
 * unpacked once (libarchive, loaded on first use), checked against its
 * RECORD, laid out as an installer lays it out, its bytecode compiled,
 * read-only, and published by rename; environments are then trees of
 * hard links into it (deps__store_link).
 *
 * Theory of operation. An entry is named by the SHA-256 of the wheel's
 * file, so the same name always means the same bytes, and lives under the
 * interpreter's X.Y (its bytecode and its headers' path are that
 * interpreter's):
 *
 *   pyX.Y/HASH/            site/ (purelib and platlib), bin/ (the wheel's
 *                          scripts and its console scripts, "#!/usr/bin/env
 *                          python3" as every environment's scripts are),
 *                          data/, include/, and runmyscript-wheel.txt (name,
 *                          version, bytes: written last, the mark of a
 *                          whole entry)
 *   pyX.Y/.HASH.lock       one unpacker of HASH at a time; the others wait
 *                          and then find it published
 *   pyX.Y/.tmp-HASH-RAND/  an unpack in progress (or one that was killed:
 *                          removed by the next unpack of HASH or the next
 *                          eviction pass, under the lock)
 *   pyX.Y/.trash-...       an evicted entry being removed
 *
 * An environment being assembled holds a shared flock on each entry it
 * links until it is published; eviction takes an exclusive one without
 * waiting, so it never removes an entry a build is linking, and removes
 * only entries no published environment's manifest names. */
#include "config.h"

#include "deps_internal.h"

#include <archive.h>
#include <archive_entry.h>
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

#include "art_archive.h"
#include "sha256.h"
#include "workspace.h"

#define STORE_FILES_MAX 200000           /* members of one wheel */
#define STORE_RECORD_MAX (16u << 20)     /* bytes of a wheel's RECORD */
#define STORE_SMALL_MAX (1u << 20)       /* METADATA headers, entry_points.txt */
#define STORE_CHUNK 65536

/* ------------------------------------------------------------ paths */

int deps__store_dir(const char *state_dir, const char *pyver, char **out)
{
    if (asprintf(out, "%s/store/py%s", state_dir, pyver) < 0) {
        *out = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* mkdir -p of STATE/store/pyX.Y, opened. */
int deps__store_open(const char *state_dir, const char *pyver, int *out)
{
    cleanup_free char *dir = NULL;
    int rc = deps__store_dir(state_dir, pyver, &dir);
    if (rc < 0)
        return rc;
    rc = util_mkdir_p(dir, 0755);
    if (rc < 0)
        return rc;
    *out = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return *out < 0 ? -errno : 0;
}

/* A member's path is taken only when it is relative, has no empty, "."
 * or ".." component and no backslash: nothing of a wheel lands outside
 * its entry, whatever the zip says. */
static bool member_path_ok(const char *p)
{
    if (!*p || *p == '/' || strchr(p, '\\'))
        return false;
    for (const char *c = p; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        c += n;
        if (*c == '/' && c[1])
            c++;
        else if (*c == '/')
            break; /* a directory's trailing slash */
    }
    return true;
}

/* Opens dirfd/rel's directory, making every component (ws_open_parent);
 * *leaf is the last component. Nothing followed: the entry is ours and
 * holds no symlink. */
int deps__open_parent(int dirfd, char *rel, const char **leaf, int *out)
{
    int fd = ws_open_parent(dirfd, rel, true, leaf, NULL);
    if (fd < 0)
        return fd;
    *out = fd;
    return 0;
}

/* --------------------------------------------------- one wheel unpacked */

/* Where a member goes: site/ (the root, and .data/purelib, platlib), bin/
 * (.data/scripts), data/, include/ (.data/headers). */
enum store_dest { DEST_SITE, DEST_BIN, DEST_DATA, DEST_INCLUDE };
static const char *const dest_dir[] = {"site", "bin", "data", "include"};

struct member {
    char *path;           /* as the wheel names it */
    char *rel;            /* under its destination */
    enum store_dest dest;
    unsigned char digest[32];
    uint64_t size;
    bool seen_in_record;
};

struct unpack {
    const struct art_archive *z;
    int dir;                       /* the entry being made */
    int parent;                    /* the directory of the last member written (-1: none) */
    char parent_rel[PATH_MAX];     /* and its path under dir */
    struct member *m;
    size_t n, cap;
    char *record;                  /* the wheel's RECORD */
    char *entry_points;            /* its entry_points.txt, or NULL */
    char *metadata;                /* its METADATA (the headers matter) */
    char distinfo[NAME_MAX + 1];   /* NAME-VER.dist-info */
    uint64_t bytes, max_bytes;
};

static void unpack_free(struct unpack *u)
{
    if (u->parent >= 0)
        close(u->parent);
    for (size_t i = 0; i < u->n; i++) {
        free(u->m[i].path);
        free(u->m[i].rel);
    }
    free(u->m);
    free(u->record);
    free(u->entry_points);
    free(u->metadata);
}

/* The member's destination from its path: "NAME-VER.data/KIND/rest"
 * goes by KIND, everything else into site/ as it is. -EINVAL for a
 * .data KIND the wheel format does not have. */
static int member_dest(const char *path, enum store_dest *dest, const char **rel)
{
    const char *slash = strchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : strlen(path);
    *dest = DEST_SITE;
    *rel = path;
    if (!slash || n < 6 || memcmp(path + n - 5, ".data", 5))
        return 0;
    const char *kind = slash + 1, *rest = strchr(kind, '/');
    if (!rest || !rest[1])
        return -EINVAL;
    size_t k = (size_t)(rest - kind);
    static const struct {
        const char *name;
        enum store_dest dest;
    } kinds[] = {{"purelib", DEST_SITE}, {"platlib", DEST_SITE}, {"scripts", DEST_BIN},
                 {"data", DEST_DATA}, {"headers", DEST_INCLUDE}};
    for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
        if (strlen(kinds[i].name) == k && !memcmp(kind, kinds[i].name, k)) {
            *dest = kinds[i].dest;
            *rel = rest + 1;
            return 0;
        }
    return -EINVAL;
}

/* Keeps a small member's bytes too (RECORD, METADATA, entry_points.txt
 * of the dist-info directory). */
static char **kept(struct unpack *u, const char *path)
{
    const char *slash = strchr(path, '/');
    if (!slash || strchr(slash + 1, '/') || slash - path < 11 || memcmp(slash - 10, ".dist-info", 10))
        return NULL;
    size_t n = (size_t)(slash - path);
    if (!u->distinfo[0] && n < sizeof u->distinfo) {
        memcpy(u->distinfo, path, n);
        u->distinfo[n] = '\0';
    }
    if (strlen(u->distinfo) != n || memcmp(u->distinfo, path, n))
        return NULL; /* a second dist-info: refused by the caller's check */
    if (!strcmp(slash + 1, "RECORD"))
        return &u->record;
    if (!strcmp(slash + 1, "METADATA"))
        return &u->metadata;
    if (!strcmp(slash + 1, "entry_points.txt"))
        return &u->entry_points;
    return NULL;
}

/* Writes one regular member into its destination, hashing it. */
static int unpack_member(struct unpack *u, struct archive *a, const char *path, mode_t perm, char *err,
                         size_t errlen)
{
    enum store_dest dest;
    const char *rel;
    if (member_dest(path, &dest, &rel) < 0) {
        snprintf(err, errlen, "%.200s: not a place a wheel may install to", path);
        return -EINVAL;
    }
    if (UTIL_GROW(u->m, u->n, u->cap, 256) < 0)
        return -ENOMEM;
    struct member *m = &u->m[u->n];
    memset(m, 0, sizeof *m);
    m->dest = dest;
    if (!(m->path = strdup(path)) || asprintf(&m->rel, "%s/%s", dest_dir[dest], rel) < 0) {
        free(m->path);
        return -ENOMEM;
    }
    u->n++;
    char **keep = kept(u, path);
    struct dbuf small;
    dbuf_init(&small, keep == &u->record ? STORE_RECORD_MAX : STORE_SMALL_MAX);
    /* Members come directory by directory: the last one's directory is
     * kept open rather than walked to again from the top. */
    const char *leaf = strrchr(m->rel, '/') + 1;
    size_t plen = (size_t)(leaf - 1 - m->rel);
    int rc = 0;
    if (u->parent < 0 || plen != strlen(u->parent_rel) || memcmp(u->parent_rel, m->rel, plen)) {
        if (u->parent >= 0)
            close(u->parent);
        u->parent = -1;
        rc = deps__open_parent(u->dir, m->rel, &leaf, &u->parent);
        if (rc == 0 && plen < sizeof u->parent_rel) {
            memcpy(u->parent_rel, m->rel, plen);
            u->parent_rel[plen] = '\0';
        } else {
            u->parent_rel[0] = '\0';
        }
    }
    int pd = u->parent;
    cleanup_fd int fd = rc < 0 ? -1 : openat(pd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                             perm & 0111 ? 0755 : 0644);
    if (rc == 0 && fd < 0)
        rc = -errno;
    if (rc < 0) {
        snprintf(err, errlen, "%.200s: %s", path, rc == -EEXIST ? "the wheel holds it twice" : strerror(-rc));
        dbuf_free(&small);
        return rc;
    }
    struct sha256 h;
    sha256_init(&h);
    char buf[STORE_CHUNK];
    for (;;) {
        la_ssize_t got = u->z->archive_read_data(a, buf, sizeof buf);
        if (got < 0) {
            snprintf(err, errlen, "%.200s: %s", path, u->z->archive_error_string(a));
            rc = -EBADMSG;
            break;
        }
        if (got == 0)
            break;
        m->size += (uint64_t)got;
        u->bytes += (uint64_t)got;
        if (u->max_bytes && u->bytes > u->max_bytes) {
            snprintf(err, errlen, "it unpacks to more than store_bytes (%llu bytes)",
                     (unsigned long long)u->max_bytes);
            rc = -EFBIG;
            break;
        }
        sha256_update(&h, buf, (size_t)got);
        if ((rc = util_write_all(fd, buf, (size_t)got)) < 0) {
            snprintf(err, errlen, "%.200s: %s", path, strerror(-rc));
            break;
        }
        if (keep && (rc = dbuf_append(&small, buf, (size_t)got)) < 0) {
            snprintf(err, errlen, "%.200s: too large", path);
            break;
        }
    }
    sha256_final(&h, m->digest);
    if (rc == 0 && keep)
        *keep = dbuf_steal(&small, NULL);
    dbuf_free(&small);
    return rc;
}

static int unpack_all(struct unpack *u, int wheel_fd, char *err, size_t errlen)
{
    struct archive *a = u->z->archive_read_new();
    if (!a)
        return -ENOMEM;
    int rc = 0;
    if (u->z->archive_read_support_format_zip(a) != ARCHIVE_OK ||
        u->z->archive_read_open_fd(a, wheel_fd, STORE_CHUNK) != ARCHIVE_OK) {
        snprintf(err, errlen, "not a zip: %s", u->z->archive_error_string(a));
        rc = -EBADMSG;
        goto out;
    }
    bool first = true;
    for (;;) {
        struct archive_entry *ae;
        int r = u->z->archive_read_next_header(a, &ae);
        if (r == ARCHIVE_EOF)
            break;
        if (r != ARCHIVE_OK) {
            snprintf(err, errlen, "a damaged zip: %s", u->z->archive_error_string(a));
            rc = -EBADMSG;
            goto out;
        }
        const char *path = u->z->archive_entry_pathname(ae);
        if (!path || !member_path_ok(path)) {
            snprintf(err, errlen, "a member's path is unsafe: %.200s", path ? path : "(none)");
            rc = -EINVAL;
            goto out;
        }
        mode_t type = u->z->archive_entry_filetype(ae);
        if (type == AE_IFDIR)
            continue; /* directories come with their files */
        if (type != AE_IFREG) {
            snprintf(err, errlen, "%.200s: not a regular file (a wheel holds only files)", path);
            rc = -EINVAL;
            goto out;
        }
        if (u->n >= STORE_FILES_MAX) {
            snprintf(err, errlen, "more than %d files", STORE_FILES_MAX);
            rc = -E2BIG;
            goto out;
        }
        rc = unpack_member(u, a, path, u->z->archive_entry_perm(ae), err, errlen);
        if (rc < 0)
            goto out;
        if (first)
            deps__fault("unpack");
        first = false;
    }
out:
    u->z->archive_read_free(a);
    return rc;
}

/* --------------------------------------------------------------- RECORD */

static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const struct member *)a)->path, ((const struct member *)b)->path);
}

static bool is_signature(const char *path, const char *distinfo)
{
    size_t n = strlen(distinfo);
    return !strncmp(path, distinfo, n) && path[n] == '/' &&
           (!strcmp(path + n + 1, "RECORD") || !strcmp(path + n + 1, "RECORD.jws") ||
            !strcmp(path + n + 1, "RECORD.p7s"));
}

/* Every member but RECORD (and its signatures) is listed in RECORD with
 * its sha256 and size, and RECORD lists nothing the wheel lacks: a wheel
 * damaged or altered after it was built is refused. */
static int check_record(struct unpack *u, char *err, size_t errlen)
{
    if (!u->distinfo[0] || !u->record || !u->metadata) {
        snprintf(err, errlen, "no .dist-info directory with METADATA and RECORD");
        return -EBADMSG;
    }
    qsort(u->m, u->n, sizeof *u->m, cmp_member);
    for (size_t i = 0; i + 1 < u->n; i++)
        if (!strcmp(u->m[i].path, u->m[i + 1].path)) {
            snprintf(err, errlen, "%.200s: the wheel holds it twice", u->m[i].path);
            return -EBADMSG;
        }
    for (size_t i = 0; i < u->n; i++) {
        const char *s = strchr(u->m[i].path, '/');
        size_t n = s ? (size_t)(s - u->m[i].path) : 0;
        if (n > 10 && !memcmp(u->m[i].path + n - 10, ".dist-info", 10) &&
            (n != strlen(u->distinfo) || memcmp(u->m[i].path, u->distinfo, n))) {
            snprintf(err, errlen, "more than one .dist-info directory");
            return -EBADMSG;
        }
    }
    char *save = NULL;
    for (char *line = strtok_r(u->record, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        char *p = line;
        char *path = deps__record_field(&p), *hash = deps__record_field(&p), *size = deps__record_field(&p);
        if (!*path)
            continue;
        struct member key = {.path = path};
        struct member *m = bsearch(&key, u->m, u->n, sizeof *u->m, cmp_member);
        if (is_signature(path, u->distinfo))
            continue;
        if (!m) {
            snprintf(err, errlen, "RECORD lists %.200s, which the wheel lacks", path);
            return -EBADMSG;
        }
        char want[64];
        deps__record_b64(m->digest, 32, want);
        if (strncmp(hash, "sha256=", 7) || strcmp(hash + 7, want) ||
            (*size && strtoull(size, NULL, 10) != m->size)) {
            snprintf(err, errlen, "%.200s does not match its hash in RECORD (a damaged or altered wheel)", path);
            return -EBADMSG;
        }
        m->seen_in_record = true;
    }
    for (size_t i = 0; i < u->n; i++)
        if (!u->m[i].seen_in_record && !is_signature(u->m[i].path, u->distinfo)) {
            snprintf(err, errlen, "%.200s is not in RECORD", u->m[i].path);
            return -EBADMSG;
        }
    return 0;
}

/* A METADATA header's value (the first), or NULL; caller frees. */
static char *meta_header(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p && *p && *p != '\n';) {
        if (!strncasecmp(p, name, n) && p[n] == ':') {
            p += n + 1;
            while (*p == ' ' || *p == '\t')
                p++;
            size_t len = strcspn(p, "\r\n");
            while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                len--;
            return strndup(p, len);
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return NULL;
}

/* ------------------------------------------------------ scripts and RECORD */

/* The dist-info's INSTALLER, and its RECORD as installed: each member at
 * the path it has from site-packages, the console scripts, INSTALLER. */
static int write_distinfo(struct unpack *u, const char *pyver, const char *name)
{
    struct dbuf b;
    dbuf_init(&b, STORE_RECORD_MAX + (1u << 20));
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < u->n; i++) {
        const struct member *m = &u->m[i];
        if (is_signature(m->path, u->distinfo))
            continue;
        const char *rel = m->rel + strlen(dest_dir[m->dest]) + 1;
        char prefix[PATH_MAX];
        switch (m->dest) {
        case DEST_SITE: prefix[0] = '\0'; break;
        case DEST_BIN: snprintf(prefix, sizeof prefix, "../../../bin/"); break;
        case DEST_DATA: snprintf(prefix, sizeof prefix, "../../../"); break;
        case DEST_INCLUDE: snprintf(prefix, sizeof prefix, "../../../include/site/python%s/%s/", pyver, name); break;
        }
        char b64[64];
        deps__record_b64(m->digest, 32, b64);
        rc = deps__record_path(&b, prefix, rel);
        if (rc == 0)
            rc = dbuf_printf(&b, ",sha256=%s,%llu\n", b64, (unsigned long long)m->size);
    }
    if (rc == 0 && u->entry_points)
        rc = deps__console_scripts(u->dir, u->entry_points, &b);
    cleanup_fd int di = -1;
    if (rc == 0) {
        char p[NAME_MAX + 8];
        snprintf(p, sizeof p, "site/%s", u->distinfo);
        di = openat(u->dir, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (di < 0)
            rc = -errno;
    }
    static const char installer[] = "runmyscript\n";
    char b64[64];
    deps__record_hash(installer, strlen(installer), b64);
    if (rc == 0)
        rc = util_write_file_atomic(di, "INSTALLER", installer, strlen(installer), 0644);
    if (rc == 0)
        rc = dbuf_printf(&b, "%s/INSTALLER,sha256=%s,%zu\n%s/RECORD,,\n", u->distinfo, b64, strlen(installer),
                         u->distinfo);
    if (rc == 0 && unlinkat(di, "RECORD", 0) < 0)
        rc = -errno; /* hard-linked from nowhere yet, but rewritten, not edited */
    if (rc == 0)
        rc = util_write_file_atomic(di, "RECORD", b.data, b.len, 0644);
    dbuf_free(&b);
    return rc;
}

/* ------------------------------------------------------ compile, publish */

/* Lays out the entry being made: scripts, dist-info; its mark's text
 * but the bytes into *mark (caller frees). */
static int prepare_entry(struct unpack *u, const struct deps__store *s, char **mark, char *err, size_t errlen)
{
    cleanup_free char *name = meta_header(u->metadata, "Name");
    cleanup_free char *version = meta_header(u->metadata, "Version");
    if (!name || !version || !*name || !*version || strpbrk(name, " \t/") || strpbrk(version, " \t/")) {
        snprintf(err, errlen, "its METADATA has no plain Name and Version");
        return -EBADMSG;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < u->n; i++)
        if (u->m[i].dest == DEST_BIN && !strchr(u->m[i].rel + 4, '/')) {
            cleanup_fd int bin = openat(u->dir, "bin", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            rc = bin < 0 ? -errno : deps__fix_script(bin, u->m[i].rel + 4);
            if (rc == 0)
                rc = fchmodat(bin, u->m[i].rel + 4, 0755, 0) < 0 ? -errno : 0;
        }
    /* Headers go where pip puts them: include/site/pythonX.Y/NAME with
     * the project's name as it is asked for (normalized). */
    cleanup_free char *norm = deps_normalize_name(name, strlen(name));
    if (!norm)
        rc = -ENOMEM;
    if (rc == 0)
        rc = write_distinfo(u, s->pyver, norm);
    if (rc == 0 && asprintf(mark, "runmyscript-wheel 1\nname %s\nversion %s\ndist-info %s\n", name, version,
                            u->distinfo) < 0) {
        *mark = NULL;
        rc = -ENOMEM;
    }
    if (rc < 0)
        snprintf(err, errlen, "laying it out: %s", strerror(-rc));
    return rc;
}

bool deps__store_whole(int store, const char *hash)
{
    char p[128];
    struct stat st;
    snprintf(p, sizeof p, "%s/" DEPS_STORE_MARK, hash);
    return fstatat(store, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The SHA-256 of the file open at fd, in hex. */
static int hash_file(int fd, char out[65])
{
    struct sha256 h;
    sha256_init(&h);
    char buf[STORE_CHUNK];
    for (off_t off = 0;;) {
        ssize_t n = pread(fd, buf, sizeof buf, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        sha256_update(&h, buf, (size_t)n);
        off += n;
    }
    unsigned char d[32];
    sha256_final(&h, d);
    util_hex(d, 32, out);
    return 0;
}

/* Under the entry's lock: what a killed unpack of hash left. */
static void remove_tmp_of(int store, const char *hash)
{
    char prefix[80];
    snprintf(prefix, sizeof prefix, ".tmp-%s-", hash);
    cleanup_dir DIR *d = util_opendir_at(store);
    for (struct dirent *de; d && (de = readdir(d));)
        if (!strncmp(de->d_name, prefix, strlen(prefix))) {
            log_msg(LOG_LVL_INFO, "store: removing %s, left by an unpack that did not finish", de->d_name);
            discard(deps__remove_tree(store, de->d_name));
        }
}

/* deps__store_unpack's work, under the lock, into a fresh .tmp- that p
 * then holds (its lock is the caller's to hand over). */
static int unpack_entry(const struct deps__store *s, int store, int wheel, struct deps__pending *p, char *err,
                        size_t errlen)
{
    char id[WS_ID_MAX + 1];
    int rc = ws_new_id(NULL, id);
    if (rc < 0)
        return rc;
    cleanup_free char *dir = NULL;
    if ((rc = deps__store_dir(s->state_dir, s->pyver, &dir)) < 0)
        return rc;
    snprintf(p->tmpname, sizeof p->tmpname, ".tmp-%s-%.8s", p->hash, id);
    if (asprintf(&p->tmp, "%s/%s", dir, p->tmpname) < 0) {
        p->tmp = NULL;
        p->tmpname[0] = '\0';
        return -ENOMEM;
    }
    if (mkdirat(store, p->tmpname, 0755) < 0) {
        p->tmpname[0] = '\0';
        return -errno;
    }
    struct unpack u = {.max_bytes = s->max_bytes, .parent = -1};
    u.z = art_archive_api("the package store: ", err, errlen);
    u.dir = openat(store, p->tmpname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rc = !u.z ? -ENOSYS : u.dir < 0 ? -errno : 0;
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(dest_dir); i++)
        if (mkdirat(u.dir, dest_dir[i], 0755) < 0)
            rc = -errno;
    if (rc == 0 && lseek(wheel, 0, SEEK_SET) < 0)
        rc = -errno;
    if (rc == 0)
        rc = unpack_all(&u, wheel, err, errlen);
    if (rc == 0)
        rc = check_record(&u, err, errlen);
    if (rc == 0)
        rc = prepare_entry(&u, s, &p->mark, err, errlen);
    if (u.dir >= 0)
        close(u.dir);
    unpack_free(&u);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "%s", strerror(-rc));
    return rc;
}

int deps__store_hash(const char *path, char hash[65])
{
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    return fd < 0 ? -errno : hash_file(fd, hash);
}

int deps__store_hash_fd(int fd, char hash[65])
{
    return hash_file(fd, hash);
}

/* The file name of a wheel's path, for the log and the messages. */
static const char *file_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int deps__store_claim(const struct deps__store *s, const char *name, const char *hash, struct deps__pending *pending,
                      char *err, size_t errlen)
{
    err[0] = '\0';
    name = file_base(name);
    /* libarchive (art_archive.c), loaded here, before the unpacks that may
     * run in threads. */
    if (!art_archive_api("the package store: ", err, errlen))
        return -ENOSYS;
    struct deps__pending p = {.store = -1, .lock = -1};
    snprintf(p.hash, sizeof p.hash, "%s", hash);
    int rc = deps__store_open(s->state_dir, s->pyver, &p.store);
    if (rc < 0) {
        snprintf(err, errlen, "the package store: %s", strerror(-rc));
        return rc;
    }
    if (deps__store_whole(p.store, hash)) {
        deps__pending_drop(&p);
        return 0;
    }
    /* Two runs that need the same wheel: one unpacks, the other waits
     * and then finds it whole. */
    cleanup_free char *dir = NULL, *lockpath = NULL;
    if ((rc = deps__store_dir(s->state_dir, s->pyver, &dir)) < 0 || asprintf(&lockpath, "%s/.%s.lock", dir, hash) < 0) {
        deps__pending_drop(&p);
        return rc < 0 ? rc : -ENOMEM;
    }
    if ((rc = deps__lock_file(lockpath, NULL, &p.lock)) < 0) {
        snprintf(err, errlen, "lock %s: %s", lockpath, strerror(-rc));
        deps__pending_drop(&p);
        return rc;
    }
    if (deps__store_whole(p.store, hash)) {
        deps__pending_drop(&p);
        return 0;
    }
    discard(deps__remove_tree(p.store, hash)); /* not whole: not ours */
    remove_tmp_of(p.store, hash);
    log_msg(LOG_LVL_INFO, "store: unpacking %s into %s/%s", name, dir, hash);
    *pending = p;
    return 1;
}

int deps__store_unpack(const struct deps__store *s, int wheel, const char *name, struct deps__pending *p, char *err,
                       size_t errlen)
{
    char why[512] = "";
    name = file_base(name);
    int rc = unpack_entry(s, p->store, wheel, p, why, sizeof why);
    if (rc < 0)
        snprintf(err, errlen, "the wheel %s was refused: %s", name, why[0] ? why : strerror(-rc));
    return rc;
}
