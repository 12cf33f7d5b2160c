/* stream.h: streams that cost no worker. A response that stays open (an
 * MCP subscriptions/listen, a tools/call or /api/run answered as server-sent
 * events) is handed by the `serve` worker that took it to the server's one
 * stream process, which writes its FastCGI records from then on, for every
 * open stream at once (epoll): the worker is free for the next request as
 * soon as its own part is done (a listen: at once; a call: when its run
 * ends, however slowly the client reads). Where there is no stream process
 * (CGI, FastCGI on stdin) a stream is held by the process that took it,
 * within max_streams and max_streams_per_client. The worker's side is
 * stream.c, the stream process stream_proc.c; what they say to each other
 * is written down at the top of stream_internal.h. */
#ifndef RMS_STREAM_H
#define RMS_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "http.h"

#define STREAM_DIR ".streams"        /* STATE/.streams: the socket, the held streams' slots */
#define STREAM_SOCK "sock"           /* STATE/.streams/sock: the stream process listens here */
#define STREAM_KEEPALIVE_MS 15000    /* a comment on a stream the process carries, after this silence */

/* What one stream process counts, for /healthz (it alone writes them). */
struct stream_counts {
    unsigned open;        /* streams it carries now */
    unsigned counted;     /* of them, those max_streams counts (listen) */
    uint64_t buffered;    /* bytes it holds for clients that have not taken them */
    uint64_t cut;         /* streams it closed because their client stopped reading */
};

#define STREAM_SUP_OLD 8 /* stream processes carrying their streams to their end after SIGHUP */
#define STREAM_COUNT_SLOTS (STREAM_SUP_OLD + 1)

/* What serve's processes share about the stream process (in the shared
 * page of struct app_workers): written by the supervisor (on, pid,
 * restarts, the slots' owners) and each stream process (its slot of
 * counts, which the supervisor clears when it has ended), read by the
 * workers and /healthz. */
struct stream_shared {
    bool on;              /* serve has a stream process (its socket could be made) */
    int pid;              /* the stream process, 0 while there is none */
    unsigned restarts;    /* how many times it was started again after it died */
    uint64_t cut_before;  /* the cuts of stream processes that have ended */
    struct stream_counts slot[STREAM_COUNT_SLOTS];
};

/* The counts of every stream process of shared, summed (cut: all that
 * have been). */
void stream_shared_sum(const struct stream_shared *shared, struct stream_counts *out);

/* What a stream is, for the caps: a call's stream (a run: admission bounds
 * it, max_streams does not count it) or a stream that may stay open with
 * nothing to run (subscriptions/listen: counted). */
enum stream_use { STREAM_USE_CALL, STREAM_USE_LISTEN };

/* One request's stream, as its worker sees it: made by the server for each
 * request (stream_req_init) and pointed at by the request's http_io
 * (io->stream), ended after the response (stream_req_end). */
struct stream_req {
    const struct cfg *cfg;
    const struct stream_shared *shared; /* borrowed; NULL: no stream process here (CGI, FastCGI on stdin) */
    void *fcgx;                         /* the FCGX_Request to hand over, or NULL */
    int relay;                          /* the socket to the stream process once handed over, else -1 */
    bool handed_over;                   /* the stream process owns the connection */
    bool kept;                          /* ... and carries the stream on by itself */
    bool relay_failed;                  /* the stream process closed its end (the client went, or was cut) */
    int held[2];                        /* a held stream's slots (max_streams, per client), -1 */
    char held_path[2][64];              /* their names in STATE/.streams */
    struct dbuf out;                    /* bytes written, not yet sent to the stream process */
};

/* A request's stream state; shared and fcgx are NULL where there is no
 * stream process. */
void stream_req_init(struct stream_req *s, const struct cfg *cfg, const struct stream_shared *shared, void *fcgx);
/* After the response: sends what is left to the stream process and says
 * the worker's part is over, or gives back a held stream's slots. True
 * when the connection was handed over: the caller then forgets the
 * request without writing to it or closing it (FCGX_Detach, FCGX_Free). */
bool stream_req_end(struct stream_req *s);

/* The key that counts a request's streams for max_streams_per_client: its
 * peer's address (REMOTE_ADDR, as nginx passes it). Into out (at least 65
 * bytes): a hex SHA-256. */
void stream_client_key(const struct http_req *req, char *out, size_t outlen);

/* Opens the stream req's response is about to become, before a byte of it
 * is written. In serve, the connection goes to the stream process, and
 * every write of resp goes there from now on; elsewhere the stream stays
 * here (a listen takes a slot of max_streams and of its client's; a write
 * whose client takes nothing for stream_stall fails, as if it had gone).
 * 0: start the response. A refusal answers nothing but adds Retry-After
 * to resp, sets *status and *why (static) for the caller's answer:
 * -EBUSY (503: max_streams), -EUSERS (429: max_streams_per_client),
 * -EAGAIN (503: a listen in serve while its stream process is being
 * started again). */
int stream_open(struct http_req *req, struct http_resp *resp, enum stream_use use, int *status,
                const char **why) must_check;

