/* cli.h: the command-line front door (`runmyscript run`, `fetch`, `upload`,
 * `config`, `check-sandbox`) and its exit statuses. */
#ifndef RMS_CLI_H
#define RMS_CLI_H

/* Exit statuses besides the script's own exit code (sysexits.h where one
 * fits; 120-125 after timeout(1)'s 124 and 125). */
enum {
    CLI_EXIT_USAGE = 64,          /* bad command line */
    CLI_EXIT_DATAERR = 65,        /* the script is empty, not UTF-8, too large */
    CLI_EXIT_NOINPUT = 66,        /* the script or input file cannot be read */
    CLI_EXIT_CANTCREAT = 73,      /* --out cannot be written */
    CLI_EXIT_BUSY = 75,           /* EX_TEMPFAIL: every run slot and queue place taken; retry */
    CLI_EXIT_CONFIG = 78,         /* bad configuration */
    CLI_EXIT_INSTALL_FAILED = 120,
    CLI_EXIT_MEMORY = 121,
    CLI_EXIT_OUTPUT_LIMIT = 122,
    CLI_EXIT_WORKSPACE_LIMIT = 123,
    CLI_EXIT_TIMEOUT = 124,
    CLI_EXIT_SERVICE = 125,       /* the service itself failed: sandbox_error */
    CLI_EXIT_CANCELLED = 130,     /* Ctrl-C, like a shell */
};

/* `runmyscript run ...`: argv[0] is "run". self: the program's path. Returns
 * the exit status. */
int cli_run(int argc, char **argv, const char *self);

/* `runmyscript config [--config FILE] [--set K=V]...`: prints every key and
 * its effective value. */
int cli_config(int argc, char **argv, const char *self);

/* `runmyscript fetch URL DEST [--session DIR]`: downloads URL to the file
 * DEST, or with --session mounts it at DEST under DIR/workspace/mounts/
 * (mount_file), and prints the result as one line of JSON. A failed
 * transfer exits with cli_fetch_status(). */
int cli_fetch(int argc, char **argv, const char *self);

/* `runmyscript upload FILE URL [--session DIR]`: HTTP PUT of FILE, or with
 * --session of DIR/workspace/output/FILE (persist_artifact); prints
 * {"uploaded_bytes", "status"}. */
int cli_upload(int argc, char **argv, const char *self);

/* The exit status for a failed fetch or upload (rc from sandbox/fetch/fetch.h):
 * CLI_EXIT_USAGE for a bad URL or path, CLI_EXIT_DATAERR for a size limit,
 * CLI_EXIT_CANTCREAT when the local file cannot be written,
 * CLI_EXIT_SERVICE when libcurl is missing, CLI_EXIT_NOINPUT for the rest
 * (refused by the guard, HTTP error, timeout, network). */
int cli_fetch_status(int rc);

/* `runmyscript check-sandbox [--config FILE] [--set K=V]...`: prints what
 * this host supports and the isolation runs will get. Exits 0 when runs can
 * happen, 1 when they would be refused. */
int cli_check_sandbox(int argc, char **argv, const char *self);

#endif
