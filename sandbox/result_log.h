/* result_log.h: the functions that fill a run's ordered log (struct result_log,
 * in executor.h): exec_run's reader, and the fuzz targets' stub. */
#ifndef RMS_RESULT_LOG_H
#define RMS_RESULT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor.h"

void result_log_init(struct result_log *log, uint64_t limit);
void result_log_free(struct result_log *log);
/* Appends a chunk, cutting it at the limit; on the first cut it appends the
 * truncation marker (a SYSTEM chunk). Returns the number of bytes of data
 * kept (0 .. len); *marker is set when this call added the marker. -ENOMEM
 * on allocation failure. SYSTEM chunks are always kept. */
int result_log_append(struct result_log *log, enum result_stream stream, const char *data, size_t len,
                    bool *marker) must_check;

#define RESULT_EXCEPTION_TAIL 16384 /* bytes of the log's end searched for the traceback */
#define RESULT_EXCEPTION_MAX 400    /* the exception's line is cut here */
/* The exception's line of the log's last traceback ("ValueError: bad"),
 * valid UTF-8; NULL when the log has none (or on ENOMEM). Caller frees. */
char *result_log_exception(const struct result_log *log);

#endif
