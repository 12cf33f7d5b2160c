/* nb.c: Jupyter notebooks in and out (nb.h). In: an .ipynb checked (JSON,
 * nbformat 4, its cells) and turned into a run's script, the driver
 * notebook.py with the notebook as a string, and into its cells' code
 * for the checks and the import scan. Out: each cell of a kernel appended
 * to the workspace's output/notebook.ipynb, from the cell's result (its
 * log's chunks by stream, its value, the PNGs it made, its error). The
 * notebook out is the user's own file (a script of the workspace may
 * rewrite it): it is read bounded, never through a symlink, and when it
 * is not a notebook a new one starts. */
#include "config.h"

#include "nb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "jail.h"
#include "result_log.h"

#define NB_FAILED "[runmyscript] the notebook failed at cell "
#define NB_TAIL 4096 /* bytes of the log's end searched for the driver's last line */
#define NB_TRACEBACK "Traceback (most recent call last):\n"

/* text as a JSON object, strictly; NULL with the reason in err. */
static json_object *parse(const char *text, size_t len, char *err, size_t errlen)
{
    json_tokener *tok = json_tokener_new_ex(NB_JSON_DEPTH);
    if (!tok) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t at = (size_t)tok->char_offset;
    json_tokener_free(tok);
    for (size_t i = e == json_tokener_success ? at : len; i < len; i++)
        if (text[i] != ' ' && text[i] != '\n' && text[i] != '\r' && text[i] != '\t') {
            snprintf(err, errlen, "the notebook is not valid JSON: more after its end, at byte %zu", i);
            json_object_put(o);
            return NULL;
        }
    if (e != json_tokener_success || !o) {
        snprintf(err, errlen, "the notebook is not valid JSON: %s, at byte %zu",
                 e == json_tokener_success || e == json_tokener_continue ? "it ends too soon"
                                                                          : json_tokener_error_desc(e),
                 at);
        json_object_put(o);
        return NULL;
    }
    return o;
}

/* A cell's source (a string, or a list of strings) appended to b; false
 * when it is neither. */
static bool source_of(json_object *cell, struct dbuf *b)
{
    json_object *s;
    if (!json_object_object_get_ex(cell, "source", &s))
        return false;
    if (json_object_is_type(s, json_type_string))
        return dbuf_append(b, json_object_get_string(s), (size_t)json_object_get_string_len(s)) == 0;
    if (!json_object_is_type(s, json_type_array))
        return false;
    for (size_t i = 0; i < json_object_array_length(s); i++) {
        json_object *p = json_object_array_get_idx(s, i);
        if (!json_object_is_type(p, json_type_string) ||
            dbuf_append(b, json_object_get_string(p), (size_t)json_object_get_string_len(p)) < 0)
            return false;
    }
    return true;
}

/* The executed notebook's file name: name's last part, made of letters,
 * digits, '-', '_' and '.', ending in .ipynb; "notebook.ipynb" for none. */
static void safe_name(const char *name, char out[NB_NAME_MAX])
{
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name ? name : "";
    size_t n = 0;
    for (; *base && n + sizeof ".ipynb" < NB_NAME_MAX; base++) {
        char c = *base;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                  c == '_' || (c == '.' && n > 0);
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n > 6 && !strcmp(out + n - 6, ".ipynb"))
        n -= 6;
    out[n] = '\0';
    if (!n || !strcmp(out, "_"))
        n = (size_t)snprintf(out, NB_NAME_MAX, "notebook");
    snprintf(out + n, NB_NAME_MAX - n, ".ipynb");
}

