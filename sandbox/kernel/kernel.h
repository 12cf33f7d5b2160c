/* kernel.h: the parts of a kernel (a live Python per workspace) beneath
 * the code of this folder that runs it (kernel_cell.c, kernel_host*.c, kernel_proc.c):
 * where a workspace's kernel lives on disk, the messages between a worker
 * and a kernel's host and between the host and its kernel, the numbered
 * slots that bound max_kernels, each host's counters, and the calls that
 * end a kernel from any process (reset, end, eviction). No process is
 * started here and no jail made. */
#ifndef RMS_KERNEL_H
#define RMS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "executor.h"

/* STATE/kernels/KEY/: one directory per workspace that had a kernel, KEY
 * the first 32 hex digits of the SHA-256 of the workspace's real path:
 *   lock     flock'd by the kernel's host for its life (free: no kernel)
 *   sock     the host's socket (the directory is the server's, 0700)
 *   state    the host's counters, written in place (struct kernel_state)
 *   ended    why the last kernel ended, one line, for the next one's reason
 *   job/     the kernel's run directory: script.py (display.py and
 *            kernel.py), input; bound read-only at /job
 *   site/    the kernel's extra directory: packages added to the live
 *            kernel (hard links to store entries' files), the server's,
 *            bound read-only at /job/site (job/site/ is its mount point;
 *            the fallback reads it at its path), emptied at each start
 * STATE/.kernels/slot.N: max_kernels lock files; a host holds one. */
#define KERNEL_DIR "kernels"
#define KERNEL_SLOTS_DIR ".kernels"
#define KERNEL_KEY_LEN 32
#define KERNEL_STATE_LEN 160      /* bytes of a state file, always (written in place) */
#define KERNEL_REASON_MAX 512     /* bytes of a reason */

/* The kernel's directory for workspace into out (PATH_MAX bytes), its key
 * into key (KERNEL_KEY_LEN + 1). 0, -ENOENT (no such workspace) or
 * -ENAMETOOLONG. */
int kernel_dir(const char *state_dir, const char *workspace, char *out, size_t outlen, char key[KERNEL_KEY_LEN + 1])
    must_check;

/* ------------------------------------------- a worker and a kernel's host */

/* Frames on the host's socket: a type byte, a 4-byte length (host order:
 * both ends are this program on this machine), the payload. */
enum kernel_msg {
    KERNEL_MSG_INFO = 'I',      /* worker: what is the kernel? host: {"env", "requirements", "cells", ...} */
    KERNEL_MSG_CELL = 'C',      /* worker: a cell (JSON header) */
    KERNEL_MSG_RESTART = 'R',   /* worker: a new kernel with this environment (JSON), then the cell */
    KERNEL_MSG_ADD = 'P',       /* worker: this environment's packages into the live kernel ({"env",
                                 * "requirements"}); host: ACK {"ok", "added", "reason"} */
    KERNEL_MSG_INTERRUPT = 'X', /* worker: the cell is cancelled */
    KERNEL_MSG_END = 'E',       /* anyone: end the kernel ({"reason", "busy_too", "say"}) */
    KERNEL_MSG_OUTPUT = 'O',    /* host: a chunk of output: a stream byte, then the bytes */
    KERNEL_MSG_DONE = 'D',      /* host: the cell's end (JSON) */
    KERNEL_MSG_ACK = 'A',       /* host: the END is done, or refused ({"ok": false}) */
};
#define KERNEL_FRAME_MAX (280u * 1024 * 1024) /* past code_bytes' ceiling and a value's */

/* Sends one frame. 0 or -errno. */
int kernel_send(int fd, enum kernel_msg type, const void *data, size_t len) must_check;
/* Sends a JSON object as one frame (o borrowed). 0 or -errno. */
int kernel_send_json(int fd, enum kernel_msg type, json_object *o) must_check;
/* Receives one frame of at most max bytes, waiting at most timeout_ms (< 0:
 * for ever): 0 with *type and *data (NUL-terminated, caller frees) and
 * *len; -EPIPE at the end of the stream; -ETIMEDOUT; -EMSGSIZE (the
 * payload is left unread: the stream is lost, close it); -errno. */
