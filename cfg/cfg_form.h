/* cfg_form.h: the limits of a multipart/form-data body (POST /api/run),
 * each a configuration key, form_* (doc/web.md): struct cfg holds them, and
 * the form parser (fcgi/http/form.h) keeps to them. Here, beneath both, so that
 * the configuration includes nothing of the front door that parses. */
#ifndef RMS_CFG_FORM_H
#define RMS_CFG_FORM_H

#include <stdint.h>

/* Crossing one is -E2BIG (HTTP 413) with the key named in the reason. */
struct form_limits {
    uint64_t fields;          /* form_fields: parts in one body */
    uint64_t field_bytes;     /* form_field_bytes: bytes of a part without a filename */
    uint64_t file_bytes;      /* form_file_bytes: bytes of a part with a filename */
    uint64_t header_bytes;    /* form_header_bytes: bytes of one part's header block */
};

/* Fills l with the defaults: 16 fields, 8 MiB a field, 64 MiB a file,
 * 8 KiB of headers a part. (The boundary has RFC 2046's own ceiling, 70
 * bytes: not a setting.) */
static inline void form_limits_default(struct form_limits *l)
{
    l->fields = 16;
    l->field_bytes = 8ull << 20;
    l->file_bytes = 64ull << 20;
    l->header_bytes = 8ull << 10;
}

#endif
