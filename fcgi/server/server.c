/* server.c: `serve`, FastCGI on stdin, and CGI.
 *
 * Theory of operation of `serve`: the parent binds the socket, maps a page
 * of counters shared with its children, binds the stream socket, and forks
 * the stream process and N workers. Each worker loops on FCGX_Accept_r (the
 * kernel hands each connection to one of them) and serves one request at a
 * time; a response that becomes a stream is handed to the stream process
 * (stream.h), so a stream holds a worker only while it has something to run
 * (a call's run), and never a listen; nginx queues connections beyond N in
 * the listen backlog. Workers keep nothing between requests (state is on
 * disk), so the parent may replace any of them at any time:
 *   - a worker that dies is restarted (after a pause if they die fast);
 *   - SIGHUP re-reads the configuration, then starts new workers with it
 *     and asks the old ones to finish what they serve and exit;
 *   - SIGTERM or SIGINT drains: workers finish their request and exit; after
 *     drain_grace those still busy get SIGINT, which cancels their runs (the
 *     run is stopped, the client gets the result with status cancelled);
 *     kill_grace + 5 s later what is left gets SIGKILL; then the stream
 *     process ends its streams and goes (SIGTERM, SIGKILL 5 s later); the
 *     drain is bounded: 15 s after that SIGKILL serve exits, whatever is left;
 *   - the stream process is started again at once when it dies (its streams
 *     are lost: their clients see them end), and on SIGHUP a new one takes
 *     the new streams while the old one carries its own to their end.
 * Workers block SIGTERM while they serve a request and take it only in
 * accept, which it interrupts (FCGI_FAIL_ACCEPT_ON_INTR); the parent sends
 * it again every half second so that one arriving just before accept is not
 * lost. */
#include "config.h"

#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcgiapp.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "cfg.h"
#include "cfg_exit.h"
#include "mcp.h"
#include "executor.h"
#include "stream.h"

#define SERVER_BACKLOG 1024
#define SERVER_TICK_MS 500        /* parent: re-send signals, reap, check */
#define SERVER_REAP_EVERY_MS 60000
#define SERVER_KILL_SLACK_MS 5000  /* after the drain's SIGINT: kill_grace and this, then SIGKILL */
#define SERVER_KILL_AGAIN_MS 1000000 /* then SIGKILL again only this much later */
#define SERVER_DRAIN_LAST_MS 15000 /* after that SIGKILL, what is left is waited for this long at most */
#define SERVER_CRASH_DEATHS 8      /* this many unplanned deaths ... */
#define SERVER_CRASH_WINDOW_MS 5000 /* ... within this long are a crash loop */
#define SERVER_ACCEPT_RETRY_US 100000 /* after a failed accept */
/* FCGX_Accept_r returns -errno, or its own codes below -SERVER_ERRNO_MAX. */
#define SERVER_ERRNO_MAX 4095
#define SERVER_UNIX_PREFIX "unix:" /* --listen unix:PATH */
#define SERVER_ERR_MAX 512
#define SERVER_SOCKET_MODE 0666

/* What a step of `serve` returns when it goes on (else an exit status). */
enum { SERVER_GO_ON = -1 };

static volatile sig_atomic_t got_term, got_hup, got_chld, cancel_all;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
    FCGX_ShutdownPending();
}

static void on_hup(int sig)
{
    (void)sig;
    got_hup = 1;
}

static void on_chld(int sig)
{
    (void)sig;
    got_chld = 1;
}

static void on_cancel_all(int sig)
{
    (void)sig;
    cancel_all = 1;
}

