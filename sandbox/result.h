/* result.h: the result of a run as JSON, in the one shape every front door
 * uses (doc/architecture.md, "The result"): MCP structuredContent, /api/run, and
 * `runmyscript run --json`. */
#ifndef RMS_RESULT_H
#define RMS_RESULT_H

#include <json-c/json.h>

#include "executor.h"

/* Writes result.json and the log into the run directory, each atomically.
 * 0 or -errno. */
int result_record(const struct result *r) must_check;

/* The "network" member of the result's JSON (result_network.c): NULL
 * (JSON null) when the run had no network, else the record (caller puts
 * it); *oom set when memory ran out. */
json_object *result__network_json(const struct net_record *rec, bool *oom);
/* The other way (a kernel's cell's record, which its kernel's host sends
 * as JSON): o's counts and lists into rec (empty; its mode left as it
 * is). 0, -EINVAL for what is not such a record, -ENOMEM. */
int result__network_from_json(json_object *o, struct net_record *rec);

#endif
