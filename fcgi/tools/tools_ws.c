/* tools_ws.c: the workspace tools, list_dir and preview_file: they read the
 * session's workspace beneath its directory fd, following no symlink. */
#include "config.h"

#include "tools_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_workspace(const struct tools_ctx *c)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/workspace", c->session_dir);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* "", ".", "./" and trailing slashes: the path as ws_rel_path_ok wants it
 * ("" for the top). Copies into out. */
static void normalise(const char *in, char *out, size_t outlen)
{
    while (in[0] == '.' && in[1] == '/')
        in += 2;
    snprintf(out, outlen, "%s", in);
    size_t n = strlen(out);
    while (n && out[n - 1] == '/')
        out[--n] = '\0';
    if (!strcmp(out, "."))
        out[0] = '\0';
}

static const char *open_error(int rc)
{
    switch (-rc) {
    case ENOENT: return "there is no such file or folder";
    case ELOOP: return "it is (or passes through) a symbolic link, which is never followed";
    case EXDEV: return "it leads out of the workspace";
    case ENOTDIR: return "a part of it is not a folder";
    case EINVAL: return "it must be relative to the workspace, without '..' or empty parts";
    case EACCES: return "permission denied";
    default: return strerror(-rc);
    }
}

struct entry {
    char *name;
    const char *type;
    int64_t size;
};

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

int tools__list_dir(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"dir_path", NULL};
    if ((*result = tools__check_known(args, known, "list_dir")))
        return 0;
    json_object *dp = tools__get_arg(args, "dir_path");
    if (dp && !json_object_is_type(dp, json_type_string)) {
        *result = tools__arg_error("list_dir: dir_path must be a string");
        return 0;
    }
    char rel[1100];
    normalise(dp ? json_object_get_string(dp) : "", rel, sizeof rel);
    cleanup_fd int ws = open_workspace(c);
    if (ws < 0)
        return ws;
    cleanup_fd int dfd = -1;
    if (!rel[0])
        dfd = fcntl(ws, F_DUPFD_CLOEXEC, 0);
    else if (!ws_rel_path_ok(rel))
        dfd = -EINVAL;
    else
        dfd = ws_open_beneath(ws, rel, O_RDONLY | O_DIRECTORY, 0);
    if (dfd < 0) {
        *result = tools__arg_error("list_dir: cannot list '%s': %s", rel[0] ? rel : ".", open_error(dfd));
        return 0;
    }
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return -errno;
    struct entry *v = NULL;
    size_t n = 0, cap = 0;
    bool truncated = false;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == TOOLS_LIST_DIR_MAX) {
            truncated = true;
            break;
        }
        if (UTIL_GROW(v, n, cap, 64) < 0)
            break;
        struct stat st;
        struct entry *e = &v[n];
        e->size = -1;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        e->type = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "directory" : S_ISLNK(st.st_mode) ? "symlink" : "other";
        if (S_ISREG(st.st_mode))
            e->size = (int64_t)st.st_size;
        e->name = util_utf8_sanitize(de->d_name, strlen(de->d_name), NULL);
        if (e->name)
            n++;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_entry);
    json_object *sc = json_object_new_object();
    json_object *entries = json_object_new_array();
    struct dbuf b;
    dbuf_init(&b, 1 << 20);
    discard(dbuf_printf(&b, "workspace/%s: %zu entr%s%s\n", rel, n, n == 1 ? "y" : "ies",
                        truncated ? " (more not shown)" : ""));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(v[i].name));
        json_object_object_add(e, "type", json_object_new_string(v[i].type));
        if (v[i].size >= 0)
            json_object_object_add(e, "size", json_object_new_int64(v[i].size));
        json_object_array_add(entries, e);
        char hs[32] = "";
        if (v[i].size >= 0)
            util_human_size((uint64_t)v[i].size, hs, sizeof hs);
        discard(dbuf_printf(&b, "%s%s  %s\n", v[i].name, !strcmp(v[i].type, "directory") ? "/" : "",
                            v[i].size >= 0 ? hs : v[i].type));
        free(v[i].name);
    }
    free(v);
    json_object_object_add(sc, "path", json_object_new_string(rel));
    json_object_object_add(sc, "entries", entries);
    json_object_object_add(sc, "truncated", json_object_new_boolean(truncated));
    cleanup_free char *text = dbuf_steal(&b, NULL);
    *result = tools__simple_result(text ? text : "", false, sc);
    return 0;
}