static void set_handler(int sig, void (*fn)(int), bool restart)
{
    struct sigaction sa = {.sa_handler = fn, .sa_flags = restart ? SA_RESTART : 0};
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void fail(const char *fmt, ...) printf_like(1, 2);
static void fail(const char *fmt, ...)
{
    va_list ap;
    fputs("runmyscript: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ------------------------------------------------------------ one worker */

/* The request loop over the FastCGI socket lfd, until SIGTERM. */
static int worker_loop(const struct app *app, int lfd)
{
    FCGX_Request req;
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    if (FCGX_Init() != 0 || FCGX_InitRequest(&req, lfd, FCGI_FAIL_ACCEPT_ON_INTR) != 0) {
        log_msg(LOG_LVL_ERROR, "FastCGI: cannot initialise the library");
        return CLI_EXIT_SERVICE;
    }
    while (!got_term) {
        sigprocmask(SIG_UNBLOCK, &term, NULL);
        int rc = got_term ? -EINTR : FCGX_Accept_r(&req);
        sigprocmask(SIG_BLOCK, &term, NULL);
        if (rc < 0) {
            if (got_term)
                break;
            if (rc == -EINTR || rc == -ECONNABORTED)
                continue;
            log_msg(LOG_LVL_ERROR, "FastCGI accept: %s", rc >= -SERVER_ERRNO_MAX ? strerror(-rc) : "protocol error");
            usleep(SERVER_ACCEPT_RETRY_US);
            continue;
        }
        if (app->workers)
            __atomic_add_fetch(&app->workers->busy, 1, __ATOMIC_RELAXED);
        struct http_io io;
        struct stream_req sr;
        http_io_fcgx(&io, req.in, req.out, req.envp, req.ipcFd);
        stream_req_init(&sr, app->cfg, app->workers ? &app->workers->streams : NULL, &req);
        io.stream = &sr;
        app_handle(app, &io);
        if (stream_req_end(&sr)) {
            /* The stream process has the connection now: forget the request
             * without a byte more (FCGX_Finish_r would end it) and close our
             * copy of the descriptor without the shutdown a close of an
             * attached request does. */
            FCGX_Detach(&req);
            FCGX_Free(&req, 1);
        } else {
            FCGX_Finish_r(&req);
        }
        if (app->workers)
            __atomic_sub_fetch(&app->workers->busy, 1, __ATOMIC_RELAXED);
    }
    FCGX_Free(&req, 1);
    return 0;
}

static void worker_signals(void)
{
    /* SIGTERM: stop after the request (it is blocked while one is served).
     * SIGINT: cancel the runs in progress now. */
    set_handler(SIGTERM, on_term, false);
    set_handler(SIGINT, on_cancel_all, true);
    set_handler(SIGHUP, SIG_IGN, false);
    set_handler(SIGCHLD, SIG_DFL, false);
    set_handler(SIGPIPE, SIG_IGN, false);
}

/* ------------------------------------------------------------- listening */

/* Whether something accepts connections on the Unix socket sa names. A
 * socket that refuses them (ECONNREFUSED: its server is gone) is stale. */
static bool socket_live(const struct sockaddr_un *sa)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    int rc;
    while ((rc = connect(fd, (const struct sockaddr *)sa, sizeof *sa)) < 0 && errno == EINTR)
        ;
    bool live = rc == 0 || errno == EAGAIN; /* EAGAIN: its backlog is full, it is alive */
    close(fd);
    return live;
}

static int listen_on(const char *spec, char *err, size_t errlen)
{
    int fd = -1;
    if (!strncmp(spec, SERVER_UNIX_PREFIX, strlen(SERVER_UNIX_PREFIX))) {
        const char *path = spec + strlen(SERVER_UNIX_PREFIX);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (!*path || strlen(path) >= sizeof sa.sun_path) {
            snprintf(err, errlen, "--listen %s: the socket path is empty or too long", spec);
            return -EINVAL;
        }
        strcpy(sa.sun_path, path);
        struct stat st;
        /* A socket left by an earlier run is replaced; anything else is not,
         * and never one that a server still listens on (another instance's:
         * taking it over would serve its clients with our configuration). */
        if (lstat(path, &st) == 0) {
            if (!S_ISSOCK(st.st_mode)) {
                snprintf(err, errlen, "--listen %s: exists and is not a socket", spec);
                return -EEXIST;
            }
            if (socket_live(&sa)) {
                snprintf(err, errlen,
                         "--listen %s: another server listens on %s; stop it first, or choose another --listen",
                         spec, path);
                return -EADDRINUSE;
            }
            unlink(path);
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, SERVER_BACKLOG) < 0) {
            int e = errno;
            snprintf(err, errlen, "--listen %s: %s", spec, strerror(e));
            if (fd >= 0)
                close(fd);
            return -e;
        }
        /* nginx's workers run as another user: the socket's directory is
         * what guards it (doc/serving.md). */
        chmod(path, SERVER_SOCKET_MODE);
        return fd;
    }
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || !colon[1] || (size_t)(colon - spec) >= sizeof host) {
        snprintf(err, errlen, "--listen %s: expected unix:PATH or HOST:PORT", spec);
        return -EINVAL;
    }
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    int grc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (grc != 0) {
        snprintf(err, errlen, "--listen %s: %s", spec, gai_strerror(grc));
        return -EINVAL;
    }
    int e = 0;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SERVER_BACKLOG) == 0)
            break;
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errlen, "--listen %s: %s", spec, strerror(e));
        return -e;
    }
    return fd;
}

