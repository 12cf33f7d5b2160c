/* test-kernel.c: the parts of a kernel beneath its host (sandbox/kernel/):
 * a workspace's place (its key from its real path), the frames between a
 * worker and a host and between a host and its kernel (their bounds, a
 * peer gone, nonsense), a host's counters, the max_kernels slots (their
 * bound, and a slot given back by a process that dies), the reason a
 * kernel leaves, and the stats of a state directory without kernels. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel.h"
#include "tap.h"

static char state[] = "/tmp/rms-kernel.XXXXXX";

static void test_dir(void)
{
    char ws[PATH_MAX], link[PATH_MAX + 8], d1[PATH_MAX], d2[PATH_MAX], k1[KERNEL_KEY_LEN + 1], k2[KERNEL_KEY_LEN + 1];
    snprintf(ws, sizeof ws, "%s/ws", state);
    snprintf(link, sizeof link, "%s/link", state);
    ok(mkdir(ws, 0755) == 0 && symlink(ws, link) == 0, "a workspace and a link to it");
    is_int(kernel_dir(state, ws, d1, sizeof d1, k1), 0, "the kernel's directory of a workspace");
    is_int(kernel_dir(state, link, d2, sizeof d2, k2), 0, "and of the link");
    is_str(k1, k2, "one workspace, one kernel, whatever the path names it");
    ok(strlen(k1) == KERNEL_KEY_LEN && strspn(k1, "0123456789abcdef") == KERNEL_KEY_LEN, "the key: 32 hex digits");
    char other[PATH_MAX], d3[PATH_MAX], k3[KERNEL_KEY_LEN + 1];
    snprintf(other, sizeof other, "%s/other", state);
    ok(mkdir(other, 0755) == 0 && kernel_dir(state, other, d3, sizeof d3, k3) == 0 && strcmp(k1, k3),
       "another workspace, another kernel");
    char none[PATH_MAX + 8];
    snprintf(none, sizeof none, "%s/none", state);
    is_int(kernel_dir(state, none, d3, sizeof d3, k3), -ENOENT, "no such workspace: -ENOENT");
}

static void test_frames(void)
{
    int sv[2];
    ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "a socket pair");
    is_int(kernel_send(sv[0], KERNEL_MSG_OUTPUT, "\1hello", 6), 0, "a frame sent");
    char type = 0;
    char *data = NULL;
    size_t len = 0;
    is_int(kernel_recv(sv[1], 1000, 1024, &type, &data, &len), 0, "and received");
    ok(type == KERNEL_MSG_OUTPUT && len == 6 && !memcmp(data, "\1hello", 6) && data[6] == '\0',
       "its type and bytes, NUL-terminated");
    free(data);
    is_int(kernel_recv(sv[1], 50, 1024, &type, &data, &len), -ETIMEDOUT, "nothing more: -ETIMEDOUT");
    is_int(kernel_send(sv[0], KERNEL_MSG_CELL, "0123456789", 10), 0, "a longer frame");
    is_int(kernel_recv(sv[1], 1000, 4, &type, &data, &len), -EMSGSIZE,
           "past the receiver's bound: -EMSGSIZE (and the stream is given up)");
    close(sv[1]);
    ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "a new pair");
    close(sv[0]);
    is_int(kernel_recv(sv[1], 1000, 1024, &type, &data, &len), -EPIPE, "the peer gone: -EPIPE");
    close(sv[1]);

    ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "another pair, for the channel");
    json_object *o = json_object_new_object(), *in = NULL;
    json_object_object_add(o, "cell", json_object_new_int(3));
    is_int(kernel_chan_send(sv[0], o), 0, "a channel frame sent");
    is_int(kernel_chan_recv(sv[1], 1000, 4096, &in), 0, "and received");
    json_object *v;
    ok(in && json_object_object_get_ex(in, "cell", &v) && json_object_get_int(v) == 3, "the same object");
    json_object_put(in);
    json_object_put(o);
    /* What a kernel's user could write there: not an object, too big, cut. */
    const unsigned char arr[] = {0, 0, 0, 2, '[', ']'};
    ok(write(sv[0], arr, sizeof arr) == (ssize_t)sizeof arr, "a frame that holds an array");
    is_int(kernel_chan_recv(sv[1], 1000, 4096, &in), -EPROTO, "is no answer: -EPROTO");
    const unsigned char junk[] = {0, 0, 0, 3, '{', '}', '}'};
    ok(write(sv[0], junk, sizeof junk) == (ssize_t)sizeof junk, "a frame with bytes after its object");
    is_int(kernel_chan_recv(sv[1], 1000, 4096, &in), -EPROTO, "is no answer either");
    const unsigned char big[] = {0x7f, 0xff, 0xff, 0xff};
    ok(write(sv[0], big, sizeof big) == (ssize_t)sizeof big, "a frame that says 2 GiB");
    is_int(kernel_chan_recv(sv[1], 1000, 4096, &in), -EMSGSIZE, "past the bound: -EMSGSIZE, nothing allocated");
    const unsigned char cut[] = {0, 0, 0, 10, '{'};
    ok(write(sv[0], cut, sizeof cut) == (ssize_t)sizeof cut, "a frame cut short");
    close(sv[0]);
    is_int(kernel_chan_recv(sv[1], 1000, 4096, &in), -EPIPE, "and the kernel gone: -EPIPE");
    int pidfd = 99;
    is_int(kernel_chan_recv_fd(sv[1], 100, &pidfd), -EPIPE, "a hello that never comes: -EPIPE");
    is_int(pidfd, -1, "and no descriptor");
    close(sv[1]);
}

