/* executor.h: the executor's public API, and all a front door (MCP, the
 * web page in fcgi/, the CLI in cli/) may include from sandbox/: an
 * umbrella over a header per concept, each with its own prefix, so that a
 * name says where it lives:
 *   executor/workspace.h  ws_         the workspace and its files: ids, the
 *                                     state directory, safe paths, a file's type
 *   executor/settings.h   exec_       what a server gives all its runs (the
 *                                     limits: exec_limits.h, exec_limit_)
 *   executor/network.h    net_        a run's network: modes, the egress
 *                                     policy's rules, the record of a run
 *   executor/transfer.h   fetch_      mount_file, persist_artifact, input from a URL
 *   executor/outcome.h    exec_outcome_ what came of a call: one enum value
 *   executor/result.h     result_     a run's result, and as JSON
 *   executor/run.h        exec_       a run: exec_run, its spec and sink,
 *                                     cancelling it, checking a call
 *   executor/kernel.h     exec_kernel_ kernels: a live Python per workspace,
 *                                     a cell run in it (exec_kernel_cell)
 *   executor/probe.h      probe_      what the host and the server have
 *   executor/warm.h       exec_warm_  the warm pool beside a server
 * exec_run() is the one entry point that runs a script: it makes the run's
 * workspace, prepares the Python environment, runs the script under its
 * limits while streaming output to a sink, collects the artifacts and the
 * zip, and fills a result. No HTTP, JSON-RPC or FastCGI in here; the rest
 * of sandbox/ is internal (each module's own header). */
#ifndef RMS_EXECUTOR_H
#define RMS_EXECUTOR_H

#include "exec_limits.h"
#include "executor/workspace.h"
#include "executor/outcome.h"
#include "executor/network.h"
#include "executor/settings.h"
#include "executor/transfer.h"
#include "executor/result.h"
#include "executor/run.h"
#include "executor/kernel.h"
#include "executor/probe.h"
#include "executor/warm.h"

#endif
