/* memio.h: an http_io over memory, for the unit tests and the fuzz
 * targets: the request body read from a buffer (in pieces of at most
 * chunk bytes when chunk is not 0, to exercise short reads), the response
 * appended to a dbuf (whose max bounds it). */
#ifndef RMS_TEST_MEMIO_H
#define RMS_TEST_MEMIO_H

#include <string.h>
#include <sys/types.h>

#include "http.h"
#include "util.h"

struct mem {
    const char *in;
    size_t in_len, in_off;
    size_t chunk;
    struct dbuf out;
};

static inline ssize_t mem_read(void *ctx, char *buf, size_t n)
{
    struct mem *m = ctx;
    size_t left = m->in_len - m->in_off;
    if (n > left)
        n = left;
    if (m->chunk && n > m->chunk)
        n = m->chunk;
    memcpy(buf, m->in + m->in_off, n);
    m->in_off += n;
    return (ssize_t)n;
}

static inline int mem_write(void *ctx, const char *buf, size_t n)
{
    struct mem *m = ctx;
    return dbuf_append(&m->out, buf, n);
}

static inline int mem_flush(void *ctx)
{
    (void)ctx;
    return 0;
}

#endif