/* ------------------------------------------------------------ the parent */

struct worker {
    pid_t pid;
    unsigned gen;        /* the configuration generation it runs */
    bool stopping;       /* asked to finish and exit */
};

struct supervisor {
    struct cfg cfg;
    struct app app;
    int lfd;
    struct worker *w;
    unsigned n, want;
    unsigned gen;
    const char *config_file, *self;
    const char **sets;
    size_t nsets;
    int64_t deaths[SERVER_CRASH_DEATHS]; /* times of the last unplanned deaths: a crash loop pauses */
    size_t n_deaths;
    struct exec_warm_pool warm;          /* the warm pool (exec_warm_serve) */
    int64_t warm_again;                  /* a pool that died is started again from then on */
    struct stream_sup streams;           /* the stream process (stream_sup.c) */
};

/* The warm pool: started with the server, again when it died (after a
 * pause: its runs went cold meanwhile), anew with a new configuration. */
static void warm_start(struct supervisor *s)
{
    int rc = exec_warm_serve(&s->cfg.exec, &s->warm);
    s->warm_again = 0;
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "starting the warm pool: %s; runs start cold", strerror(-rc));
}

/* A pool that ended (it is not our child: its pidfd says so) is started
 * again after a pause; its runs went cold meanwhile. */
static void warm_check(struct supervisor *s, int64_t now)
{
    if (s->warm.pid > 0 && !exec_warm_alive(&s->warm)) {
        log_msg(LOG_LVL_ERROR, "the warm pool ended; runs start cold until it is back");
        exec_warm_stop(&s->warm);
        s->warm_again = now + SERVER_TICK_MS * 4;
    }
    if (s->warm.pid < 0 && s->warm_again && now >= s->warm_again)
        warm_start(s);
}

static pid_t spawn(struct supervisor *s)
{
    pid_t pid = fork();
    if (pid < 0) {
        log_msg(LOG_LVL_ERROR, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        worker_signals();
        sigprocmask(SIG_SETMASK, &none, NULL);
        got_term = got_hup = got_chld = cancel_all = 0;
        stream_sup_forget(&s->streams); /* workers connect to the stream socket by its name */
        _exit(worker_loop(&s->app, s->lfd));
    }
    return pid;
}

static void fill(struct supervisor *s)
{
    unsigned live = 0;
    for (unsigned i = 0; i < s->n; i++)
        if (s->w[i].pid > 0 && !s->w[i].stopping)
            live++;
    for (unsigned i = 0; i < s->n && live < s->want; i++) {
        if (s->w[i].pid > 0)
            continue;
        /* Eight unplanned deaths within 5 s: a crash loop; slow down. */
        if (s->n_deaths == ARRAY_SIZE(s->deaths) && util_now_ms() - s->deaths[0] < SERVER_CRASH_WINDOW_MS) {
            log_msg(LOG_LVL_ERROR, "workers keep dying; waiting a second before the next start");
            sleep(1);
            s->n_deaths = 0;
        }
        pid_t pid = spawn(s);
        if (pid < 0)
            break;
        s->w[i] = (struct worker){pid, s->gen, false};
        live++;
    }
    s->app.workers->total = s->want;
}

static void reap(struct supervisor *s)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (unsigned i = 0; i < s->n; i++) {
            if (s->w[i].pid != pid)
                continue;
            if (!s->w[i].stopping && !got_term) {
                if (s->n_deaths == ARRAY_SIZE(s->deaths)) {
                    memmove(s->deaths, s->deaths + 1, sizeof s->deaths - sizeof s->deaths[0]);
                    s->n_deaths--;
                }
                s->deaths[s->n_deaths++] = util_now_ms();
                if (WIFSIGNALED(st))
                    log_msg(LOG_LVL_ERROR, "worker %d died of signal %d; starting another", (int)pid, WTERMSIG(st));
                else
                    log_msg(LOG_LVL_ERROR, "worker %d exited (%d); starting another", (int)pid, WEXITSTATUS(st));
                /* Its run, if it had one, has no one to record it: its
                 * sandbox died with it (PDEATHSIG); mark it failed. */
                discard(exec_mark_orphans(&s->cfg.exec));
            }
            s->w[i].pid = 0;
        }
    }
}

