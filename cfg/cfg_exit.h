/* cfg_exit.h: the program's exit statuses besides a script's own exit code,
 * which every command shares: run, fetch, upload, config (cli/) and serve,
 * FastCGI on stdin and CGI (fcgi/server/server.c). Here, beneath both front
 * doors. Named for the command line, where they are documented
 * (doc/configuration.md, Exit statuses). */
#ifndef RMS_CFG_EXIT_H
#define RMS_CFG_EXIT_H

/* sysexits.h where one fits; 120-125 after timeout(1)'s 124 and 125. */
enum {
    CLI_EXIT_USAGE = 64,          /* bad command line */
    CLI_EXIT_DATAERR = 65,        /* the script is empty, not UTF-8, too large */
    CLI_EXIT_NOINPUT = 66,        /* the script or input file cannot be read */
    CLI_EXIT_CANTCREAT = 73,      /* --out cannot be written */
    CLI_EXIT_LOW_DISK = 74,       /* the state directory's disk is below disk_reserve; retry */
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

#endif