int nb_script(const char *text, size_t len, const char *name, const struct exec_limits *lim, char **cells,
              size_t *cells_len, char **script, size_t *script_len, char *err, size_t errlen)
{
    *cells = *script = NULL;
    *cells_len = *script_len = 0;
    json_object *nb = parse(text, len, err, errlen), *v, *list;
    struct dbuf code, out;
    /* Bounded by the notebook's text: the cells' code is less than it with
     * two newlines a cell; the script is it escaped (at most six bytes a
     * byte) and the driver. */
    dbuf_init(&code, 2 * len + 2);
    dbuf_init(&out, 6 * len + strlen(jail_py_display) + strlen(nb__py_notebook) + 1024);
    int rc = -EINVAL;
    size_t n_code = 0;
    if (!nb)
        goto out;
    if (!json_object_is_type(nb, json_type_object) || !json_object_object_get_ex(nb, "cells", &list) ||
        !json_object_is_type(list, json_type_array)) {
        snprintf(err, errlen, "not a Jupyter notebook: the JSON has no list of \"cells\"");
        goto out;
    }
    if (!json_object_object_get_ex(nb, "nbformat", &v) || !json_object_is_type(v, json_type_int) ||
        json_object_get_int(v) != 4) {
        snprintf(err, errlen, "not a Jupyter notebook of nbformat 4 (\"nbformat\" is %s)",
                 v ? json_object_to_json_string(v) : "missing"); /* get_ex sets v NULL when missing */
        goto out;
    }
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *cell = json_object_array_get_idx(list, i), *type;
        struct dbuf src;
        dbuf_init(&src, len);
        if (!json_object_is_type(cell, json_type_object) || !json_object_object_get_ex(cell, "cell_type", &type) ||
            !json_object_is_type(type, json_type_string) || !source_of(cell, &src)) {
            dbuf_free(&src);
            snprintf(err, errlen, "not a Jupyter notebook: cell %zu has no \"cell_type\" or no \"source\"", i + 1);
            goto out;
        }
        if (!strcmp(json_object_get_string(type), "code")) {
            n_code++;
            if (dbuf_printf(&code, "%s%.*s\n", code.len ? "\n" : "", (int)src.len, src.data ? src.data : "") < 0) {
                dbuf_free(&src);
                goto nomem;
            }
            /* Papermill's start: no outputs, no count. */
            json_object_object_add(cell, "outputs", json_object_new_array());
            json_object_object_add(cell, "execution_count", NULL);
        }
        dbuf_free(&src);
    }
    if (!n_code) {
        snprintf(err, errlen, "the notebook has no code cells: there is nothing to run");
        goto out;
    }
    char safe[NB_NAME_MAX];
    safe_name(name, safe);
    /* The notebook as a Python string: a JSON string is one (no '\/', which
     * NOSLASHESCAPE leaves out; non-ASCII as UTF-8, control characters as
     * \uXXXX). */
    json_object *s = json_object_new_string(json_object_to_json_string_ext(nb, JSON_C_TO_STRING_PLAIN |
                                                                                   JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object *sn = json_object_new_string(safe);
    if (!s || !sn) {
        json_object_put(s);
        json_object_put(sn);
        goto nomem;
    }
    int w = dbuf_printf(&out, "%s%s\nraise SystemExit(_rms_notebook(_rms_display_make, %s, %s, %llu, %llu))\n",
                        jail_py_display, nb__py_notebook,
                        json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                        json_object_to_json_string_ext(sn, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                        (unsigned long long)lim->value_bytes, (unsigned long long)lim->log_bytes);
    json_object_put(s);
    json_object_put(sn);
    if (w < 0)
        goto nomem;
    *cells = dbuf_steal(&code, cells_len);
    *script = dbuf_steal(&out, script_len);
    rc = *cells && *script ? 0 : -ENOMEM;
    if (rc == 0)
        goto out;
nomem:
    snprintf(err, errlen, "out of memory");
    rc = -ENOMEM;
    free(*cells);
    free(*script);
    *cells = *script = NULL;
out:
    json_object_put(nb);
    dbuf_free(&code);
    dbuf_free(&out);
    return rc;
}

char *nb_failure(const struct result_log *log)
{
    const char *d = log->buf.data;
    size_t len = log->buf.len, from = len > NB_TAIL ? len - NB_TAIL : 0;
    if (!d)
        return NULL;
    for (size_t i = len; i-- > from;) {
        if ((i == 0 || d[i - 1] == '\n') && len - i > strlen(NB_FAILED) && !memcmp(d + i, NB_FAILED, strlen(NB_FAILED))) {
            const char *s = d + i + strlen("[runmyscript] "), *nl = memchr(s, '\n', (size_t)(d + len - s));
            size_t n = nl ? (size_t)(nl - s) : (size_t)(d + len - s);
            return util_utf8_sanitize(s, n < RESULT_EXCEPTION_MAX ? n : RESULT_EXCEPTION_MAX, NULL);
        }
    }
    return NULL;
}

/* --------------------------------------------------------- notebook out */

/* A new notebook with no cells: nbformat 4.5 (cells have ids). */
static json_object *nb_new(void)
{
    json_object *nb = json_object_new_object(), *meta = json_object_new_object(), *ks = json_object_new_object(),
                *li = json_object_new_object();
    json_object_object_add(ks, "display_name", json_object_new_string("Python 3"));
    json_object_object_add(ks, "language", json_object_new_string("python"));
    json_object_object_add(ks, "name", json_object_new_string("python3"));
    json_object_object_add(li, "name", json_object_new_string("python"));
    json_object_object_add(meta, "kernelspec", ks);
    json_object_object_add(meta, "language_info", li);
    json_object_object_add(nb, "cells", json_object_new_array());
    json_object_object_add(nb, "metadata", meta);
    json_object_object_add(nb, "nbformat", json_object_new_int(4));
    json_object_object_add(nb, "nbformat_minor", json_object_new_int(5));
    return nb;
}

/* The notebook of output/ when it is one of ours (4.5, with cells); else
 * a new one. */
static json_object *nb_load(int out_fd)
{
    cleanup_free char *text = NULL;
    size_t len = 0;
    char err[256];
    json_object *nb = NULL, *v;
    int fd = openat(out_fd, NB_OUT_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
        util_read_fd(fd, NB_OUT_MAX, &text, &len) == 0)
        nb = parse(text, len, err, sizeof err);
    if (fd >= 0)
        close(fd);
    if (nb && json_object_is_type(nb, json_type_object) && json_object_object_get_ex(nb, "cells", &v) &&
        json_object_is_type(v, json_type_array) && json_object_object_get_ex(nb, "nbformat_minor", &v) &&
        json_object_get_int(v) == 5)
        return nb;
    json_object_put(nb);
    return nb_new();
}

/* s (n bytes) as a list of lines, as nbformat writes a multi-line string. */
static json_object *lines(const char *s, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) + 1 : n;
        cleanup_free char *u = util_utf8_sanitize(s + i, e - i, NULL);
        json_object_array_add(a, json_object_new_string(u ? u : ""));
        i = e;
    }
    return a;
}