/* The same for a call's stream (a run's: admission bounds it), which is
 * never refused: it stays with the worker when the stream process cannot
 * take it. */
void stream_open_call(struct http_req *req, struct http_resp *resp);

/* The worker's part of the stream ends here: the stream process carries it
 * on as kind (a struct stream_kind's name) from state (len bytes, the
 * kind's text). 0; -ENOTSUP when the stream was not handed over (the
 * caller carries it on itself); -EPIPE when the stream process is gone. */
int stream_keep(struct http_req *req, const char *kind, const char *state, size_t len) must_check;

/* The held streams (CGI, FastCGI on stdin) of the state directory now. */
unsigned stream_held_count(const struct cfg *cfg);

/* STATE/.streams/sock into buf. 0, or -ENAMETOOLONG. */
int stream_sock_path(const struct cfg *cfg, char *buf, size_t len) must_check;

/* ------------------------------------------------------ the stream process */

struct stream; /* one stream the process carries (stream_proc.c) */

/* A kind of stream the process carries on by itself once the worker's part
 * is over (stream_keep): mcp_listen.c's subscriptions/listen. The process
 * calls init once (ctx), open for each stream kept as this kind (0, or
 * -errno: the stream ends at once), tick every tick_ms, and gone when a
 * stream of it ended (its client left, it was cut, or the kind ended it:
 * forget it, write nothing). */
struct stream_kind {
    const char *name;
    int tick_ms;
    void *(*init)(const struct cfg *cfg);
    int (*open)(void *ctx, struct stream *s, const char *state, size_t len);
    void (*tick)(void *ctx, int64_t now_ms);
    void (*gone)(void *ctx, struct stream *s);
};

/* For a kind: an http_io whose writes go to the client of s (borrowed; its
 * gone() says whether the client left), and the end of s (the request ends
 * after what was written; gone() follows at once). A kind's data: set and
 * read back. */
struct http_io *stream_io(struct stream *s);
void stream_end(struct stream *s);
void stream_set_data(struct stream *s, void *data);
void *stream_data(const struct stream *s);

/* --------------------------------------------------- its supervisor's side */

/* serve's supervisor's view of its stream process (stream_sup.c). */
struct stream_sup {
    bool inited;
    const struct cfg *cfg;                  /* borrowed: the supervisor's, re-read in place on SIGHUP */
    struct stream_shared *shared;           /* borrowed: in the page the workers share */
    const struct stream_kind *const *kinds; /* borrowed */
    size_t nkinds;
    int sfd;                                /* the stream socket, -1: no stream process */
    int lfd;                                /* the FastCGI socket: closed in the stream process */
    struct stream_sup_proc {
        int pid, pidfd;                     /* pidfd -1: none */
        int slot;                           /* its counts in shared->slot */
    } cur, old[STREAM_SUP_OLD];
    int64_t started, again, kill_at;
    bool stopping;
};

/* Binds the stream socket STATE/.streams/sock (shared->on says whether it
 * could be made: without it streams are held by the workers) for a stream
 * process with the kinds; lfd is closed in it. Nothing is started yet. */
void stream_sup_init(struct stream_sup *s, const struct cfg *cfg, struct stream_shared *shared,
                     const struct stream_kind *const *kinds, size_t n, int lfd);
/* Starts the stream process when one is due (the first, or one that ended:
 * at once, or a second later when it died young); forgets old ones that
 * have ended. Call it on every tick and when stream_sup_pollfd is readable. */
void stream_sup_check(struct stream_sup *s, int64_t now);
/* The current stream process's pidfd (readable once it has ended), or -1. */
int stream_sup_pollfd(const struct stream_sup *s);
/* SIGHUP: the current one carries its streams to their end and takes no
 * more; a new one (with the configuration as it is now) takes the new. */
void stream_sup_reload(struct stream_sup *s);
/* The drain, once the workers are gone: the stream processes end their
 * streams (SIGTERM), and what is left SIGKILL 5 s later. True when none
 * is left. */
bool stream_sup_drain(struct stream_sup *s, int64_t now);
/* The drain's bound has passed: every stream process gets SIGKILL now, and
 * none is started again. */
void stream_sup_kill(struct stream_sup *s);
/* In a child that is not the stream process: its copies of the stream
 * socket and the pidfds are closed. */
void stream_sup_forget(struct stream_sup *s);
/* The end: the socket closed and removed. */
void stream_sup_free(struct stream_sup *s);

/* The stream process of serve (started by the supervisor): carries the
 * streams handed over on lfd (a listening SOCK_SEQPACKET socket, borrowed)
 * with the kinds (n of them) until SIGTERM or the end of the server (its
 * pidfd, server_fd, turns readable; -1: not watched): then it ends every
 * stream and returns; after SIGHUP it takes no new stream and returns once
 * the last has ended. counts: its counters, which /healthz reads.
 * Returns the exit status. */
int stream_proc_main(const struct cfg *cfg, int lfd, int server_fd, const struct stream_kind *const *kinds, size_t n,
                     struct stream_counts *counts);

#endif
