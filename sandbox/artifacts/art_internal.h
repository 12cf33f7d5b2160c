/* art_internal.h: what the parts of the artifacts module share: the
 * walk (art.c) reads the first bytes of a file the way the MIME
 * sniffing and the summaries do (art__read_head, in art_mime.c). */
#ifndef RMS_ART_INTERNAL_H
#define RMS_ART_INTERNAL_H

#include <stddef.h>

#include "art.h"

#define ART_HEAD 4096 /* bytes read for sniffing */

/* Reads up to n bytes at offset 0 of fd (retrying EINTR, stopping at the
 * end or an error); returns how many it read. */
size_t art__read_head(int fd, unsigned char *buf, size_t n);

#endif