int kernel_recv(int fd, int64_t timeout_ms, size_t max, char *type, char **data, size_t *len) must_check;

/* Connects to the host of the kernel in dir: an fd, or -ENOENT when no host
 * listens there. */
int kernel_connect(const char *dir) must_check;
/* A kernel's network as the host tells it and a cell compares it: a
 * call's exec_spec.network, with NULL and "on" (the server's) as "". */
const char *kernel_network_key(const char *network);

/* ----------------------------------------- a host and its kernel's loop */

/* Frames on the kernel's channel (sandbox/kernel/kernel.py): a 4-byte
 * big-endian length and a JSON object. */
int kernel_chan_send(int fd, json_object *o) must_check;
/* One frame of at most max bytes into *o (caller puts), waiting at most
 * timeout_ms: 0, -EPIPE (the kernel is gone), -ETIMEDOUT, -EPROTO (not a
 * JSON object), -EMSGSIZE, -errno. The kernel is the user's code: nothing
 * in a frame is trusted. */
int kernel_chan_recv(int fd, int64_t timeout_ms, size_t max, json_object **o) must_check;

/* The kernel's hello: one byte with a pidfd of the kernel's process (in
 * any namespace: the host signals it through it) into *pidfd. 0, -EPIPE,
 * -ETIMEDOUT, -EPROTO (no descriptor came), -errno. */
int kernel_chan_recv_fd(int fd, int64_t timeout_ms, int *pidfd) must_check;

/* kernel.py, the kernel's loop (built in): the host writes it after
 * sandbox/jail/display.py (jail_py_display) as the kernel's script. */
extern const char kernel__py_kernel[];

/* ------------------------------------------------------- a host's state */

/* What each host shows of its kernel, in KEY/state. */
struct kernel_state {
    pid_t host;                 /* the host's pid */
    bool busy;                  /* a cell runs */
    uint64_t memory;            /* what the kernel holds, bytes */
    int64_t last_used;          /* util_wall_ms() of the last cell's end (or the kernel's start) */
    uint64_t cells;
};
/* Writes s over the open state file fd (in place, KERNEL_STATE_LEN bytes).
 * 0 or -errno. */
int kernel_state_write(int fd, const struct kernel_state *s) must_check;
/* Reads dir's state. 0, -ENOENT, -EINVAL (not a state file). */
int kernel_state_read(const char *dir, struct kernel_state *s) must_check;
/* True while a host holds dir's lock. */
bool kernel_alive(const char *dir);

/* Why dir's last kernel ended (reason, KERNEL_REASON_MAX bytes), written
 * by its host as it ends, or "" when it left none. kernel_ended_take reads
 * it and removes it. */
int kernel_ended_write(const char *dir, const char *reason) must_check;
void kernel_ended_take(const char *dir, char *reason, size_t n);

/* ------------------------------------------------------------- slots */

/* Takes one of max slot files (STATE/.kernels/slot.N): its fd (held by the
 * host for the kernel's life), or -EBUSY when all are held, -errno. */
int kernel_slot_take(const char *state_dir, uint32_t max) must_check;

/* Ends the least recently used idle kernel but the one in except_dir (may
 * be NULL), saying reason to its next cell: 1 when one was ended, 0 when
 * none could be (every other kernel is busy), -errno. Waits for its host
 * to be gone. */
int kernel_evict_lru(const char *state_dir, const char *except_dir, const char *reason, int64_t wait_ms) must_check;

/* The memory of every live kernel but except_dir's, summed. */
uint64_t kernel_memory_others(const char *state_dir, const char *except_dir);

/* Asks the host in dir to end its kernel (reason for its next cell; with
 * busy_too even while a cell runs) and waits for the host to be gone, at
 * most wait_ms. 0 (also when no host was there), -EBUSY (a cell runs and
 * busy_too is false), -ETIMEDOUT, -errno. */
int kernel_end_at(const char *dir, const char *reason, bool busy_too, int64_t wait_ms) must_check;

#endif
