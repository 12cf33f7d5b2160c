/* test-outcome.c: the table of what the front doors answer for each
 * outcome of a run (cfg_outcome): a row for every outcome, in order, and
 * answers that keep apart what a client must tell apart; and for a
 * transfer that failed (cfg_transfer). */
#include "config.h"

#include <errno.h>

#include "cfg_exit.h"
#include "cfg_outcome.h"
#include "tap.h"

int main(void)
{
    for (int i = 0; i < EXEC_OUTCOME_N; i++) {
        const struct cfg_outcome *o = cfg_outcome((enum exec_outcome)i);
        is_int(o->outcome, i, "%s: its own row", exec_outcome_name((enum exec_outcome)i));
        ok(o->http_status == 0 || (o->http_status >= 200 && o->http_status <= 599), "%s: HTTP %d",
           exec_outcome_name(o->outcome), o->http_status);
        ok(o->cli_exit == -1 || (o->cli_exit >= CLI_EXIT_USAGE && o->cli_exit <= CLI_EXIT_CANCELLED), "%s: exit %d",
           exec_outcome_name(o->outcome), o->cli_exit);
        /* Only what was turned away before it ran can be tried again as
         * it is; a success or a failure of the service cannot. */
        if (o->retry)
            ok(o->http_status >= 500 && o->jsonrpc_code == 0, "%s: retry: a 5xx, an isError result",
               exec_outcome_name(o->outcome));
    }
    is_int(cfg_outcome(EXEC_OUTCOME_N)->outcome, EXEC_OUTCOME_FAILED, "out of range: failed's row");
    is_int(cfg_outcome((enum exec_outcome)-1)->outcome, EXEC_OUTCOME_FAILED, "negative: failed's row");

    const struct cfg_outcome *done = cfg_outcome(EXEC_OUTCOME_DONE), *refused = cfg_outcome(EXEC_OUTCOME_REFUSED),
                             *large = cfg_outcome(EXEC_OUTCOME_TOO_LARGE), *busy = cfg_outcome(EXEC_OUTCOME_BUSY),
                             *disk = cfg_outcome(EXEC_OUTCOME_LOW_DISK), *failed = cfg_outcome(EXEC_OUTCOME_FAILED),
                             *unsup = cfg_outcome(EXEC_OUTCOME_UNSUPPORTED), *stopped = cfg_outcome(EXEC_OUTCOME_STOPPED);
    is_int(done->http_status, 200, "done: 200");
    is_int(done->cli_exit, -1, "done: the script's own exit status");
    is_int(done->jsonrpc_code, 0, "done: a result");
    ok(!done->retry && !failed->retry && !refused->retry, "no retry for done, failed, refused");
    is_int(refused->http_status, 400, "refused: 400");
    is_int(large->http_status, 413, "too large: 413");
    is_int(busy->http_status, 503, "busy: 503");
    is_int(disk->http_status, 507, "low disk: 507");
    is_int(failed->http_status, 500, "failed: 500");
    is_int(unsup->http_status, 501, "unsupported: 501");
    is_int(stopped->http_status, 0, "stopped: the door answers itself");
    is_int(failed->jsonrpc_code, CFG_JSONRPC_INTERNAL_ERROR, "failed: JSON-RPC internal error");
    ok(refused->jsonrpc_code == 0 && busy->jsonrpc_code == 0 && disk->jsonrpc_code == 0,
       "refused, busy, low disk: an isError result, not a JSON-RPC error");
    ok(busy->retry && disk->retry, "busy and low disk: retry");
    is_int(refused->cli_exit, CLI_EXIT_DATAERR, "refused: 65");
    is_int(large->cli_exit, CLI_EXIT_DATAERR, "too large: 65");
    is_int(busy->cli_exit, CLI_EXIT_BUSY, "busy: 75");
    is_int(disk->cli_exit, CLI_EXIT_LOW_DISK, "low disk: 74");
    is_int(failed->cli_exit, CLI_EXIT_SERVICE, "failed: 125");
    const struct cfg_outcome *full = cfg_outcome(EXEC_OUTCOME_DISK_FULL);
    ok(full->http_status == 500 && full->jsonrpc_code == CFG_JSONRPC_INTERNAL_ERROR && !full->retry,
       "disk full: to the HTTP doors a failure of the service");
    is_int(full->cli_exit, CLI_EXIT_LOW_DISK, "disk full: 74 on the command line, as low disk");
    /* What a client does next differs: fix the call, come back later (two
     * reasons), or report a failure; no two of them may look alike. */
    int http[] = {refused->http_status, busy->http_status, disk->http_status, failed->http_status, done->http_status};
    int cli[] = {refused->cli_exit, busy->cli_exit, disk->cli_exit, failed->cli_exit};
    bool distinct = true;
    for (size_t i = 0; i < sizeof http / sizeof *http; i++)
        for (size_t j = i + 1; j < sizeof http / sizeof *http; j++)
            distinct = distinct && http[i] != http[j];
    ok(distinct, "HTTP: refused, busy, low disk, failed and done all differ");
    distinct = true;
    for (size_t i = 0; i < sizeof cli / sizeof *cli; i++)
        for (size_t j = i + 1; j < sizeof cli / sizeof *cli; j++)
            distinct = distinct && cli[i] != cli[j];
    ok(distinct, "CLI: refused, busy, low disk and failed all differ");

    /* A transfer: the caller's mistake, a limit, the local disk, the
     * program, the far side. */
    static const struct {
        int rc, http, cli;
        const char *what;
    } t[] = {
        {-EINVAL, 400, CLI_EXIT_USAGE, "a bad URL"},
        {-EACCES, 400, CLI_EXIT_NOINPUT, "an address the guard refuses"},
        {-ELOOP, 400, CLI_EXIT_NOINPUT, "too many redirects"},
        {-EFBIG, 413, CLI_EXIT_DATAERR, "over fetch_bytes"},
        {-EDQUOT, 502, CLI_EXIT_DATAERR, "over mount_files"},
        {-ENOSPC, 502, CLI_EXIT_CANTCREAT, "a full local disk"},
        {-ENOSYS, 500, CLI_EXIT_SERVICE, "no libcurl"},
        {FETCH_E_HTTP, 502, CLI_EXIT_NOINPUT, "an HTTP error status"},
        {-ETIMEDOUT, 502, CLI_EXIT_NOINPUT, "a timeout"},
        {-ECONNREFUSED, 502, CLI_EXIT_NOINPUT, "a refused connection"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        const struct cfg_transfer *x = cfg_transfer(t[i].rc);
        ok(x->http_status == t[i].http && x->cli_exit == t[i].cli, "a transfer, %s: HTTP %d (%d), exit %d (%d)",
           t[i].what, x->http_status, t[i].http, x->cli_exit, t[i].cli);
    }
    return tap_done();
}
