/* test-nb.c: notebooks in and out (sandbox/nb.c): an .ipynb checked and
 * made a run's script (the refusals, the cells' code, the executed
 * notebook's name), the driver's failure line, and a kernel's cells
 * appended to output/notebook.ipynb (stream, value, image and error
 * outputs; a symlink in its place never followed; a bad file replaced). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nb.h"
#include "result.h"
#include "result_log.h"
#include "tap.h"

static struct exec_limits lim = {.value_bytes = 65536, .log_bytes = 1 << 20};

/* nb_script on text: its rc, and the reason in err. */
static int script_of(const char *text, char *err, size_t errlen, char **cells, char **script)
{
    size_t cl, sl;
    return nb_script(text, strlen(text), "dir/My Book.ipynb", &lim, cells, &cl, script, &sl, err, errlen);
}

static void test_in(void)
{
    char err[512];
    char *cells = NULL, *script = NULL;
    static const struct {
        const char *text, *reason;
    } bad[] = {
        {"{\"cells\": [", "the notebook is not valid JSON"},
        {"print(1)", "the notebook is not valid JSON"},
        {"{\"cells\": []} x", "the notebook is not valid JSON"},
        {"[1, 2]", "not a Jupyter notebook: the JSON has no list of \"cells\""},
        {"{\"nbformat\": 4}", "not a Jupyter notebook: the JSON has no list of \"cells\""},
        {"{\"cells\": [], \"nbformat\": 3}", "not a Jupyter notebook of nbformat 4 (\"nbformat\" is 3)"},
        {"{\"cells\": []}", "not a Jupyter notebook of nbformat 4 (\"nbformat\" is missing)"},
        {"{\"cells\": [{\"cell_type\": \"code\"}], \"nbformat\": 4}", "cell 1 has no \"cell_type\" or no \"source\""},
        {"{\"cells\": [{\"cell_type\": \"code\", \"source\": [1]}], \"nbformat\": 4}", "cell 1 has no"},
        {"{\"cells\": [{\"cell_type\": \"markdown\", \"source\": \"# t\"}], \"nbformat\": 4}", "no code cells"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        int rc = script_of(bad[i].text, err, sizeof err, &cells, &script);
        ok(rc == -EINVAL && strstr(err, bad[i].reason) && !cells && !script, "refused: %s (%s)", bad[i].text, err);
    }
    /* Depth past NB_JSON_DEPTH. */
    char deep[2 * NB_JSON_DEPTH + 64];
    size_t n = 0;
    for (int i = 0; i < NB_JSON_DEPTH + 2; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    ok(script_of(deep, err, sizeof err, &cells, &script) == -EINVAL && strstr(err, "not valid JSON"),
       "nesting past NB_JSON_DEPTH is refused (%s)", err);

    const char *nb = "{\"cells\": [{\"cell_type\": \"markdown\", \"source\": \"# Title\"},"
                     " {\"cell_type\": \"code\", \"source\": [\"import numpy\\n\", \"x = 1\"], \"outputs\": [{\"output_type\": \"stream\"}],"
                     "  \"execution_count\": 7},"
                     " {\"cell_type\": \"code\", \"source\": \"print('</a> \\\\u00e9 \\\\/ \\\\\\\"q')\"}], \"nbformat\": 4, \"nbformat_minor\": 5}";
    int rc = script_of(nb, err, sizeof err, &cells, &script);
    is_int(rc, 0, "a notebook is taken (%s)", err);
    is_str(cells, "import numpy\nx = 1\n\nprint('</a> \\u00e9 \\/ \\\"q')\n", "its code cells, joined, for the checks and the import scan");
    ok(script && strstr(script, "def _rms_display_make(") && strstr(script, "def _rms_notebook("),
       "the script is display.py and the driver");
    ok(script && strstr(script, "raise SystemExit(_rms_notebook(_rms_display_make, \"{") &&
           strstr(script, "\"My_Book.ipynb\", 65536, 1048576))"),
       "and the call, with a safe name and the limits");
    const char *call = script ? strstr(script, "raise SystemExit(") : NULL;
    ok(call && strstr(call, "\\\"outputs\\\":[]") && strstr(call, "\\\"execution_count\\\":null") &&
           !strstr(call, "output_type"),
       "the outputs and counts cleared, as papermill starts");
    free(cells);
    free(script);
}

static void test_failure(void)
{
    struct result_log log;
    bool marker;
    result_log_init(&log, 1 << 20);
    ok(nb_failure(&log) == NULL, "an empty log has no failure line");
    const char *tail = "Traceback (most recent call last):\nZeroDivisionError: x\n"
                       "[runmyscript] the notebook failed at cell 3: ZeroDivisionError: x\n";
    discard(result_log_append(&log, RESULT_STREAM_STDERR, tail, strlen(tail), &marker));
    char *f = nb_failure(&log);
    is_str(f, "the notebook failed at cell 3: ZeroDivisionError: x", "the driver's last line is the error");
    free(f);
    result_log_free(&log);
    result_log_init(&log, 1 << 20);
    const char *forged = "x [runmyscript] the notebook failed at cell 9: no\n";
    discard(result_log_append(&log, RESULT_STREAM_STDOUT, forged, strlen(forged), &marker));
    ok(nb_failure(&log) == NULL, "only a line that starts with it");
    result_log_free(&log);
}

/* A cell's result: code ran as cell n, what it printed, its value, status. */
static void cell_result(struct result *r, uint64_t n, const char *out, const char *err, const char *value,
                        enum result_status status)
{
    bool marker;
    result_init(r);
    snprintf(r->run_id, sizeof r->run_id, "%032llx", (unsigned long long)n);
    r->kernel.cell = n;
    r->status = status;
    result_log_init(&r->log, 1 << 20);
    if (out)
        discard(result_log_append(&r->log, RESULT_STREAM_STDOUT, out, strlen(out), &marker));
    if (err)
        discard(result_log_append(&r->log, RESULT_STREAM_STDERR, err, strlen(err), &marker));
    if (out)
        discard(result_log_append(&r->log, RESULT_STREAM_STDOUT, "more\n", 5, &marker));
    r->value = value ? strdup(value) : NULL;
    if (status == RESULT_STATUS_ERROR)
        r->error = strdup("ZeroDivisionError: division by zero");
}

static json_object *read_nb(int dfd)
{
    char buf[1 << 16];
    int fd = openat(dfd, NB_OUT_NAME, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0)
        return NULL;
    buf[n] = '\0';
    return json_tokener_parse(buf);
}

/* r's cell appended to the notebook of dfd (its rc checked against want),
 * r freed; the notebook then (caller puts it). */
static json_object *append(int dfd, struct result *r, const char *code, int want, const char *what)
{
    is_int(nb_out_cell(dfd, code, strlen(code), r), want, "%s", what);
    result_free(r);
    return read_nb(dfd);
}

/* A PNG of output/ that r's cell made. */
static void made_png(struct result *r, const char *path, uint64_t size)
{
    r->artifacts = realloc(r->artifacts, (r->n_artifacts + 1) * sizeof *r->artifacts);
    r->artifacts[r->n_artifacts++] = (struct result_artifact){strdup(path), size, strdup("image/png"), NULL, RESULT_ART_NEW};
}

static const char *path_str(json_object *o, const char *path)
{
    /* "cells.1.outputs.0.output_type": keys and indexes, dot-separated. */
    char copy[256];
    snprintf(copy, sizeof copy, "%s", path);
    for (char *save = NULL, *k = strtok_r(copy, ".", &save); o && k; k = strtok_r(NULL, ".", &save)) {
        if (json_object_is_type(o, json_type_array))
            o = json_object_array_get_idx(o, (size_t)atoi(k));
        else if (!json_object_object_get_ex(o, k, &o))
            o = NULL;
    }
    return o ? json_object_get_string(o) : "(none)";
}

static void test_out(void)
{
    char dir[] = "/tmp/test-nb-XXXXXX";
    ok(mkdtemp(dir) != NULL, "a directory for output/");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    struct result r;

    cell_result(&r, 1, "hello\n", NULL, NULL, RESULT_STATUS_OK);
    json_object_put(append(dfd, &r, "print('hello')\nprint('more')", 0, "a first cell makes notebook.ipynb"));
    /* A PNG the cell made (its name cell-2-...). */
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 1, 2};
    int fd = openat(dfd, "cell-2-figure-1.png", O_WRONLY | O_CREAT, 0644);
    discard(write(fd, png, sizeof png));
    close(fd);
    cell_result(&r, 2, NULL, NULL, "42", RESULT_STATUS_OK);
    made_png(&r, "cell-2-figure-1.png", sizeof png);
    made_png(&r, "other.png", sizeof png);
    json_object_put(append(dfd, &r, "x", 0, "a second cell is added"));
    cell_result(&r, 3, "before\n", "oops\nTraceback (most recent call last):\n  File \"<cell 3>\", line 1\nZeroDivisionError: division by zero\n",
                NULL, RESULT_STATUS_ERROR);
    json_object *nb = append(dfd, &r, "1/0", 0, "a failing cell is added");
    ok(nb != NULL, "notebook.ipynb is JSON");
    is_str(path_str(nb, "nbformat"), "4", "nbformat 4");
    is_str(path_str(nb, "nbformat_minor"), "5", "minor 5 (cells have ids)");
    json_object *cells = NULL;
    ok(json_object_object_get_ex(nb, "cells", &cells) && json_object_array_length(cells) == 3, "three cells");
    is_str(path_str(nb, "cells.0.source.0"), "print('hello')\n", "the code as lines");
    is_str(path_str(nb, "cells.0.execution_count"), "1", "its count, the kernel's cell number");
    is_str(path_str(nb, "cells.0.id"), "00000000000000000000000000000001", "an id of its run");
    is_str(path_str(nb, "cells.0.outputs.0.name"), "stdout", "what it printed, a stream output");
    is_str(path_str(nb, "cells.0.outputs.0.text.1"), "more\n", "consecutive chunks of a stream made one");
    is_str(path_str(nb, "cells.1.outputs.0.output_type"), "execute_result", "a value: execute_result");
    is_str(path_str(nb, "cells.1.outputs.0.data.text/plain.0"), "42", "with its text");
    is_str(path_str(nb, "cells.1.outputs.1.data.image/png"), "iVBORw0KGgoAAQI=", "the cell's PNG as base64");
    is_str(path_str(nb, "cells.1.outputs.2.output_type"), "(none)", "not a PNG of another cell's name");
    is_str(path_str(nb, "cells.2.outputs.0.name"), "stdout", "a failing cell: its stdout");
    is_str(path_str(nb, "cells.2.outputs.1.text.0"), "oops\n", "its stderr before the traceback");
    is_str(path_str(nb, "cells.2.outputs.2.name"), "stdout", "its stdout after");
    is_str(path_str(nb, "cells.2.outputs.3.output_type"), "error", "then its error");
    is_str(path_str(nb, "cells.2.outputs.3.ename"), "ZeroDivisionError", "ename");
    is_str(path_str(nb, "cells.2.outputs.3.evalue"), "division by zero", "evalue");
    is_str(path_str(nb, "cells.2.outputs.3.traceback.0"), "Traceback (most recent call last):", "the traceback's lines, no newline");
    is_str(path_str(nb, "cells.2.outputs.3.traceback.2"), "ZeroDivisionError: division by zero", "to the exception");
    json_object_put(nb);

    /* A symlink in its place (a script of the workspace may make one): not
     * followed, replaced by a new notebook. */
    char target[64];
    snprintf(target, sizeof target, "%s/secret", dir);
    fd = open(target, O_WRONLY | O_CREAT, 0644);
    discard(write(fd, "{\"cells\": [], \"nbformat\": 4, \"nbformat_minor\": 5, \"x\": \"secret\"}", 63));
    close(fd);
    unlinkat(dfd, NB_OUT_NAME, 0);
    discard(symlinkat(target, dfd, NB_OUT_NAME));
    cell_result(&r, 4, "a\n", NULL, NULL, RESULT_STATUS_OK);
    nb = append(dfd, &r, "a", 0, "a cell with a symlink in the notebook's place");
    struct stat st;
    ok(fstatat(dfd, NB_OUT_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode), "the link is replaced by a file");
    ok(nb && json_object_object_get_ex(nb, "cells", &cells) && json_object_array_length(cells) == 1 &&
           !strstr(json_object_to_json_string(nb), "secret"),
       "a new notebook, nothing of the link's target");
    json_object_put(nb);
    /* Not a notebook: a new one. */
    fd = openat(dfd, NB_OUT_NAME, O_WRONLY | O_TRUNC);
    discard(write(fd, "not json", 8));
    close(fd);
    cell_result(&r, 5, "b\n", NULL, NULL, RESULT_STATUS_OK);
    nb = append(dfd, &r, "b", 0, "a cell over a file that is not a notebook");
    ok(nb && json_object_object_get_ex(nb, "cells", &cells) && json_object_array_length(cells) == 1,
       "starts a new notebook");
    json_object_put(nb);
    /* A cell that ran out of time: its error is the status and the reason. */
    cell_result(&r, 6, NULL, NULL, NULL, RESULT_STATUS_TIMEOUT);
    r.error = strdup("the cell ran longer than timeout (1 s): it was interrupted");
    nb = append(dfd, &r, "while True: pass", 0, "a cell that timed out");
    is_str(path_str(nb, "cells.1.outputs.0.ename"), "timeout", "its error's name is the status");
    is_str(path_str(nb, "cells.1.outputs.0.evalue"), "the cell ran longer than timeout (1 s): it was interrupted",
           "its value the reason");
    json_object_put(nb);

    /* NB_IMAGE_MAX: a PNG larger is left out, with a note. */
    fd = openat(dfd, "cell-7-figure-1.png", O_WRONLY | O_CREAT, 0644);
    ok(fd >= 0 && ftruncate(fd, NB_IMAGE_MAX + 1) == 0, "a PNG of NB_IMAGE_MAX and a byte (sparse)");
    close(fd);
    cell_result(&r, 7, NULL, NULL, NULL, RESULT_STATUS_OK);
    made_png(&r, "cell-7-figure-1.png", NB_IMAGE_MAX + 1);
    nb = append(dfd, &r, "big", 0, "a cell with a PNG past NB_IMAGE_MAX");
    is_str(path_str(nb, "cells.2.outputs.0.data.image/png"), "(none)", "the image is left out");
    is_str(path_str(nb, "cells.2.outputs.0.data.text/plain"), "[runmyscript] the image is left out: notebook.ipynb is at its size",
           "a note says so");
    json_object_put(nb);
    unlinkat(dfd, "cell-7-figure-1.png", 0);
    /* NB_OUT_MAX: a cell that would take the file past it is not added. */
    size_t big = NB_OUT_MAX / 2 + 1;
    char *code = malloc(big + 1);
    memset(code, 'x', big);
    code[big] = '\0';
    cell_result(&r, 8, NULL, NULL, NULL, RESULT_STATUS_OK);
    json_object_put(append(dfd, &r, code, 0, "a cell of half NB_OUT_MAX is added"));
    cell_result(&r, 9, NULL, NULL, NULL, RESULT_STATUS_OK);
    json_object_put(append(dfd, &r, code, -E2BIG, "a second one would pass NB_OUT_MAX: -E2BIG, not added"));
    free(code);
    ok(fstatat(dfd, NB_OUT_NAME, &st, 0) == 0 && st.st_size > NB_OUT_MAX / 2 && st.st_size < NB_OUT_MAX,
       "the file keeps the cells before it");

    unlinkat(dfd, NB_OUT_NAME, 0);
    unlinkat(dfd, "cell-2-figure-1.png", 0);
    unlink(target);
    close(dfd);
    rmdir(dir);
}

int main(void)
{
    test_in();
    test_failure();
    test_out();
    return tap_done();
}
