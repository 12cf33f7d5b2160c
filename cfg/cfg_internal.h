/* cfg_internal.h: what the configuration's parts (cfg_keys.c: the table of
 * keys, cfg.c: reading it, cfg_dump.c: printing it and its documentation,
 * cfg_serve.c: what serve derives from it, cfg_parse.c: values as text)
 * share. */
#ifndef RMS_CFG_INTERNAL_H
#define RMS_CFG_INTERNAL_H

#include "cfg.h"

/* Every key: tables of rows (common/key.h), each row's field at base plus
 * its offset in struct cfg, in the order `runmyscript config` prints them:
 * cfg_keys.c's own rows, the run limits, fetch_allow, the transfer limits. */
struct cfg__table {
    const struct key_def *rows;
    const size_t *n;
    size_t base; /* offsetof(struct cfg, the struct the rows describe) */
};
extern const struct cfg__table cfg__tables[];
extern const size_t cfg__tables_n;

/* log_level's values, in the order of enum log_level, NULL-terminated. */
extern const char *const cfg__levels[];

/* A whole number (digits, blanks around them), cfg_parse.c. 0 or -EINVAL. */
int cfg__parse_count(const char *s, uint64_t *v) must_check;

/* A duration in the largest unit that holds it exactly (24h, 1m, 1500ms),
 * a size in the largest binary unit (96M, 512K): as the documentation
 * writes them and the parsers read them back (cfg_dump.c). */
void cfg__format_ms(uint64_t ms, char *out, size_t n);
void cfg__format_size(uint64_t v, char *out, size_t n);

/* The queue places of max_queued_runs = auto, beside running run slots. */
uint32_t cfg__queue_auto(uint32_t running);

#endif
