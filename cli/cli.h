/* cli.h: the command-line front door (`runmyscript run`, `fetch`, `upload`,
 * `config`, `check-sandbox`); its exit statuses are cfg/cfg_exit.h's. */
#ifndef RMS_CLI_H
#define RMS_CLI_H

#include "cfg_exit.h" /* the exit statuses, CLI_EXIT_*, which serve shares */

/* `runmyscript run ...`: argv[0] is "run". self: the program's path. Returns
 * the exit status. */
int cli_run(int argc, char **argv, const char *self);

/* `runmyscript config [--config FILE] [--set K=V]...`: prints every key and
 * its effective value. */
int cli_config(int argc, char **argv, const char *self);

/* `runmyscript fetch URL DEST [--session DIR]`: downloads URL to the file
 * DEST, or with --session mounts it at DEST under DIR/workspace/mounts/
 * (mount_file), and prints the result as one line of JSON. A failed
 * transfer exits with cfg_transfer()'s status. */
int cli_fetch(int argc, char **argv, const char *self);

/* `runmyscript upload FILE URL [--session DIR]`: HTTP PUT of FILE, or with
 * --session of DIR/workspace/output/FILE (persist_artifact); prints
 * {"uploaded_bytes", "status"}. */
int cli_upload(int argc, char **argv, const char *self);

/* `runmyscript check-sandbox [--config FILE] [--set K=V]...`: prints what
 * this host supports and the isolation runs will get. Exits 0 when runs can
 * happen, 1 when they would be refused. */
int cli_check_sandbox(int argc, char **argv, const char *self);

#endif
