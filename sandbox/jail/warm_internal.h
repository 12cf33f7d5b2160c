/* warm_internal.h: what the warm pool's files share (warm_pool.c, and
 * warm_learn.c beneath it): what the pool knows of each environment. No
 * file outside jail/ includes it. */
#ifndef RMS_WARM_INTERNAL_H
#define RMS_WARM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "strv.h"
#include "executor.h"
#include "warm.h"

#define WARM_LEARNED "learned"       /* under STATE/.warm: what the pool learned, kept across restarts */
#define WARM_LEARNED_MAX (1u << 20)  /* bytes of that file read back */
#define WARM_REPORT_MAX 65536        /* bytes of one message of a zygote to the pool (zygote.py's) */
#define WARM_SKIP_WHY 64             /* bytes of why a module was skipped */

/* What the pool knows of one environment: what its runs import, what a
 * zygote of it could not import safely, what its last zygote imported, how
 * often its runs came (per kind: plain, and a session's with /job). */
struct warm_env {
    char env[PATH_MAX];
    struct strv mods;         /* to import, in order: warm_modules, then what its runs import */
    struct strv skipped;      /* "NAME WHY": never imported again in it */
    char *imported;                /* what its last zygote imported, space-separated (owned); NULL: none yet */
    uint64_t uses[2];              /* runs asked for, [job] */
    int64_t too_big;               /* its zygote alone passed warm_memory then: none until warm_idle later */
};

struct warm_learning {
    const char *dir;               /* STATE/.warm (borrowed) */
    const char *modules_cfg;       /* warm_modules (borrowed) */
    struct warm_env *v;
    size_t n;
    bool dirty;                    /* the learned file is behind */
    int64_t written;               /* when it was last written */
};

/* The environment env's entry; with make, a new one (warm_modules first)
 * when there is none. NULL when there is none (or no memory). Borrowed:
 * valid until the next call that makes one. */
struct warm_env *warm__env_of(struct warm_learning *l, const char *env, bool make);
/* Adds the run's imports (a \0-separated list ending in \0\0, at most
 * len bytes) to e's, and counts the run (job: a session's). True when the
 * list grew. */
bool warm__learn(struct warm_learning *l, struct warm_env *e, const char *imports, size_t len, bool job);
/* What a zygote of e imports: e's modules but the skipped ones, joined with
 * commas, into b. 0 or -errno. */
int warm__modules_for(const struct warm_env *e, struct dbuf *b) must_check;
/* A zygote's report (zygote.py's imp()): 'i' and what it imported, 's' or
 * 'u' and "NAME WHY" skipped ('u': unsafe, the zygote ends and must be
 * started again without it). Returns the message's kind, or 0 for one
 * that means nothing. */
char warm__report(struct warm_learning *l, struct warm_env *e, const char *msg, size_t len);
/* The modules skipped in every environment. */
unsigned warm__skipped_count(const struct warm_learning *l);
/* The environments most used, with their kind, for a pool that starts:
 * up to max (env, job) pairs whose environment is still there, most used
 * first. Returns how many; the entries are borrowed. */
size_t warm__most_used(struct warm_learning *l, size_t max, struct warm_env **envs, bool *jobs);
/* Reads STATE/.warm/learned back (a pool that starts); what it cannot read
 * is left out. */
void warm__load(struct warm_learning *l);
/* Writes it (a new file renamed over it, without an fsync: the pool's
 * loop never waits for the disk) when it is behind: now, or with lazy at most every WARM_LEARNED_EVERY_MS
 * (a run's count alone makes it behind). */
void warm__save(struct warm_learning *l, bool lazy);
void warm__learning_free(struct warm_learning *l);

#endif
