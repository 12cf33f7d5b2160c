/* cfg_serve.c: what serve and the admission derive from the keys: the
 * number of workers, the queue's size when max_queued_runs = auto, the
 * request memory when request_memory = auto, the drain grace, the stream
 * caps (see doc/serving.md), the kernels' settings. */
#include "config.h"

#include "cfg_internal.h"

#include <unistd.h>

/* workers = 0: this many, and this many per online CPU (counting this many
 * CPUs at most). */
#define CFG_WORKERS_FIXED 4
#define CFG_WORKERS_PER_CPU 4
#define CFG_WORKERS_CPUS_MAX 64
/* drain_grace = 0: a run's timeout and kill_grace, and this for the answer
 * to reach the client. */
#define CFG_DRAIN_SLACK_MS 5000

/* max_queued_runs = auto: CFG_QUEUE_PER_CPU places per CPU, at least
 * CFG_QUEUE_MIN, at most what CFG_QUEUE_MEMORY_SHARE of the memory holds at
 * CFG_QUEUED_CALL_BYTES a call, and no more than the workers can hold
 * beside the running calls (every queued call keeps its worker). */
uint32_t cfg__queue_auto(uint32_t running)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t q = CFG_QUEUE_PER_CPU * (uint64_t)(cpus > 0 ? cpus : 1);
    if (q < CFG_QUEUE_MIN)
        q = CFG_QUEUE_MIN;
    if (pages > 0 && page > 0) {
        uint64_t by_memory = (uint64_t)pages * (uint64_t)page / CFG_QUEUE_MEMORY_SHARE / CFG_QUEUED_CALL_BYTES;
        if (q > by_memory)
            q = by_memory > 1 ? by_memory : 1;
    }
    uint64_t by_workers = CFG_WORKERS_MAX > running + CFG_SPARE_WORKERS ? CFG_WORKERS_MAX - running - CFG_SPARE_WORKERS : 1;
    if (q > by_workers)
        q = by_workers;
    return (uint32_t)(q > EXEC_MAX_SLOTS ? EXEC_MAX_SLOTS : q);
}

unsigned cfg_workers(const struct cfg *c)
{
    if (c->workers)
        return (unsigned)c->workers;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > CFG_WORKERS_CPUS_MAX)
        n = CFG_WORKERS_CPUS_MAX;
    unsigned w = CFG_WORKERS_FIXED + CFG_WORKERS_PER_CPU * (unsigned)n;
    uint64_t need = (uint64_t)exec_admit_max_running(&c->exec.admit) + c->exec.admit.max_queued + CFG_SPARE_WORKERS;
    return need > w ? (unsigned)(need > CFG_WORKERS_MAX ? CFG_WORKERS_MAX : need) : w;
}

uint64_t cfg_request_memory(const struct cfg *c)
{
    if (c->request_memory != CFG_AUTO)
        return c->request_memory;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t m = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / CFG_REQUEST_MEMORY_SHARE : 1ull << 30;
    return m > c->request_bytes ? m : c->request_bytes;
}

int64_t cfg_drain_grace_ms(const struct cfg *c)
{
    if (c->drain_grace_ms > 0)
        return c->drain_grace_ms;
    return c->exec.limits.wall_ms + c->exec.limits.kill_grace_ms + CFG_DRAIN_SLACK_MS;
}

void cfg__kernels(struct cfg *c)
{
    /* on and server are the front door's: only serve's workers have kernels. */
    c->exec.kernels.idle_ms = c->kernel_idle_ms;
    c->exec.kernels.max = (uint32_t)c->max_kernels;
    c->exec.kernels.memory = c->kernel_memory;
    c->exec.kernels.grace_ms = c->kernel_grace_ms;
}

uint64_t cfg_max_streams(const struct cfg *c, bool process)
{
    if (c->max_streams != CFG_AUTO)
        return c->max_streams;
    return process ? CFG_STREAMS_AUTO : CFG_STREAMS_AUTO_HELD;
}

uint64_t cfg_max_streams_per_client(const struct cfg *c, bool process)
{
    if (c->max_streams_per_client != CFG_AUTO)
        return c->max_streams_per_client;
    uint64_t n = cfg_max_streams(c, process) / CFG_STREAMS_PER_CLIENT_SHARE;
    return n ? n : 1;
}
