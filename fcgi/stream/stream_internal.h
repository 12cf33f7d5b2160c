/* stream_internal.h: what a worker (stream.c) and the stream process
 * (stream_proc.c) say to each other.
 *
 * The stream process listens on STATE/.streams/sock, a SOCK_SEQPACKET Unix
 * socket that the supervisor binds once and every stream process it starts
 * inherits (so a worker's connect never fails while one is being replaced:
 * it waits in the backlog). The directory is the server's alone (0700) and
 * the process also checks the peer's uid. One connection per stream; every
 * message is one datagram whose first byte says what it is:
 *
 *   worker -> process  'H' struct stream_hello, with the FastCGI connection
 *                      (FCGX_Request's ipcFd) as SCM_RIGHTS. Nothing of the
 *                      response has been written yet.
 *   process -> worker  'A': admitted; the process owns the connection from
 *                      now on (the worker closes its copy without writing:
 *                      FCGX_Detach, FCGX_Free). 'S': max_streams is
 *                      reached, 'C': the client's max_streams_per_client;
 *                      the process has closed its copy without writing, the
 *                      worker answers itself (503, 429).
 *   worker -> process  'D' + bytes: the response's next bytes (the headers
 *                      first), in order; the process frames them as
 *                      FCGI_STDOUT records of the hello's request id and
 *                      buffers them for the client, so a send never waits
 *                      for the client.
 *                      'E': the response is complete: FCGI_STDOUT's end and
 *                      FCGI_END_REQUEST follow what was sent, then the
 *                      connection is closed.
 *                      'K' + kind NUL state: the worker's part is over; the
 *                      process carries the stream on as that kind (struct
 *                      stream_kind) from state, and the worker closes its end.
 *   process -> worker  nothing more: when the client goes, or is cut (more
 *                      than stream_buffer_bytes waiting for it, or nothing
 *                      taken for stream_stall), the process closes its end,
 *                      and the worker's next send fails or its poll sees the
 *                      hang-up: the client is gone, as it would be on the
 *                      FastCGI connection itself.
 * A connection that ends (EOF) without 'E' or 'K' is a worker that died:
 * the request ends after what it sent. */
#ifndef RMS_STREAM_INTERNAL_H
#define RMS_STREAM_INTERNAL_H

#include <stdint.h>

#include "util.h"

#define STREAM_MSG_MAX (64u << 10)  /* bytes of one 'D' message's data */
#define STREAM_KIND_MAX 32          /* bytes of a kind's name */
#define STREAM_STATE_MAX (256u << 10) /* bytes of a 'K' message's state */
#define STREAM_REPLY_MS 2000        /* a worker waits this long for 'A' */
#define STREAM_SEND_MS 2000         /* ... and at most this long for room to send */

enum {
    STREAM_MSG_HELLO = 'H',
    STREAM_MSG_ADMIT = 'A',
    STREAM_MSG_FULL = 'S',
    STREAM_MSG_CLIENT_FULL = 'C',
    STREAM_MSG_DATA = 'D',
    STREAM_MSG_END = 'E',
    STREAM_MSG_KEEP = 'K',
};

struct stream_hello {
    char type;          /* STREAM_MSG_HELLO */
    char use;           /* enum stream_use */
    uint16_t fcgi_id;   /* the FastCGI request id of the connection */
    char client[65];    /* stream_client_key */
    char log_id[13];    /* the request's id in log lines */
};

#endif