static void test_state(void)
{
    char dir[PATH_MAX + 8], path[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/k1", state);
    snprintf(path, sizeof path, "%s/state", dir);
    ok(mkdir(dir, 0700) == 0, "a kernel's directory");
    struct kernel_state s = {1234, true, 5ull << 20, 1700000000000LL, 7}, r;
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    is_int(kernel_state_write(fd, &s), 0, "the counters written");
    s.busy = false;
    s.cells = 8;
    is_int(kernel_state_write(fd, &s), 0, "and again, in place");
    close(fd);
    struct stat st;
    ok(stat(path, &st) == 0 && st.st_size == KERNEL_STATE_LEN, "the file keeps its length");
    is_int(kernel_state_read(dir, &r), 0, "read back");
    ok(r.host == 1234 && !r.busy && r.memory == 5ull << 20 && r.last_used == 1700000000000LL && r.cells == 8,
       "as last written");
    ok(!kernel_alive(dir), "no host holds its lock: no kernel");
    char reason[KERNEL_REASON_MAX];
    is_int(kernel_ended_write(dir, "the last kernel exceeded memory\nand\x01more"), 0, "a reason written");
    kernel_ended_take(dir, reason, sizeof reason);
    is_str(reason, "the last kernel exceeded memoryandmore", "taken back, one line of printable text");
    kernel_ended_take(dir, reason, sizeof reason);
    is_str(reason, "", "and taken once");
}

static void test_slots(void)
{
    int a = kernel_slot_take(state, 2), b = kernel_slot_take(state, 2);
    ok(a >= 0 && b >= 0, "two slots of max_kernels = 2");
    is_int(kernel_slot_take(state, 2), -EBUSY, "a third: -EBUSY");
    close(a);
    int c = kernel_slot_take(state, 2);
    ok(c >= 0, "one given back is taken again");
    pid_t pid = fork();
    if (pid == 0) {
        close(b);
        close(c);
        _exit(kernel_slot_take(state, 2) >= 0 && kernel_slot_take(state, 2) >= 0 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "another process finds them held");
    close(b);
    close(c);
    pid = fork();
    if (pid == 0) {
        int x = kernel_slot_take(state, 1);
        kill(getpid(), SIGKILL);
        _exit(x);
    }
    waitpid(pid, &st, 0);
    int d = kernel_slot_take(state, 1);
    ok(d >= 0, "a slot of a process killed is free again");
    close(d);
    struct exec_config cfg = {.state_dir = state, .kernels = {.max = 2, .memory = 1 << 30}};
    struct exec_kernel_stats ks;
    is_int(exec_kernel_stats(&cfg, &ks), 0, "the stats of a state directory");
    ok(ks.live == 0 && ks.busy == 0 && ks.max == 2 && ks.memory_max == 1 << 30, "no kernel lives here");
    is_int(kernel_evict_lru(state, NULL, "why", 100), 0, "nothing to evict: 0");
    char ws[PATH_MAX + 8];
    snprintf(ws, sizeof ws, "%s/ws", state);
    is_int(exec_kernel_reset(&cfg, ws), 0, "a reset of a workspace without a kernel: 0");
    is_int(exec_kernel_end(&cfg, ws), 0, "its end: 0");
}

int main(void)
{
    if (!mkdtemp(state))
        return 1;
    test_dir();
    test_frames();
    test_state();
    test_slots();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", state);
    discard(system(cmd));
    return tap_done();
}