static void add_stream(json_object *outs, const char *name, const char *s, size_t n)
{
    if (!n)
        return;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "output_type", json_object_new_string("stream"));
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "text", lines(s, n));
    json_object_array_add(outs, o);
}

/* The cell's log as stream outputs, consecutive chunks of a stream made
 * one; stderr from its last traceback on is left to the error output (tb:
 * that traceback). */
static void add_streams(json_object *outs, const struct result *r, struct dbuf *tb)
{
    const struct result_log *log = &r->log;
    size_t tb_at = (size_t)-1;
    if (r->status == RESULT_STATUS_ERROR && log->buf.data)
        for (size_t i = log->n_chunks; i-- > 0 && tb_at == (size_t)-1;) {
            const struct result_chunk *c = &log->chunks[i];
            if (c->stream != RESULT_STREAM_STDERR)
                continue;
            const char *p = memmem(log->buf.data + c->off, c->len, NB_TRACEBACK, strlen(NB_TRACEBACK));
            if (p)
                tb_at = (size_t)(p - log->buf.data);
        }
    for (size_t i = 0; tb_at != (size_t)-1 && i < log->n_chunks; i++) {
        const struct result_chunk *c = &log->chunks[i];
        if (c->stream == RESULT_STREAM_STDERR && c->off + c->len > tb_at) {
            size_t from = c->off > tb_at ? c->off : tb_at;
            discard(dbuf_append(tb, log->buf.data + from, c->off + c->len - from));
        }
    }
    enum result_stream cur = RESULT_STREAM_SYSTEM;
    size_t from = 0, to = 0;
    for (size_t i = 0; i <= log->n_chunks; i++) {
        const struct result_chunk *c = i < log->n_chunks ? &log->chunks[i] : NULL;
        if (c && c->stream == RESULT_STREAM_SYSTEM)
            continue;
        size_t end = c ? c->off + c->len : 0;
        if (c && c->stream == RESULT_STREAM_STDERR && end > tb_at)
            end = c->off < tb_at ? tb_at : c->off;
        if (c && c->stream == cur && c->off == to) {
            to = end;
            continue;
        }
        if (cur != RESULT_STREAM_SYSTEM)
            add_stream(outs, cur == RESULT_STREAM_STDOUT ? "stdout" : "stderr", log->buf.data + from, to - from);
        if (!c)
            break;
        cur = c->stream, from = c->off, to = end;
    }
}

/* r's error, from the traceback tb of its log: ename and evalue from the
 * exception's line ("ValueError: bad"), else the status and the reason
 * (a timeout: "timeout", "the cell ran longer than ..."); the lines. */