static unsigned alive(const struct supervisor *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->n; i++)
        if (s->w[i].pid > 0)
            n++;
    return n;
}

static void signal_all(struct supervisor *s, int sig, bool only_stopping)
{
    for (unsigned i = 0; i < s->n; i++)
        if (s->w[i].pid > 0 && (!only_stopping || s->w[i].stopping))
            kill(s->w[i].pid, sig);
}

/* Kernels live beside serve's workers only: the workers, and the tasks
 * they start, have them, and every kernel ends with this supervisor. */
static void serve_kernels(struct cfg *c)
{
    c->exec.kernels.on = true;
    c->exec.kernels.server = getpid();
}

static void reload(struct supervisor *s)
{
    struct cfg fresh;
    char err[SERVER_ERR_MAX];
    int rc = cfg_load(&fresh, s->config_file, s->self, s->sets, s->nsets, err, sizeof err);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "SIGHUP: the configuration has an error, keeping the old one: %s", err);
        cfg_free(&fresh);
        return;
    }
    /* Workers forked from now on copy the new configuration; the old ones
     * finish their request and go (they hold their own copy). */
    serve_kernels(&fresh);
    cfg_free(&s->cfg);
    s->cfg = fresh;
    s->gen++;
    for (unsigned i = 0; i < s->n; i++)
        if (s->w[i].pid > 0)
            s->w[i].stopping = true;
    signal_all(s, SIGTERM, true);
    log_msg(LOG_LVL_INFO, "SIGHUP: configuration re-read; replacing the workers");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: runmyscript serve --listen unix:PATH|HOST:PORT [--workers N] [--config FILE]\n"
               "                         [--set KEY=VALUE]...\n"
               "\n"
               "Serves MCP (/mcp), /api/run, /artifacts/ and /healthz over FastCGI, for nginx.\n"
               "  --listen      the FastCGI socket: a Unix socket path, or HOST:PORT\n"
               "  --workers N   worker processes (default: the workers key; 0 there means 4 + 4 per CPU)\n"
               "Signals: SIGTERM/SIGINT drain and exit, SIGHUP re-reads the configuration.\n");
}

/* The command line of `serve` into s and *listen_spec; --workers N goes in
 * as --set workers=N (wset holds it), so that one rule checks its range.
 * SERVER_GO_ON, or the exit status (0 after --help). */
