/* cfg_outcome.c: the table of what the front doors answer for each
 * outcome of a run (cfg_outcome.h). */
#include "config.h"

#include "cfg_outcome.h"

#include <errno.h>

#include "cfg_exit.h"
#include "util.h"

static const struct cfg_outcome rows[] = {
    {EXEC_OUTCOME_DONE, 200, 0, -1, false},
    {EXEC_OUTCOME_REFUSED, 400, 0, CLI_EXIT_DATAERR, false},
    {EXEC_OUTCOME_TOO_LARGE, 413, 0, CLI_EXIT_DATAERR, false},
    {EXEC_OUTCOME_UNSUPPORTED, 501, 0, CLI_EXIT_USAGE, false},
    {EXEC_OUTCOME_LOW_DISK, 507, 0, CLI_EXIT_LOW_DISK, true},
    {EXEC_OUTCOME_BUSY, 503, 0, CLI_EXIT_BUSY, true},
    /* The front door stopped it itself (its client is gone, its own work
     * failed) and answers, or not, as it knows best. */
    {EXEC_OUTCOME_STOPPED, 0, 0, CLI_EXIT_CANCELLED, false},
    {EXEC_OUTCOME_FAILED, 500, CFG_JSONRPC_INTERNAL_ERROR, CLI_EXIT_SERVICE, false},
    /* A failure of the service to the HTTP doors; the command line's user,
     * who may own the disk, is told it is the disk (exit 74). */
    {EXEC_OUTCOME_DISK_FULL, 500, CFG_JSONRPC_INTERNAL_ERROR, CLI_EXIT_LOW_DISK, false},
};
_Static_assert(ARRAY_SIZE(rows) == EXEC_OUTCOME_N, "a row for every outcome");

const struct cfg_outcome *cfg_outcome(enum exec_outcome o)
{
    return (size_t)o < ARRAY_SIZE(rows) ? &rows[o] : &rows[EXEC_OUTCOME_FAILED];
}

static const struct cfg_transfer transfers[] = {
    {-EINVAL, 400, CLI_EXIT_USAGE},         /* a bad URL or an unsafe path */
    {-EACCES, 400, CLI_EXIT_NOINPUT},       /* the guard refused the address */
    {-EPROTONOSUPPORT, 400, CLI_EXIT_NOINPUT},
    {-ELOOP, 400, CLI_EXIT_NOINPUT},        /* too many redirects, or a symlink */
    {-EFBIG, 413, CLI_EXIT_DATAERR},        /* fetch_bytes, upload_bytes, mount_bytes, input_bytes */
    {-EDQUOT, 502, CLI_EXIT_DATAERR},       /* mount_files */
    {-ENOSPC, 502, CLI_EXIT_CANTCREAT},     /* the local file cannot be written */
    {-EROFS, 502, CLI_EXIT_CANTCREAT},
    {-EISDIR, 502, CLI_EXIT_CANTCREAT},
    {-ENAMETOOLONG, 502, CLI_EXIT_CANTCREAT},
    {-ENOSYS, 500, CLI_EXIT_SERVICE},       /* libcurl cannot be loaded */
    {-ENOMEM, 500, CLI_EXIT_SERVICE},
    /* FETCH_E_HTTP (the server answered with an error: a bad gateway to
     * the page), a timeout, the network, and every other. */
    {0, 502, CLI_EXIT_NOINPUT},
};

const struct cfg_transfer *cfg_transfer(int rc)
{
    size_t i = 0;
    while (transfers[i].rc && transfers[i].rc != rc)
        i++;
    return &transfers[i];
}
