/* cell.c: a test program that drives the executor's kernels the way a
 * worker of `runmyscript serve` does (exec_kernel_cell, exec_kernel_reset,
 * exec_kernel_end, exec_kernel_stats), through real processes and real
 * jails: tests/sandbox/kernel.sh runs it. The configuration is the
 * program's (the environment's RUNMYSCRIPT_* and --set K=V); kernels are
 * on, and they end with the process RMS_TEST_SERVER names (a pid the test
 * keeps alive: it stands for serve's supervisor).
 *   cell [--set K=V]... [--cancel-after MS] [--network LIST] WORKSPACE CODE  the result's JSON on stdout
 *   reset WORKSPACE | end WORKSPACE | stats
 *   save WORKSPACE     the kernel's state saved now: its report on stdout
 *   restore WORKSPACE  the kernel reset to its saved state
 * Exit 0 when the executor returned 0, 3 when it returned -EBUSY, else 1
 * (the result or the reason on stdout either way). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "executor.h"

struct cancel {
    int64_t at; /* util_now_ms() past which the call is cancelled; 0: never */
};

static bool cancelled(void *ctx)
{
    const struct cancel *c = ctx;
    return c->at && util_now_ms() >= c->at;
}

static void output(void *ctx, enum result_stream stream, const char *data, size_t len)
{
    (void)ctx;
    /* The live output, as a front door streams it: on stderr, for the log. */
    fprintf(stderr, "[%s] %.*s", result_stream_name(stream), (int)len, data);
}

static int usage(void)
{
    fprintf(stderr, "usage: cell [--set K=V]... [--cancel-after MS] [--network LIST] WORKSPACE CODE | reset WS | end WS | "
                    "save WS | restore WS | stats\n");
    return 2;
}

static int run_cell(const struct exec_config *cfg, const char *ws, const char *code, int64_t cancel_after,
                    const char *network)
{
    struct exec_spec spec;
    exec_spec_init(&spec, cfg);
    spec.network = network;
    spec.code = code;
    spec.code_len = strlen(code);
    spec.workspace = ws;
    struct cancel c = {cancel_after ? util_now_ms() + cancel_after : 0};
    struct exec_sink sink = {.ctx = &c, .output = output, .cancelled = cancelled};
    struct result r;
    result_init(&r);
    int rc = exec_kernel_cell(&spec, &sink, &r);
    char *json = result_to_string(&r, false, NULL);
    printf("%s\n", json ? json : "null");
    if (rc < 0)
        fprintf(stderr, "exec_kernel_cell: %s (%s)\n", strerror(-rc), r.error ? r.error : "");
    free(json);
    result_free(&r);
    return rc == 0 ? 0 : rc == -EBUSY ? 3 : 1;
}

int main(int argc, char **argv)
{
    const char *sets[32];
    size_t nsets = 0;
    int64_t cancel_after = 0;
    const char *network = NULL;
    int i = 1;
    if (argc < 2)
        return usage();
    const char *cmd = argv[i++];
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "--set") && nsets < 32)
            sets[nsets++] = argv[i + 1];
        else if (!strcmp(argv[i], "--cancel-after"))
            cancel_after = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--network"))
            network = argv[i + 1];
        else
            return usage();
    }
    struct cfg c;
    char err[512];
    if (cfg_load(&c, NULL, argv[0], sets, nsets, err, sizeof err) < 0) {
        fprintf(stderr, "cell: %s\n", err);
        return 2;
    }
    log_set_level(c.log_level);
    /* (RMS_TEST_KERNELS=off: as the CLI and CGI, which have none) */
    const char *on = getenv("RMS_TEST_KERNELS");
    c.exec.kernels.on = !on || strcmp(on, "off");
    const char *server = getenv("RMS_TEST_SERVER");
    c.exec.kernels.server = server ? (pid_t)atoi(server) : 0;
    if (ws_init_state(c.exec.state_dir) < 0) {
        fprintf(stderr, "cell: cannot make %s\n", c.exec.state_dir);
        return 2;
    }
    int rc = 0;
    if (!strcmp(cmd, "cell") && i + 2 == argc) {
        rc = run_cell(&c.exec, argv[i], argv[i + 1], cancel_after, network);
    } else if ((!strcmp(cmd, "reset") || !strcmp(cmd, "end")) && i + 1 == argc) {
        int k = !strcmp(cmd, "reset") ? exec_kernel_reset(&c.exec, argv[i]) : exec_kernel_end(&c.exec, argv[i]);
        printf("%s\n", k == 0 ? "ok" : strerror(-k));
        rc = k == 0 ? 0 : 1;
    } else if (!strcmp(cmd, "save") && i + 1 == argc) {
        char *report = NULL, why[1024] = "";
        int k = exec_kernel_save(&c.exec, argv[i], &report, why, sizeof why);
        printf("{\"rc\": %d, \"reason\": \"%s\", \"report\": %s}\n", k, k < 0 ? strerror(-k) : "",
               report ? report : "null");
        fprintf(stderr, "save: %s\n", why);
        free(report);
        rc = k == 0 ? 0 : 1;
    } else if (!strcmp(cmd, "restore") && i + 1 == argc) {
        char why[1024] = "";
        int k = exec_kernel_restore(&c.exec, argv[i], why, sizeof why);
        printf("%s\n", k == 0 ? "ok" : why);
        rc = k == 0 ? 0 : 1;
    } else if (!strcmp(cmd, "stats") && i == argc) {
        struct exec_kernel_stats s;
        int k = exec_kernel_stats(&c.exec, &s);
        printf("{\"live\": %u, \"busy\": %u, \"max\": %u, \"memory\": %llu, \"memory_max\": %llu}\n", s.live, s.busy,
               s.max, (unsigned long long)s.memory, (unsigned long long)s.memory_max);
        rc = k == 0 ? 0 : 1;
    } else {
        rc = usage();
    }
    cfg_free(&c);
    return rc;
}
