/* cfg_internal.h: what the configuration's parts (cfg.c: reading it,
 * cfg_dump.c: printing it, cfg_serve.c: what serve derives from it,
 * cfg_parse.c: values as text) share. */
#ifndef RMS_CFG_INTERNAL_H
#define RMS_CFG_INTERNAL_H

#include "cfg.h"

/* log_level's values, in the order of enum log_level. */
#define CFG__N_LEVELS 4
extern const char *const cfg__levels[CFG__N_LEVELS];

/* A whole number (digits, blanks around them), cfg_parse.c. 0 or -EINVAL. */
int cfg__parse_count(const char *s, uint64_t *v) must_check;

/* The queue places of max_queued_runs = auto, beside running run slots. */
uint32_t cfg__queue_auto(uint32_t running);

/* The kernel_* and max_kernels keys into c->exec.kernels. */
void cfg__kernels(struct cfg *c);

#endif
