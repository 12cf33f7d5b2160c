/* executor/outcome.h: what came of a call of exec_run or exec_kernel_cell,
 * one value of one enum, and its name. Part of the executor's public API:
 * executor.h includes every part; executor/result.h holds it in the
 * result. */
#ifndef RMS_EXECUTOR_OUTCOME_H
#define RMS_EXECUTOR_OUTCOME_H

/* What came of a call of exec_run or exec_kernel_cell, set once by it in
 * r->outcome: the one thing a front door looks at to choose its answer
 * (cfg_outcome() maps it to an HTTP status, a JSON-RPC answer, a CLI exit
 * status); the negative errno it returns stays the cause, for logs.
 * Everything but DONE and FAILED is turned away before the script ran.
 * result_init sets FAILED. */
enum exec_outcome {
    EXEC_OUTCOME_DONE,        /* a result, recorded (r->status says how the script did); rc 0 */
    EXEC_OUTCOME_REFUSED,     /* the call is at fault (the code, the requirements, a cell's workspace or input):
                               * nothing made, r->run_id "", the reason in r->error to show as it is */
    EXEC_OUTCOME_TOO_LARGE,   /* ... the same for a size over its limit (code_bytes, input_bytes) */
    EXEC_OUTCOME_UNSUPPORTED, /* this process cannot do it (a cell without kernels here): nothing made */
    EXEC_OUTCOME_LOW_DISK,    /* the state directory's disk is below disk_reserve: nothing made; retry later */
    EXEC_OUTCOME_BUSY,        /* every run slot and queue place taken, or the session's or kernel's other call
                               * held it too long: the script never started; retry later (r->error says
                               * when) */
    EXEC_OUTCOME_STOPPED,     /* the sink's accepted() stopped it (its client went away, the front door's own
                               * work failed): nothing made, r->error not set, the front door answers */
    EXEC_OUTCOME_FAILED,      /* the service failed (r->status sandbox_error, r->error says why), before
                               * anything was made (r->run_id "": the checks could not be made) or during
                               * the run (its result recorded as far as it could be) */
    EXEC_OUTCOME_DISK_FULL,   /* ... for want of space on the state directory's disk (ENOSPC: a disk that
                               * filled past the disk_reserve guard, or with it off) */
    EXEC_OUTCOME_N            /* the number of outcomes, not one */
};
/* Its name for logs and tests ("done", "refused", "too_large", ...; static). */
const char *exec_outcome_name(enum exec_outcome o);

#endif
