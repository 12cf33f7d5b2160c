/* form.h: a streaming multipart/form-data parser (RFC 7578, RFC 2046 5.1):
 * the body is fed in chunks of any size (a boundary may be split across
 * them anywhere), each part's data is handed on as it arrives, and nothing
 * but one part's headers is ever buffered. Every size the body controls has
 * a limit (struct form_limits, config keys form_*); a malformed body is
 * refused with a one-line reason a person can read. No HTTP in here: the
 * web front door (web.c) feeds it from the request body. */
#ifndef RMS_FORM_H
#define RMS_FORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg_form.h" /* the limits (struct form_limits), form_* keys of the configuration */
#include "util.h"

#define FORM_NAME_MAX 256       /* bytes of a part's name (after unquoting) */
#define FORM_FILENAME_MAX 1024  /* bytes of a part's filename */
#define FORM_TYPE_MAX 256       /* bytes of a part's Content-Type */
#define FORM_BOUNDARY_RFC 70    /* RFC 2046: a boundary is 1 to 70 characters */

/* One part, as its headers describe it. Borrowed by the callbacks for the
 * duration of the call. */
struct form_part {
    char name[FORM_NAME_MAX + 1];        /* Content-Disposition name */
    char filename[FORM_FILENAME_MAX + 1]; /* "" when there was none (or it was empty) */
    bool is_file;                        /* a filename parameter was present, even empty */
    char content_type[FORM_TYPE_MAX + 1]; /* "" when absent */
    uint64_t index;                      /* 0, 1, ... in body order */
    uint64_t bytes;                      /* data handed on so far */
};

/* What the parser calls. Each may be NULL. A callback that returns a
 * negative errno stops the parse: form_feed returns it, with the reason the
 * callback wrote (form_fail) or a generic one. */
struct form_callbacks {
    void *ctx;
    int (*part_begin)(void *ctx, const struct form_part *p);
    int (*part_data)(void *ctx, const struct form_part *p, const char *data, size_t len);
    int (*part_end)(void *ctx, const struct form_part *p);
};

enum form_state {
    FORM_PREAMBLE,   /* before the first delimiter */
    FORM_AFTER_DELIM, /* just after "--boundary": "--", padding, or CRLF */
    FORM_PADDING,    /* transport padding after a delimiter, until CRLF */
    FORM_PADDING_LF, /* saw the CR of that CRLF */
    FORM_CLOSE_DASH, /* saw one '-' after the delimiter */
    FORM_HEADERS,    /* collecting one part's header block */
    FORM_BODY,       /* a part's data */
    FORM_EPILOGUE,   /* after the close delimiter: ignored */
    FORM_FAILED,
};

struct form_parser {
    struct form_limits lim;
    struct form_callbacks cb;
    char delim[4 + FORM_BOUNDARY_RFC + 1];  /* "\r\n--" BOUNDARY */
    size_t delim_len;
    size_t match;             /* bytes of delim matched so far */
    enum form_state state;
    struct dbuf headers;      /* the current part's header block */
    struct form_part part;
    uint64_t parts;
    bool in_part;             /* part_begin was called, part_end not yet */
    int rc;                   /* the refusal every later call returns */
    char err[256];
};

/* Parses the boundary out of a Content-Type value ("multipart/form-data;
 * boundary=..."; quoted or not) and readies p. 0; -EINVAL (not
 * multipart/form-data, no boundary, a boundary longer than 70 bytes or
 * with characters RFC 2046 does not allow) with the reason in
 * form_error(p). form_free(p) afterwards in every case. cb is
 * copied. */
int form_init(struct form_parser *p, const char *content_type, const struct form_limits *lim,
              const struct form_callbacks *cb) must_check;
void form_free(struct form_parser *p);

/* Feeds the next len bytes of the body. 0, or once a part of the body is
 * refused: -EINVAL (malformed), -E2BIG (a limit), or a callback's error;
 * every later call returns the same. */
int form_feed(struct form_parser *p, const char *data, size_t len) must_check;

/* The body ended: 0 when the close delimiter ("--BOUNDARY--") was seen,
 * else -EINVAL (the body is cut short). */
int form_finish(struct form_parser *p) must_check;

/* The reason of the last refusal, one line (borrowed). "" when none. */
const char *form_error(const struct form_parser *p);

/* For callbacks: records a reason (printf-style) for the error they are
 * about to return. */
void form_fail(struct form_parser *p, const char *fmt, ...) printf_like(2, 3);

#endif
