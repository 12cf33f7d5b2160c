/* cfg_outcome.h: what each front door answers for each outcome of a run or
 * a cell (enum exec_outcome): one row per outcome, beneath the web page and
 * MCP (fcgi/) and the command line (cli/), so that no door decodes an
 * errno of the executor's, and no two doors answer one outcome two ways. */
#ifndef RMS_CFG_OUTCOME_H
#define RMS_CFG_OUTCOME_H

#include <stdbool.h>

#include "executor.h"

/* JSON-RPC's "Internal error", MCP's answer to a service that failed. */
#define CFG_JSONRPC_INTERNAL_ERROR (-32603)

struct cfg_outcome {
    enum exec_outcome outcome;  /* the row's own: rows are in the enum's order */
    int http_status;            /* /api/run, /api/cell; 0: the door answers itself (STOPPED) */
    int jsonrpc_code;           /* MCP: 0, a CallToolResult (isError but for DONE), else this JSON-RPC error
                                 * (the result as its data where there is one) */
    int cli_exit;               /* `runmyscript run`'s exit status; -1: the script's own (its status) */
    bool retry;                 /* the client may try the same call again later: Retry-After, "try again" */
};

/* The row of o; an out-of-range o has FAILED's. Static. */
const struct cfg_outcome *cfg_outcome(enum exec_outcome o);

/* What the doors answer for a transfer that failed (fetch_download,
 * fetch_to_memory, fetch_mount, fetch_upload, fetch_persist: their return
 * code, FETCH_E_HTTP or a negative errno, as executor.h lists them): the
 * page's input_url and the command line's --input-url, --mount, fetch and
 * upload. (MCP's mount_file and persist_artifact answer every one with an
 * isError result naming it.) */
struct cfg_transfer {
    int rc;                     /* the transfer's return code; 0: the row of every other */
    int http_status;            /* a bad URL or a refused address 400, over a limit 413, libcurl missing 500,
                                 * else (the server, the network) 502 */
    int cli_exit;               /* a bad URL or path 64, over a limit 65, the file cannot be written 73,
                                 * libcurl missing 125, else 66 */
};
/* The row of rc (< 0). Static. */
const struct cfg_transfer *cfg_transfer(int rc);

#endif
