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

#endif
