/* test-stream.c: the stream process spoken to as a worker speaks to it
 * (stream_internal.h), with a socketpair in nginx's place: the FastCGI
 * records of a relayed response and its end, long responses cut into
 * records, a worker that dies, a kind that carries a stream on (stream_io,
 * stream_end), max_streams and max_streams_per_client ('S', 'C'), a
 * client cut past stream_buffer_bytes and after stream_stall, a malformed
 * hello, SIGTERM; and the slot files that bound the streams held where
 * there is no stream process, and stream_stall on their writes. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg.h"
#include "stream.h"
#include "stream_internal.h"
#include "memio.h"
#include "tap.h"

static char dir[] = "/tmp/rms-test-stream-XXXXXX";
static char sock_path[100]; /* (within sun_path) */

/* ------------------------------------------------------- a dummy kind */

/* "echo": writes its state as an event and ends the stream at once. */
static void *echo_init(const struct cfg *cfg)
{
    (void)cfg;
    return (void *)1;
}

static int echo_open(void *ctx, struct stream *s, const char *state, size_t len)
{
    (void)ctx;
    struct http_io *io = stream_io(s);
    int rc = io->write(io->ctx, "data: ", 6);
    rc = rc ? rc : io->write(io->ctx, state, len);
    rc = rc ? rc : io->write(io->ctx, "\n\n", 2);
    stream_end(s);
    return rc;
}

static void echo_tick(void *ctx, int64_t now)
{
    (void)ctx;
    (void)now;
}

static void echo_gone(void *ctx, struct stream *s)
{
    (void)ctx;
    (void)s;
}

static const struct stream_kind echo_kind = {"echo", 100, echo_init, echo_open, echo_tick, echo_gone};

/* ------------------------------------------------- the process, as a worker */

static pid_t start_proc(struct cfg *c, struct stream_counts *counts)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 64) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        static const struct stream_kind *const kinds[] = {&echo_kind};
        _exit(stream_proc_main(c, lfd, -1, kinds, 1, counts));
    }
    close(lfd);
    return pid;
}

/* Hands one end of a new socketpair to the process (use, client): the
 * answer's byte, the other end (nginx's) into *ng, the relay into *relay. */