static int serve_parse_args(int argc, char **argv, struct supervisor *s, const char **listen_spec, char *wset,
                            size_t wsetlen)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'}, {"workers", required_argument, NULL, 'w'},
        {"config", required_argument, NULL, 'c'}, {"set", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *workers = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': *listen_spec = optarg; break;
        case 'w': workers = optarg; break;
        case 'c': s->config_file = optarg; break;
        case 's': s->sets[s->nsets++] = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (!*listen_spec || optind != argc) {
        fail(*listen_spec ? "serve: unexpected argument '%s'" : "serve: --listen is required%s",
             *listen_spec ? argv[optind] : "");
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (workers) {
        snprintf(wset, wsetlen, "workers=%s", workers);
        s->sets[s->nsets++] = wset;
    }
    return SERVER_GO_ON;
}

/* Everything the workers inherit: the configuration, the state directory,
 * the listening socket, the shared counters, the worker table.
 * SERVER_GO_ON, or the exit status (the error printed; serve_stop() undoes
 * what was made in either case). */
static int serve_start(struct supervisor *s, const char *listen_spec)
{
    char err[SERVER_ERR_MAX];
    if (cfg_load(&s->cfg, s->config_file, s->self, s->sets, s->nsets, err, sizeof err) < 0) {
        fail("%s", err);
        return CLI_EXIT_CONFIG;
    }
    serve_kernels(&s->cfg);
    int rc = ws_init_state(s->cfg.state_dir);
    if (rc < 0) {
        fail("state directory %s: %s", s->cfg.state_dir, strerror(-rc));
        return CLI_EXIT_CONFIG;
    }
    s->lfd = listen_on(listen_spec, err, sizeof err);
    if (s->lfd < 0) {
        fail("%s", err);
        return CLI_EXIT_CONFIG;
    }
    /* The counters live in a shared page that every worker inherits. */
    struct app_workers *shared =
        mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        int e = errno;
        fail("mmap: %s", strerror(e));
        return CLI_EXIT_SERVICE;
    }
    memset(shared, 0, sizeof *shared);
    s->app = (struct app){.cfg = &s->cfg, .workers = shared, .mode = "serve", .cancel_all = &cancel_all};
    static const struct stream_kind *const kinds[] = {&mcp_listen_kind};
    stream_sup_init(&s->streams, &s->cfg, &shared->streams, kinds, ARRAY_SIZE(kinds), s->lfd);
    s->n = CFG_WORKERS_MAX * 2; /* room for old workers draining after SIGHUP */
    s->w = calloc(s->n, sizeof *s->w);
    if (!s->w)
        return CLI_EXIT_SERVICE;
    s->want = cfg_workers(&s->cfg);
    uint64_t need = (uint64_t)exec_admit_max_running(&s->cfg.exec.admit) + s->cfg.exec.admit.max_queued + 1;
    if (s->want < need)
        log_msg(LOG_LVL_WARN,
                "workers = %u is below max_concurrent_runs + max_queued_runs + 1 = %llu: calls past %u wait in the "
                "listen backlog instead of the queue (and are not turned away with 503)",
                s->want, (unsigned long long)need, s->want);
    discard(exec_mark_orphans(&s->cfg.exec)); /* runs of a server that was killed */
    return SERVER_GO_ON;
}

/* Undoes serve_start(), whatever part of it was done. */
static void serve_stop(struct supervisor *s)
{
    if (s->lfd >= 0)
        close(s->lfd);
    stream_sup_free(&s->streams);
    free(s->w);
    if (s->app.workers)
        munmap(s->app.workers, sizeof *s->app.workers);
    cfg_free(&s->cfg);
}

/* The parent's signals: each sets a flag, and all stay blocked (the old
 * mask in *old) except while the parent waits in ppoll. */
static void serve_signals(sigset_t *old)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGCHLD);
    set_handler(SIGTERM, on_term, false);
    set_handler(SIGINT, on_term, false);
    set_handler(SIGHUP, on_hup, false);
    set_handler(SIGCHLD, on_chld, false);
    set_handler(SIGPIPE, SIG_IGN, false);
    sigprocmask(SIG_BLOCK, &mask, old);
}

/* Where a drain is: when its grace ends, when what is left gets SIGKILL
 * (-1: not yet), and when it ends whatever is left (its bound). */
struct drain {
    int64_t start, until, kill_at, give_up;
};

/* One tick of the drain after SIGTERM (see the top). True when every worker
 * and stream process is gone, or when the drain's bound has passed: a
 * drain ends, whatever order things die in (what is left then gets SIGKILL
 * and is no longer waited for). */