static void add_error(json_object *outs, const struct result *r, const struct dbuf *tb)
{
    const char *e = r->error ? r->error : "";
    const char *colon = strstr(e, ": ");
    bool exc = r->status == RESULT_STATUS_ERROR && colon && !memchr(e, ' ', (size_t)(colon - e));
    json_object *o = json_object_new_object();
    json_object_object_add(o, "output_type", json_object_new_string("error"));
    json_object_object_add(o, "ename", exc ? json_object_new_string_len(e, (int)(colon - e))
                                           : json_object_new_string(result_status_name(r->status)));
    json_object_object_add(o, "evalue", json_object_new_string(exc ? colon + 2 : e));
    json_object *t = tb->len ? lines(tb->data, tb->len) : json_object_new_array();
    for (size_t i = 0; t && i < json_object_array_length(t); i++) { /* Jupyter's lines have no newline */
        json_object *l = json_object_array_get_idx(t, i);
        const char *s = json_object_get_string(l);
        size_t n = strlen(s);
        if (n && s[n - 1] == '\n')
            json_object_array_put_idx(t, i, json_object_new_string_len(s, (int)n - 1));
    }
    json_object_object_add(o, "traceback", t);
    json_object_array_add(outs, o);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A PNG of output/ (path), as base64, within budget; NULL when it is not
 * a regular file of one link, too large, or unreadable. Caller frees. */
static char *png_b64(int out_fd, const char *path, size_t budget)
{
    int fd = openat(out_fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    cleanup_free char *data = NULL;
    size_t n = 0;
    bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
              (uint64_t)st.st_size <= NB_IMAGE_MAX && (uint64_t)st.st_size / 3 * 4 + 4 <= budget &&
              util_read_fd(fd, NB_IMAGE_MAX, &data, &n) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok || strchr(path, '/')) /* a cell's images are at the top of output/ */
        return NULL;
    char *out = malloc(n / 3 * 4 + 5);
    size_t o = 0;
    const unsigned char *in = (const unsigned char *)data;
    for (size_t i = 0; out && i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    if (out)
        out[o] = '\0';
    return out;
}

/* The cell's PNGs (output/cell-N-*.png it made) as display_data. */
static void add_images(json_object *outs, int out_fd, const struct result *r, size_t *budget)
{
    char prefix[48];
    snprintf(prefix, sizeof prefix, "cell-%llu-", (unsigned long long)r->kernel.cell);
    for (size_t i = 0; i < r->n_artifacts; i++) {
        const struct result_artifact *a = &r->artifacts[i];
        size_t n = strlen(a->path);
        if (strncmp(a->path, prefix, strlen(prefix)) || n < 4 || strcmp(a->path + n - 4, ".png"))
            continue;
        cleanup_free char *data = png_b64(out_fd, a->path, *budget);
        json_object *o = json_object_new_object(), *d = json_object_new_object();
        if (data) {
            *budget -= strlen(data);
            json_object_object_add(d, "image/png", json_object_new_string(data));
        }
        json_object_object_add(d, "text/plain", json_object_new_string(
                                    data ? "<image>" : "[runmyscript] the image is left out: notebook.ipynb is at its size"));
        json_object_object_add(o, "output_type", json_object_new_string("display_data"));
        json_object_object_add(o, "data", d);
        json_object_object_add(o, "metadata", json_object_new_object());
        json_object_array_add(outs, o);
    }
}

int nb_out_cell(int out_fd, const char *code, size_t code_len, const struct result *r)
{
    json_object *nb = nb_load(out_fd), *cells, *cell = json_object_new_object(), *outs = json_object_new_array();
    char id[40];
    if (!nb || !cell || !outs || !json_object_object_get_ex(nb, "cells", &cells)) {
        json_object_put(nb);
        json_object_put(cell);
        json_object_put(outs);
        return -ENOMEM;
    }
    struct dbuf tb;
    dbuf_init(&tb, r->log.buf.len);
    size_t now = strlen(json_object_to_json_string_ext(nb, JSON_C_TO_STRING_PLAIN));
    size_t budget = now < NB_OUT_MAX / 2 ? NB_OUT_MAX / 2 - now : 0;
    add_streams(outs, r, &tb);
    if (r->value) {
        json_object *o = json_object_new_object(), *d = json_object_new_object();
        json_object_object_add(d, "text/plain", lines(r->value, strlen(r->value)));
        json_object_object_add(o, "output_type", json_object_new_string("execute_result"));
        json_object_object_add(o, "execution_count", json_object_new_int64((int64_t)r->kernel.cell));
        json_object_object_add(o, "data", d);
        json_object_object_add(o, "metadata", json_object_new_object());
        json_object_array_add(outs, o);
    }
    add_images(outs, out_fd, r, &budget);
    if (r->status != RESULT_STATUS_OK)
        add_error(outs, r, &tb);
    dbuf_free(&tb);
    snprintf(id, sizeof id, "%.32s", r->run_id); /* the cell's run: unique in the notebook */
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "runmyscript", json_object_new_string(result_status_name(r->status)));
    json_object_object_add(cell, "cell_type", json_object_new_string("code"));
    json_object_object_add(cell, "execution_count", json_object_new_int64((int64_t)r->kernel.cell));
    json_object_object_add(cell, "id", json_object_new_string(id));
    json_object_object_add(cell, "metadata", meta);
    json_object_object_add(cell, "outputs", outs);
    json_object_object_add(cell, "source", lines(code, code_len));
    json_object_array_add(cells, cell);
    const char *text = json_object_to_json_string_ext(nb, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = text && strlen(text) <= NB_OUT_MAX ? util_write_file_published(out_fd, NB_OUT_NAME, text, strlen(text), 0644)
                                                : -E2BIG;
    json_object_put(nb);
    return rc;
}
