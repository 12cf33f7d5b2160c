/* tools.h: the MCP tool table: names, descriptions, input and output
 * schemas, argument checks, and the calls into sandbox/ (exec_run for the
 * script tools, the workspace for list_dir and preview_file, fetch.c for
 * mount_file, run_code's files and persist_artifact). */
#ifndef RMS_TOOLS_H
#define RMS_TOOLS_H

#include <json-c/json.h>

#include "cfg.h"
#include "mcp.h"

#define TOOLS_MAX_REQUIREMENTS DEPS_MAX_REQUIREMENTS /* entries of run_code's requirements (64) */
#define TOOLS_REQUIREMENT_MAX DEPS_SPEC_MAX          /* bytes of one requirement (512) */
#define TOOLS_LIST_DIR_MAX 1000      /* entries list_dir returns */
#define TOOLS_TEXT_LOG_MAX (32 << 10) /* bytes of log in the text block */

/* The tools array of tools/list for a session of revision version (new
 * object, caller puts). Fixture tools only with test_fixture_tools. */
json_object *tools_list(const struct cfg *cfg, const char *version);

/* The instructions of the initialize result (static). */
const char *tools_instructions(void);

/* Calls a tool. 0 with *result a CallToolResult (a tool that failed, or
 * bad arguments, is a result with isError true); -ENOENT for an unknown
 * tool; -ECANCELED when the client cancelled the call (send nothing);
 * another -errno when the service failed (*result may then hold the
 * sandbox_error result JSON for the error's data, caller puts). */
int tools_call(struct mcp_call *call, const char *name, json_object *args, json_object **result) must_check;

#endif