static bool drain_tick(struct supervisor *s, struct drain *d, int64_t now)
{
    if (d->until < 0) {
        int64_t grace = cfg_drain_grace_ms(&s->cfg);
        d->start = now;
        d->until = now + grace;
        d->give_up = d->until + s->cfg.exec.limits.kill_grace_ms + SERVER_KILL_SLACK_MS + SERVER_DRAIN_LAST_MS;
        log_msg(LOG_LVL_INFO, "stopping: draining %u workers (at most %llds)", alive(s), (long long)(grace / 1000));
    }
    if (now >= d->give_up) {
        log_msg(LOG_LVL_ERROR, "the drain did not end within %llds: %u workers are left; they get SIGKILL, and serve exits",
                (long long)((d->give_up - d->start) / 1000), alive(s));
        signal_all(s, SIGKILL, false);
        stream_sup_kill(&s->streams);
        return true;
    }
    if (!alive(s))
        return stream_sup_drain(&s->streams, now); /* then the stream processes */
    signal_all(s, SIGTERM, false); /* again: one may have missed it (see top) */
    if (d->kill_at < 0 && now >= d->until) {
        log_msg(LOG_LVL_WARN, "drain grace over: cancelling the runs of %u workers", alive(s));
        signal_all(s, SIGINT, false);
        d->kill_at = now + s->cfg.exec.limits.kill_grace_ms + SERVER_KILL_SLACK_MS;
    }
    if (d->kill_at >= 0 && now >= d->kill_at) {
        signal_all(s, SIGKILL, false);
        d->kill_at = now + SERVER_KILL_AGAIN_MS;
    }
    return false;
}

/* The kernels stopped, each saving its state, before the warm pool goes:
 * a warm kernel is a fork of the pool's, and ends with it. */
static void kernels_stop(struct supervisor *s, const char *reason)
{
    if (!s->cfg.exec.kernels.max)
        return;
    int n = exec_kernel_stop_all(&s->cfg.exec, reason);
    if (n < 0)
        log_msg(LOG_LVL_WARN, "stopping the kernels: %s", strerror(-n));
    else if (n > 0)
        log_msg(LOG_LVL_INFO, "%d kernels stopped (and saved) before the warm pool", n);
}

/* The parent's loop: reaps and restarts workers, reloads on SIGHUP, reaps
 * old sessions and runs, and drains on SIGTERM until no worker is left.
 * Every tick reaps and looks at the stream process, whatever else happens:
 * ppoll runs no signal handler when a descriptor is ready, so a stream
 * process's pidfd left readable would keep SIGCHLD pending for ever (the
 * drain that once spun: the stream process ended while a worker lived). */
static void supervise(struct supervisor *s, const sigset_t *old)
{
    int64_t next_reap = util_now_ms();
    struct drain d = {-1, -1, -1, -1};
    for (;;) {
        /* Signals are blocked except inside ppoll: none is lost. */
        struct timespec ts = {0, SERVER_TICK_MS * 1000000L};
        struct pollfd sp = {stream_sup_pollfd(&s->streams), POLLIN, 0}; /* its end wakes us: started again at once */
        ppoll(&sp, sp.fd >= 0, &ts, old);
        got_chld = 0;
        reap(s);
        int64_t now = util_now_ms();
        stream_sup_check(&s->streams, now);
        if (got_term) {
            if (drain_tick(s, &d, now))
                return;
            continue;
        }
        if (got_hup) {
            got_hup = 0;
            reload(s);
            s->want = cfg_workers(&s->cfg);
            kernels_stop(s, "the server's configuration was reloaded, and its warm kernels stopped");
            exec_warm_stop(&s->warm);
            warm_start(s);
            stream_sup_reload(&s->streams);
        }
        warm_check(s, now);
        signal_all(s, SIGTERM, true);
        fill(s);
        if (now >= next_reap) {
            /* Sessions idle past session_ttl, and runs past run_ttl. */
            discard(mcp_reap(&s->cfg, false));
            ws_reap_runs(s->cfg.state_dir, s->cfg.exec.run_ttl_ms);
            discard(exec_mark_orphans(&s->cfg.exec)); /* also those too young when a worker died */
            next_reap = now + SERVER_REAP_EVERY_MS;
        }
    }
}