int tools__preview_file(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"relative_path", NULL};
    const struct cfg *cfg = c->cfg;
    if ((*result = tools__check_known(args, known, "preview_file")))
        return 0;
    json_object *rp = tools__get_arg(args, "relative_path");
    if (!rp || !json_object_is_type(rp, json_type_string)) {
        *result = tools__arg_error("preview_file: relative_path (a file relative to the workspace) is required");
        return 0;
    }
    char rel[1100];
    normalise(json_object_get_string(rp), rel, sizeof rel);
    cleanup_fd int ws = open_workspace(c);
    if (ws < 0)
        return ws;
    cleanup_fd int fd = ws_rel_path_ok(rel) ? ws_open_beneath(ws, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0) : -EINVAL;
    struct stat st;
    if (fd < 0) {
        *result = tools__arg_error("preview_file: cannot open '%s': %s", rel, open_error(fd));
        return 0;
    }
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode)) {
        *result = tools__arg_error("preview_file: '%s' is %s, not a file%s", rel,
                            S_ISDIR(st.st_mode) ? "a folder" : "a special file",
                            S_ISDIR(st.st_mode) ? " (list_dir lists it)" : "");
        return 0;
    }
    size_t cap = (size_t)cfg->preview_bytes;
    cleanup_free unsigned char *buf = malloc(cap + 1);
    if (!buf)
        return -ENOMEM;
    size_t got = 0;
    while (got < cap) {
        ssize_t r = pread(fd, buf + got, cap - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    bool truncated = (uint64_t)st.st_size > got;
    const char *base = strrchr(rel, '/');
    const char *mime = ws_mime(buf, got, base ? base + 1 : rel);
    /* Text: valid UTF-8 with no NUL, except a sequence cut at the end. */
    size_t check = got;
    if (truncated) {
        size_t back = 0;
        while (back < 3 && back < check && (buf[check - 1 - back] & 0xc0) == 0x80)
            back++;
        if (back < check && buf[check - 1 - back] >= 0xc0)
            check -= back + 1;
    }
    bool binary = memchr(buf, '\0', got) != NULL || !util_utf8_valid((const char *)buf, check);
    char hs[32], ps[32];
    util_human_size((uint64_t)st.st_size, hs, sizeof hs);
    util_human_size(got, ps, sizeof ps);
    json_object *sc = json_object_new_object();
    json_object_object_add(sc, "path", json_object_new_string(rel));
    json_object_object_add(sc, "size", json_object_new_int64((int64_t)st.st_size));
    json_object_object_add(sc, "mime", json_object_new_string(mime));
    json_object_object_add(sc, "binary", json_object_new_boolean(binary));
    json_object_object_add(sc, "truncated", json_object_new_boolean(truncated));
    struct dbuf b;
    dbuf_init(&b, cap + 4096);
    if (binary) {
        json_object_object_add(sc, "text", NULL);
        discard(dbuf_printf(&b, "%s: a binary file (%s, %s); not shown", rel, mime, hs));
    } else {
        json_object_object_add(sc, "text", json_object_new_string_len((const char *)buf, (int)check));
        discard(dbuf_append(&b, buf, check));
        if (truncated)
            discard(dbuf_printf(&b, "\n[truncated: this shows the first %s of %s; the file is %s]", ps, hs, rel));
    }
    cleanup_free char *text = dbuf_steal(&b, NULL);
    *result = tools__simple_result(text ? text : "", false, sc);
    return 0;
}