static int hand(enum stream_use use, const char *client, int sndbuf, int *ng, int *relay)
{
    int sp[2];
    *ng = *relay = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
        return -errno;
    if (sndbuf) {
        setsockopt(sp[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        setsockopt(sp[0], SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof sndbuf);
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        return -errno;
    struct stream_hello h = {.type = STREAM_MSG_HELLO, .use = (char)use, .fcgi_id = 0x1234};
    snprintf(h.client, sizeof h.client, "%s", client);
    snprintf(h.log_id, sizeof h.log_id, "test");
    char cbuf[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {&h, sizeof h};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &sp[1], sizeof(int));
    if (sendmsg(fd, &mh, 0) < 0)
        return -errno;
    close(sp[1]); /* the worker's copy: closed, as FCGX_Free does */
    char r = 0;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 5000) <= 0 || recv(fd, &r, 1, 0) != 1)
        r = 0;
    *ng = sp[0];
    *relay = fd;
    return (unsigned char)r;
}

static int msg(int relay, char type, const void *data, size_t n)
{
    struct iovec iov[2] = {{&type, 1}, {(void *)data, n}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = n ? 2 : 1};
    return sendmsg(relay, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Reads what nginx's end has into raw, waiting at most ms for each read;
 * till its EOF when eof. */
static void pump_ng(int ng, struct dbuf *raw, int ms, bool eof)
{
    char buf[65536];
    for (;;) {
        struct pollfd p = {ng, POLLIN, 0};
        if (poll(&p, 1, ms) <= 0)
            return;
        ssize_t n = read(ng, buf, sizeof buf);
        if (n <= 0 || dbuf_append(raw, buf, (size_t)n) < 0)
            return;
        if (!eof)
            ms = 0;
    }
}

/* Takes the records in raw apart: the FCGI_STDOUT content into out;
 * *ended: FCGI_STDOUT's empty record, then FCGI_END_REQUEST (complete,
 * status 0), both of request 0x1234, and nothing after them; *records: how
 * many FCGI_STDOUT records had content. -1 when a record is malformed. */
static int parse_records(const struct dbuf *raw, struct dbuf *out, bool *ended, int *records)
{
    int rc = 0;
    bool eof_stdout = false;
    *ended = false;
    *records = 0;
    for (size_t off = 0; rc == 0 && off < raw->len;) {
        const unsigned char *h = (const unsigned char *)raw->data + off;
        if (raw->len - off < 8 || h[0] != 1 || ((h[2] << 8) | h[3]) != 0x1234)
            return -1;
        size_t len = (size_t)(h[4] << 8 | h[5]), pad = h[6];
        if (raw->len - off < 8 + len + pad)
            return -1;
        if (h[1] == 6 && len && !eof_stdout) {
            rc = dbuf_append(out, h + 8, len) < 0 ? -1 : 0;
            (*records)++;
        } else if (h[1] == 6 && !len) {
            eof_stdout = true;
        } else if (h[1] == 3 && len == 8 && eof_stdout && off + 16 + pad == raw->len) {
            *ended = !h[8] && !h[9] && !h[10] && !h[11] && !h[12];
        } else {
            return -1;
        }
        off += 8 + len + pad;
    }
    return rc;
}

/* Reads nginx's end to its EOF (at most 10 s between reads) and takes the
 * records apart (parse_records). */
static int read_records(int ng, struct dbuf *out, bool *ended, int *records)
{
    struct dbuf raw;
    dbuf_init(&raw, 256u << 20);
    pump_ng(ng, &raw, 10000, true);
    int rc = parse_records(&raw, out, ended, records);
    dbuf_free(&raw);
    return rc;
}

/* True when the process closed the relay within 10 s (a cut's sign). */
static bool relay_closed(int relay)
{
    struct pollfd p = {relay, POLLIN, 0};
    char c;
    return poll(&p, 1, 10000) == 1 && recv(relay, &c, 1, MSG_DONTWAIT) == 0;
}

static struct stream_counts *counts; /* the process's, in a shared page */
static char *big;                    /* 300000 bytes of letters */
static const char head[] = "Status: 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";

/* A relayed answer: its records, a long one whole, a worker that dies. */
static void test_relay(void)
{
    int ng, relay, records;
    struct dbuf out;
    bool ended;
    is_int(hand(STREAM_USE_CALL, "a", 0, &ng, &relay), 'A', "a call's stream is admitted");
    ok(msg(relay, STREAM_MSG_DATA, head, sizeof head - 1) == 0 && msg(relay, STREAM_MSG_DATA, "data: 1\n\n", 9) == 0 &&
           msg(relay, STREAM_MSG_END, NULL, 0) == 0,
       "the worker relays its answer and its end");
    dbuf_init(&out, 1u << 20);
    is_int(read_records(ng, &out, &ended, &records), 0, "nginx gets well-formed records");
    ok(out.data && !strcmp(out.data, "Status: 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n"),
       "FCGI_STDOUT holds the answer, in order");
    ok(ended, "then FCGI_STDOUT's end and FCGI_END_REQUEST (complete), and the connection closes");
    dbuf_free(&out);
    close(ng);
    close(relay);

    /* A long answer: records of at most 65535 bytes, the bytes whole. */
    is_int(hand(STREAM_USE_CALL, "a", 0, &ng, &relay), 'A', "another call");
    bool sent = true;
    struct dbuf raw;
    dbuf_init(&raw, 16u << 20);
    for (size_t off = 0; off < 300000; off += 30000) {
        sent &= msg(relay, STREAM_MSG_DATA, big + off, 30000) == 0;
        pump_ng(ng, &raw, 2000, false); /* a client that reads as it comes */
    }
    sent &= msg(relay, STREAM_MSG_END, NULL, 0) == 0;
    pump_ng(ng, &raw, 10000, true);
    dbuf_init(&out, 1u << 20);
    ok(sent && parse_records(&raw, &out, &ended, &records) == 0 && out.len == 300000 && !memcmp(out.data, big, 300000) &&
           ended,
       "300000 bytes arrive whole (in %d records)", records);
    dbuf_free(&out);
    dbuf_free(&raw);
    close(ng);
    close(relay);

    /* A worker that dies: the request ends after what it sent. */
    is_int(hand(STREAM_USE_CALL, "a", 0, &ng, &relay), 'A', "a call whose worker dies");
    discard(msg(relay, STREAM_MSG_DATA, "partial", 7));
    close(relay);
    dbuf_init(&out, 1u << 20);
    ok(read_records(ng, &out, &ended, &records) == 0 && out.data && !strcmp(out.data, "partial") && ended,
       "its relay's end ends the request after what came");
    dbuf_free(&out);
    close(ng);
}

/* A kind carries a stream on: 'K' and the kind's own writes. */
static void test_kind(void)
{
    int ng, relay, records;
    struct dbuf out;
    bool ended;
    is_int(hand(STREAM_USE_CALL, "a", 0, &ng, &relay), 'A', "a stream kept as a kind");
    discard(msg(relay, STREAM_MSG_DATA, head, sizeof head - 1));
    discard(msg(relay, STREAM_MSG_KEEP, "echo\0hello", 10));
    close(relay);
    dbuf_init(&out, 1u << 20);
    ok(read_records(ng, &out, &ended, &records) == 0 && out.data && strstr(out.data, "\r\n\r\ndata: hello\n\n") &&
           ended,
       "the kind writes through stream_io and ends it with stream_end");
    dbuf_free(&out);
    close(ng);
    is_int(hand(STREAM_USE_CALL, "a", 0, &ng, &relay), 'A', "a stream kept as an unknown kind");
    discard(msg(relay, STREAM_MSG_KEEP, "nosuch\0x", 8));
    dbuf_init(&out, 1u << 20);
    ok(read_records(ng, &out, &ended, &records) == 0 && ended, "is ended at once");
    dbuf_free(&out);
    close(ng);
    close(relay);
}

/* The caps count listens, one at a time. */
static void test_caps(void)
{
    int ngs[4], relays[4], ngc, relayc;
    is_int(hand(STREAM_USE_LISTEN, "a", 0, &ngs[0], &relays[0]), 'A', "a listen of client a");
    is_int(hand(STREAM_USE_LISTEN, "a", 0, &ngs[1], &relays[1]), 'C', "a second of a: max_streams_per_client ('C')");
    is_int(hand(STREAM_USE_LISTEN, "b", 0, &ngs[2], &relays[2]), 'A', "one of client b");
    is_int(hand(STREAM_USE_LISTEN, "c", 0, &ngs[3], &relays[3]), 'S', "one of c: max_streams ('S')");
    char c1;
    ok(recv(ngs[1], &c1, 1, MSG_DONTWAIT) == 0 && recv(ngs[3], &c1, 1, MSG_DONTWAIT) == 0,
       "a refused connection is closed unwritten (the worker answers it), before the answer");
    is_int((int)__atomic_load_n(&counts->counted, __ATOMIC_RELAXED), 2, "the counts: 2 listens");
    is_int(hand(STREAM_USE_CALL, "c", 0, &ngc, &relayc), 'A', "a call's stream is not counted");
    close(ngc);
    close(relayc);
    for (int i = 0; i < 4; i++) {
        close(ngs[i]);
        close(relays[i]);
    }
}

/* A client that takes nothing: cut past stream_buffer_bytes, and after
 * stream_stall with less. */
static void test_cuts(void)
{
    int ng, relay;
    uint64_t cut0 = __atomic_load_n(&counts->cut, __ATOMIC_RELAXED);
    is_int(hand(STREAM_USE_CALL, "d", 4096, &ng, &relay), 'A', "a call whose client reads nothing");
    for (int i = 0; i < 12; i++)
        discard(msg(relay, STREAM_MSG_DATA, big, 30000));
    ok(relay_closed(relay), "more than stream_buffer_bytes waiting: the stream is cut, the relay closed");
    close(ng);
    close(relay);
    is_int(hand(STREAM_USE_CALL, "d", 4096, &ng, &relay), 'A', "another");
    discard(msg(relay, STREAM_MSG_DATA, big, 30000));
    ok(relay_closed(relay), "nothing taken for stream_stall: cut too");
    close(ng);
    close(relay);
    is_int((long long)(__atomic_load_n(&counts->cut, __ATOMIC_RELAXED) - cut0), 2, "both counted as cut");
}

/* A malformed hello: refused, and the process goes on. */
static void test_bad_hello(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int ng, relay;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    char r = 0;
    ok(connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && send(fd, "Hx", 2, 0) == 2 && recv(fd, &r, 1, 0) >= 0 &&
           r != STREAM_MSG_ADMIT,
       "a malformed hello is not admitted");
    close(fd);
    is_int(hand(STREAM_USE_CALL, "a", 0, &ng, &relay), 'A', "and the process still takes streams");
    close(relay);
    close(ng);
}

static void test_process(void)
{
    struct cfg c;
    char err[256] = "";
    const char *sets[] = {"max_streams=2", "max_streams_per_client=1", "stream_buffer_bytes=64K", "stream_stall=1s"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "a configuration: %s", err);
    counts = mmap(NULL, sizeof *counts, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(counts, 0, sizeof *counts);
    big = malloc(300000);
    for (size_t i = 0; i < 300000; i++)
        big[i] = (char)('a' + i % 26);
    pid_t pid = start_proc(&c, counts);
    ok(pid > 0, "the stream process starts");
    test_relay();
    test_kind();
    test_caps();
    test_cuts();
    test_bad_hello();
    kill(pid, SIGTERM);
    int st = -1;
    waitpid(pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: it ends its streams and exits 0");
    unlink(sock_path);
    munmap(counts, sizeof *counts);
    free(big);
    cfg_free(&c);
}

/* --------------------------------------------------------- held streams */

/* A request as CGI's: no stream process; its peer REMOTE_ADDR. */
struct held {
    struct mem m;
    char *env[3];
    char addr[64];
    struct http_io io;
    struct stream_req sr;
    struct http_req req;
    struct http_resp resp;
};

static int held_open(struct held *h, const struct cfg *c, const char *addr, int *status)
{
    memset(h, 0, sizeof *h);
    dbuf_init(&h->m.out, 1u << 20);
    snprintf(h->addr, sizeof h->addr, "REMOTE_ADDR=%s", addr);
    h->env[0] = h->addr;
    h->env[1] = (char *)"REQUEST_METHOD=POST";
    h->io = (struct http_io){&h->m, mem_read, mem_write, mem_flush, h->env, NULL, NULL};
    stream_req_init(&h->sr, c, NULL, NULL);
    h->io.stream = &h->sr;
    http_req_init(&h->req, &h->io);
    http_resp_init(&h->resp, &h->io);
    const char *why;
    return stream_open(&h->req, &h->resp, STREAM_USE_LISTEN, status, &why);
}

static void held_close(struct held *h)
{
    ok(!stream_req_end(&h->sr), "a held stream ends here (nothing was handed over)");
    http_resp_free(&h->resp);
    dbuf_free(&h->m.out);
}

static void test_held(void)
{
    struct cfg c;
    char err[256], sets_state[300];
    snprintf(sets_state, sizeof sets_state, "state_dir=%s/state", dir);
    const char *sets[] = {sets_state, "max_streams=2", "max_streams_per_client=1", "retry_after=4s"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "a configuration: %s", err);
    mkdir(c.state_dir, 0700);
    struct held h[4];
    int status;
    is_int(held_open(&h[0], &c, "10.0.0.1", &status), 0, "a held listen of a client takes its slots");
    is_int(held_open(&h[1], &c, "10.0.0.1", &status), -EUSERS, "the client's second: max_streams_per_client");
    is_int(status, 429, "... 429");
    ok(h[1].resp.headers.data && strstr(h[1].resp.headers.data, "Retry-After: 4\r\n"), "... with Retry-After: 4");
    is_int(held_open(&h[2], &c, "10.0.0.2", &status), 0, "another client's");
    is_int(held_open(&h[3], &c, "10.0.0.3", &status), -EBUSY, "a third client's: max_streams");
    is_int(status, 503, "... 503");
    is_int((int)stream_held_count(&c), 2, "the state directory holds 2");
    for (int i = 0; i < 4; i++)
        held_close(&h[i]);
    is_int((int)stream_held_count(&c), 0, "their slots come free");
    char path[512];
    snprintf(path, sizeof path, "%s/" STREAM_DIR, c.state_dir);
    cleanup_dir DIR *d = opendir(path);
    int files = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        files += e->d_name[0] != '.';
    is_int(files, 0, "and no slot file is left");
    is_int(held_open(&h[0], &c, "10.0.0.1", &status), 0, "the client may open one again");
    held_close(&h[0]);
    cfg_free(&c);
}

/* A held stream's writes (http_io_stall): CGI's stdout a pipe whose reader
 * takes nothing, then one that takes a little at a time; a FastCGI
 * connection's send timeout. */
static void test_held_stall(void)
{
    enum { CHUNK = 4096, N = 24 };
    int p[2], saved = dup(1);
    ok(saved >= 0 && pipe(p) == 0, "a pipe for stdout");
    fflush(stdout);
    dup2(p[1], 1);
    struct http_io io;
    http_io_cgi(&io);
    http_io_stall(&io, 1000);
    char *buf = calloc(N, CHUNK);
    int full = io.write(io.ctx, buf, 1u << 20); /* more than the pipe holds, and nobody reads */
    pid_t pid = fork();
    if (pid == 0) {
        char b[CHUNK];
        for (;;) {
            usleep(100 * 1000);
            if (read(p[0], b, sizeof b) <= 0)
                _exit(0);
        }
    }
    close(p[0]);
    int64_t t0 = util_now_ms();
    int slow = io.write(io.ctx, buf, (size_t)N * CHUNK); /* a page every 100 ms: 2.4 s */
    int64_t took = util_now_ms() - t0;
    dup2(saved, 1);
    close(saved);
    close(p[1]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    http_io_stall(&io, 0);
    is_int(full, -ETIMEDOUT, "CGI: a write whose reader takes nothing for stream_stall fails");
    is_int(slow, 0, "a reader that takes some within each stream_stall gets it all");
    ok(took > 1000, "... though it took longer than one stall (%lld ms)", (long long)took);
    free(buf);

    int sp[2];
    ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0, "a socketpair for a FastCGI connection");
    http_io_fcgx(&io, NULL, NULL, NULL, sp[0]);
    http_io_stall(&io, 1500);
    struct timeval tv = {0};
    socklen_t tl = sizeof tv;
    ok(getsockopt(sp[0], SOL_SOCKET, SO_SNDTIMEO, &tv, &tl) == 0 && tv.tv_sec == 1 && tv.tv_usec == 500000,
       "FastCGI: the connection's send timeout is stream_stall (%ld.%06ld s)", (long)tv.tv_sec, (long)tv.tv_usec);
    close(sp[0]);
    close(sp[1]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    ok(mkdtemp(dir) != NULL, "temporary directory");
    snprintf(sock_path, sizeof sock_path, "%s/sock", dir);
    test_process();
    test_held();
    test_held_stall();
    ok(util_rm_rf_at(AT_FDCWD, dir) == 0, "cleanup");
    return tap_done();
}
