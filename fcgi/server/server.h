/* server.h: the program as a server: `runmyscript serve` (binds the
 * FastCGI socket and supervises pre-forked workers), FastCGI on stdin (a
 * process manager such as spawn-fcgi handed us the socket), and CGI (one
 * request from the environment and stdin). */
#ifndef RMS_SERVER_H
#define RMS_SERVER_H

#include <stdbool.h>

/* `runmyscript serve --listen unix:PATH|HOST:PORT [--workers N] [--config
 * FILE] [--set K=V]...`: argv[0] is "serve". Returns the exit status. */
int server_serve(int argc, char **argv, const char *self);

/* True when fd 0 is a listening socket: a FastCGI process manager started
 * us. */
bool server_stdin_is_fastcgi(void);

/* Serves FastCGI requests on fd 0 until SIGTERM (one process; the manager
 * starts as many as it wants). Returns the exit status. */
int server_fastcgi_stdin(const char *self);

/* Serves the one CGI request in the environment. Returns the exit status. */
int server_cgi(const char *self);

#endif
