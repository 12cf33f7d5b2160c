/* result.h: the result of a run as JSON, in the one shape every front door
 * uses (DESIGN.md "Contracts"): MCP structuredContent, /api/run, and
 * `runmyscript run --json`. */
#ifndef RMS_RESULT_H
#define RMS_RESULT_H

#include <json-c/json.h>

#include "exec.h"
#include "fetch.h"

/* Builds the result object (caller puts it with json_object_put), or NULL on
 * ENOMEM. Every string in it is valid UTF-8: bytes that are not (a script's
 * binary output, a file name) are replaced by U+FFFD; artifact URLs are
 * percent-encoded from the raw bytes so that they still reach the file. */
json_object *result_to_json(const struct exec_result *r);

/* Serialises the result (caller frees). pretty: indented for people. */
char *result_to_string(const struct exec_result *r, bool pretty, size_t *len);

/* Writes result.json and the log into the run directory, each atomically.
 * 0 or -errno. */
int result_record(const struct exec_result *r) must_check;

/* mount_file's result: {"mounted_as", "bytes", "sha256", "mime"} (caller
 * puts it), or NULL on ENOMEM. */
json_object *result_mount_json(const struct fetch_mount *m);

/* persist_artifact's result: {"uploaded_bytes", "status"}. */
json_object *result_upload_json(const struct fetch_upload_result *u);

/* Percent-encodes a relative path for a URL: unreserved bytes and '/' stay,
 * everything else becomes %XX (caller frees). */
char *result_url_path(const char *path);

#endif
