/* workspace.h: the state directory on disk: run directories with random
 * ids, path safety for names a client gives, and reaping of old runs (the
 * public part is in executor.h). Layout (doc/architecture.md, "State on
 * disk"): STATE/runs/RUNID/, STATE/sessions/SID/, STATE/envs/, STATE/cache/. */
#ifndef RMS_WORKSPACE_H
#define RMS_WORKSPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "executor.h"

/* Creates a new run directory STATE/runs/RUNID (mode 0700) with a fresh id
 * (ws_new_id with node, which may be NULL). On success *run_dir is a new
 * string (caller frees) and id is filled. */
int ws_run_create(const char *state_dir, const char *node, char id[WS_ID_MAX + 1], char **run_dir) must_check;

#endif
