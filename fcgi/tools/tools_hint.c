/* tools_hint.c: a short hint for the model beside a run's result, where
 * one helps (as PRIMS's feedback field): a run that printed nothing and
 * wrote no file; a module the script could not import (the package the
 * import map gives for it, or that the map does not know it); files
 * written outside SCRIPT_OUTPUT, which the caller does not get back; a run
 * stopped at a limit (which key, how to ask for more). None for a run that
 * printed and wrote nothing outside SCRIPT_OUTPUT. It goes into
 * structuredContent.feedback and as one line of the text, after the
 * status, never inside the log. */
#include "config.h"

#include "tools_internal.h"

#include <stdio.h>
#include <string.h>

#define HINT_MODULE_MAX 100 /* bytes of a module name quoted in a hint */

/* The module of the last "ModuleNotFoundError: No module named 'X'" in the
 * log, into mod (len bytes); false when there is none. */
static bool missing_module(const struct result *r, char *mod, size_t len)
{
    static const char needle[] = "ModuleNotFoundError: No module named '";
    const char *log = r->log.buf.data, *end = log ? log + r->log.buf.len : NULL, *hit = NULL;
    for (const char *p = log; p && p < end;) {
        const char *q = memmem(p, (size_t)(end - p), needle, sizeof needle - 1);
        if (!q)
            break;
        hit = q + sizeof needle - 1;
        p = hit;
    }
    if (!hit)
        return false;
    size_t n = 0;
    while (hit + n < end && hit[n] != '\'' && n + 1 < len && n < HINT_MODULE_MAX &&
           (hit[n] == '.' || hit[n] == '_' || (hit[n] >= '0' && hit[n] <= '9') || (hit[n] >= 'a' && hit[n] <= 'z') ||
            (hit[n] >= 'A' && hit[n] <= 'Z')))
        n++;
    if (!n || hit + n >= end || hit[n] != '\'')
        return false;
    memcpy(mod, hit, n);
    mod[n] = '\0';
    char *dot = strchr(mod, '.');
    if (dot)
        *dot = '\0'; /* the package is the top-level name */
    return true;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

const char *tools__hint(const char *data_dir, const struct result *r, char *buf, size_t len)
{
    char mod[HINT_MODULE_MAX + 1];
    if (r->limit) {
        /* The limits are named as their keys, but for the wall clock. */
        bool wall = !strcmp(r->limit, "wall_time");
        snprintf(buf, len,
                 "The run was stopped at the %s limit (server key %s). %s",
                 r->limit, wall ? "timeout" : r->limit,
                 wall ? "Pass a larger timeout (up to the server's timeout), or do less per call: work in steps, "
                        "saving what is done in the workspace."
                      : "Use less (smaller data, fewer or smaller files, less output), or ask the server's operator "
                        "to raise that key.");
        return buf;
    }
    if (r->status == RESULT_STATUS_ERROR && missing_module(r, mod, sizeof mod)) {
        /* The import map says which distribution provides a module whose
         * name is not its package's (sklearn: scikit-learn). */
        char dist[HINT_MODULE_MAX + 1];
        if (exec_requirement_for(data_dir, mod, dist, sizeof dist) == 1)
            snprintf(buf, len,
                     "Module '%s' is not installed: pass requirements=['%s'] (the package that provides it).", mod,
                     dist);
        else
            snprintf(buf, len,
                     "Module '%s' is not installed, and the import map does not know which package provides it: "
                     "pass requirements with that package (requirements=['%s'] if the package has the module's "
                     "name on the package index).",
                     mod, mod);
        return buf;
    }
    if (r->outside_files) {
        /* In a session the files stay in its workspace; a run's own
         * directory goes with the run. */
        bool session = r->workdir && r->run_dir && strcmp(r->workdir, r->run_dir);
        char names[TOOLS_HINT_MAX / 2] = "";
        size_t n = 0;
        for (size_t i = 0; i < r->n_outside_names && n < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%.60s", i ? ", " : "", r->outside_names[i]);
        snprintf(buf, len,
                 "The script wrote %llu file%s outside SCRIPT_OUTPUT (%s%s), which %s: write what you want back "
                 "into os.environ['SCRIPT_OUTPUT'].",
                 (unsigned long long)r->outside_files, r->outside_files == 1 ? "" : "s", names,
                 r->outside_files > r->n_outside_names ? ", ..." : "",
                 session ? "stay in the workspace for the next call but are not returned as artifacts"
                         : "are not returned and are removed with the run");
        return buf;
    }
    if (r->status == RESULT_STATUS_OK && r->n_artifacts == 0 && !r->value &&
        blank(r->log.buf.data ? r->log.buf.data : "", r->log.buf.len)) {
        snprintf(buf, len, "The script printed nothing and wrote no file: print() what you want to see, or write "
                           "files into os.environ['SCRIPT_OUTPUT'] to get them back.");
        return buf;
    }
    return NULL;
}
