/* main.c: the program `runmyscript` and its modes: `run`, `fetch`, `upload`,
 * `config` and `check-sandbox` (the CLI), `serve` (the pre-forked FastCGI
 * server), `mcp` (MCP over stdio, for a client that starts its servers as
 * commands), and with no command: FastCGI on stdin when fd 0 is a
 * listening socket (spawn-fcgi and other process managers), CGI when a web
 * server set GATEWAY_INTERFACE. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "cli.h"
#include "cli_internal.h"
#include "mcp.h"
#include "server.h"
#include "util.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: runmyscript COMMAND [options]\n"
               "\n"
               "commands:\n"
               "  run SCRIPT|-     run a Python script in a sandbox (runmyscript run --help)\n"
               "  serve            serve MCP and the web API over FastCGI (runmyscript serve --help)\n"
               "  mcp              serve MCP over stdio, for a client that starts it as a command\n"
               "  fetch URL DEST   download a file (or mount it into a session: --session DIR)\n"
               "  upload FILE URL  HTTP PUT a file (or a session's output file: --session DIR)\n"
               "  config           print the effective configuration\n"
               "  check-sandbox    print what isolation this host supports\n"
               "  --version        print the version\n"
               "  --help           this help\n"
               "\n"
               "With no command, runmyscript serves FastCGI on stdin when that is a listening\n"
               "socket, and one CGI request when GATEWAY_INTERFACE is set.\n");
}

/* `runmyscript mcp [--config FILE] [--set KEY=VALUE]...`: MCP over stdio. */
static int mcp_command(int argc, char **argv, const char *self)
{
    struct cfg cfg;
    int status = cli__cfg_from_args(
        argc, argv, self,
        "Speaks MCP over stdio, for a client that starts its servers as commands: one JSON-RPC\n"
        "message a line on stdin and stdout, the log on stderr, until stdin ends. The same tools\n"
        "and results as the server's /mcp. In a client's configuration:\n"
        "  {\"command\": \"runmyscript\", \"args\": [\"mcp\"]}\n",
        &cfg);
    if (status == CLI__GO_ON)
        status = mcp_stdio_serve(&cfg, 0, 1);
    cfg_free(&cfg);
    return status;
}

int main(int argc, char **argv)
{
    /* Nothing of ours is for a script to read: not dumpable, so that a
     * process of our uid (the fallback's script run unprivileged) cannot
     * read our memory or environment through /proc or ptrace; and the
     * command line past the command hidden (it may hold a token). */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (util_hide_argv(argc, argv, 2) < 0) {
        fprintf(stderr, "runmyscript: out of memory\n");
        return 1;
    }
    if (argc < 2) {
        if (server_stdin_is_fastcgi())
            return server_fastcgi_stdin(argv[0]);
        if (getenv("GATEWAY_INTERFACE"))
            return server_cgi(argv[0]);
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run"))
        return cli_run(argc - 1, argv + 1, argv[0]);
    if (!strcmp(cmd, "serve"))
        return server_serve(argc - 1, argv + 1, argv[0]);
    if (!strcmp(cmd, "fetch"))
        return cli_fetch(argc - 1, argv + 1, argv[0]);
    if (!strcmp(cmd, "upload"))
        return cli_upload(argc - 1, argv + 1, argv[0]);
    if (!strcmp(cmd, "config"))
        return cli_config(argc - 1, argv + 1, argv[0]);
    if (!strcmp(cmd, "mcp"))
        return mcp_command(argc - 1, argv + 1, argv[0]);
    if (!strcmp(cmd, "check-sandbox"))
        return cli_check_sandbox(argc - 1, argv + 1, argv[0]);
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("runmyscript %s\n", PACKAGE_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "runmyscript: unknown command '%s' (runmyscript --help lists them)\n", cmd);
    return CLI_EXIT_USAGE;
}