int server_serve(int argc, char **argv, const char *self)
{
    struct supervisor s = {.lfd = -1, .self = self, .warm = {.pid = -1, .pidfd = -1}, .streams = {.sfd = -1}};
    const char *listen_spec = NULL;
    char wset[64];
    cleanup_free const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    if (!sets)
        return CLI_EXIT_SERVICE;
    s.sets = sets;
    int status = serve_parse_args(argc, argv, &s, &listen_spec, wset, sizeof wset);
    if (status != SERVER_GO_ON)
        return status;
    status = serve_start(&s, listen_spec);
    if (status != SERVER_GO_ON) {
        serve_stop(&s);
        return status;
    }
    sigset_t old;
    serve_signals(&old);
    warm_start(&s);
    stream_sup_check(&s.streams, util_now_ms());
    fill(&s);
    log_msg(LOG_LVL_INFO, "serving on %s with %u workers (state %s)", listen_spec, s.want, s.cfg.state_dir);
    supervise(&s, &old);
    kernels_stop(&s, "the server was restarted, and the last kernel ended with it");
    exec_warm_stop(&s.warm);
    if (!strncmp(listen_spec, SERVER_UNIX_PREFIX, strlen(SERVER_UNIX_PREFIX)))
        unlink(listen_spec + strlen(SERVER_UNIX_PREFIX));
    serve_stop(&s);
    log_msg(LOG_LVL_INFO, "stopped");
    return 0;
}

/* ---------------------------------------------------- one-process modes */

bool server_stdin_is_fastcgi(void)
{
    /* FCGX_IsCGI() asks the same question (getpeername on fd 0 fails with
     * ENOTCONN for a listening socket) but initialises the library too. */
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    int type = 0;
    socklen_t tl = sizeof type;
    if (getsockopt(0, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM)
        return false;
    return getpeername(0, (struct sockaddr *)&sa, &len) < 0 && errno == ENOTCONN;
}

static int load(struct cfg *c, const char *self)
{
    char err[SERVER_ERR_MAX];
    if (cfg_load(c, NULL, self, NULL, 0, err, sizeof err) < 0) {
        fail("%s", err);
        return CLI_EXIT_CONFIG;
    }
    return 0;
}

int server_fastcgi_stdin(const char *self)
{
    struct cfg c;
    int rc = load(&c, self);
    if (rc) {
        cfg_free(&c);
        return rc;
    }
    struct app app = {.cfg = &c, .workers = NULL, .mode = "fastcgi", .cancel_all = &cancel_all};
    worker_signals();
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    rc = worker_loop(&app, 0);
    cfg_free(&c);
    return rc;
}

int server_cgi(const char *self)
{
    /* A web server may start a CGI program by its bare name (Apache's
     * argv[0] is the file name alone): the configuration next to it is found
     * through the path the server gives, SCRIPT_FILENAME. */
    const char *script = getenv("SCRIPT_FILENAME");
    if (script && script[0] == '/')
        self = script;
    struct cfg c;
    int rc = load(&c, self);
    if (rc) {
        /* Still an HTTP answer: the web server shows it, not a bare 500. */
        printf("Status: 500 Internal Server Error\r\nContent-Type: application/json\r\n\r\n"
               "{\"error\":\"runmyscript: bad configuration (see the server's error log)\"}");
        cfg_free(&c);
        return rc;
    }
    signal(SIGPIPE, SIG_IGN);
    struct app app = {.cfg = &c, .workers = NULL, .mode = "cgi", .cancel_all = &cancel_all};
    set_handler(SIGTERM, on_cancel_all, true);
    struct http_io io;
    struct stream_req sr;
    http_io_cgi(&io);
    stream_req_init(&sr, &c, NULL, NULL); /* no stream process: a listen is held here, within max_streams */
    io.stream = &sr;
    app_handle(&app, &io);
    discard(stream_req_end(&sr));
    http_cgi_drain(c.request_bytes);
    cfg_free(&c);
    return 0;
}
