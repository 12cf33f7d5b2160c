/* jail_init.c: pid 1 of a run's namespaces and the script it forks. init
 * starts as a clone of this program: it waits for its uid maps, builds the
 * root, takes the seccomp filter from the parent and forks the script. Then
 * it re-executes the program as a fresh image (init_fresh_main), with an
 * empty environment and an argv of three numbers, so that nothing of the
 * parent (its command line, environment, configuration, memory) is left
 * in any process a script can see; only then does the script go on. The
 * fresh init reaps every orphan, forwards SIGTERM to every process of the
 * namespace, and when the script exits reports its status and exits,
 * which makes the kernel kill whatever is left. The script drops
 * everything and execs. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define JAIL_HOSTNAME "runmyscript"
#define JAIL_INIT_ARG "--sandbox-init"  /* argv[1] of init's fresh image */

/* The script, forked by init: drop everything, exec. */
static _Noreturn void script_main(struct jail_ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;
    /* Nothing of the script (or a zygote) runs before init is a fresh
     * image: until init says so, its memory is still a copy of the
     * parent's. */
    char word;
    close(c->reaper_go[1]);
    if (util_read_exact(c->reaper_go[0], &word, 1) < 0)
        jail__child_fail_err(efd, JAIL_STAGE_INIT_EXEC, EPIPE, NULL);
    close(c->reaper_go[0]);
    jail__reset_signals();
    if (o->zygote)
        jail__zygote_exec(c);
    /* Last before execve: from here on the filter binds. */
    efd = jail__script_drop(efd, o->stdin_inside, o->fd_in, o->fd_out, o->fd_err, c->rows, c->nrows, c->set_groups,
                            o->cwd, &c->seccomp);
    execve(o->argv[0], (char *const *)(o->runner_argv ? o->runner_argv : o->argv), (char *const *)o->envp);
    jail__child_fail(efd, JAIL_STAGE_EXEC);
}

/* pid 1 of the run's namespaces. */
/* The steps that still need the host's view, before the root is built:
 * the parent's go (the maps are written), a private mount tree, the plan
 * opened, init's own uid inside, and nothing of the parent's left open. */
static void init_prepare(struct jail_ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;
    char go;
    ssize_t r;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* A session of our own, away from the caller's terminal: its Ctrl-C
     * (SIGINT to the foreground process group) is the caller's to turn
     * into a cancel, never a signal init would forward to the script. */
    jail__must(setsid() >= 0, efd, JAIL_STAGE_SETSID);
    do
        r = read(c->go_r, &go, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1)
        jail__child_fail_err(efd, JAIL_STAGE_MAPS, EPIPE, NULL);
    /* The maps are written: from here on no process of our uid may read
     * this copy of the parent's memory (see ns_clone). */
    prctl(PR_SET_DUMPABLE, 0);
    /* Nothing we mount may reach the host's mount tree. */
    jail__must(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, efd, JAIL_STAGE_MOUNT);
    char what[sizeof ((struct jail_child_error *)0)->what] = "";
    int rc = jail__plan_make(c, what, sizeof what);
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_BIND, -rc, what);
    /* As root, our host uid 0 is not mapped inside (on purpose): become the
     * namespace's own root, an unprivileged host uid, so that the files we
     * make in our tmpfs have an owner the namespace can name. */
    if (c->set_groups && (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
        jail__child_fail(efd, JAIL_STAGE_IDS);
    /* A change of credentials clears the parent-death signal: set it again,
     * or a killed parent (a worker killed mid-run) leaves the run alive. If
     * the parent died before this line, the read of the filter later fails
     * and we exit. */
    if (c->set_groups)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Nothing of the parent's (its sockets, its other files) stays open in
     * the namespace: only our pipes and the script's three. */
    const int pipes_and_stdio[] = {efd, c->status_w, o->fd_in, o->fd_out, o->fd_err, c->go_r, c->self_exe};
    int keep[ARRAY_SIZE(pipes_and_stdio) + JAIL_PLAN_MAX + JAIL_CG_TASKS + 1];
    size_t nkeep = 0;
    for (size_t i = 0; i < ARRAY_SIZE(pipes_and_stdio); i++)
        keep[nkeep++] = pipes_and_stdio[i];
    for (size_t i = 0; i < c->n_plan; i++)
        if (c->plan[i].fd >= 0)
            keep[nkeep++] = c->plan[i].fd;
    for (size_t i = 0; i < c->n_cg_tasks; i++)
        keep[nkeep++] = c->cg_tasks[i];
    if (o->net_sock > 0)
        keep[nkeep++] = o->net_sock;
    jail__close_all_except(keep, nkeep);
}

/* The parent has meanwhile put us into the cgroups and compiled the
 * seccomp filter: its length, then its instructions. */
static void init_receive_filter(struct jail_ns_ctx *c)
{
    uint32_t n = 0;
    if (util_read_exact(c->go_r, &n, sizeof n) < 0 || n == 0 || n > ARRAY_SIZE(c->bpf) ||
        util_read_exact(c->go_r, c->bpf, n * sizeof c->bpf[0]) < 0)
        jail__child_fail_err(c->err_w, JAIL_STAGE_SECCOMP, EPIPE, NULL);
    c->seccomp.len = (unsigned short)n;
    c->seccomp.filter = c->bpf;
    close(c->go_r);
}

/* Forks the script with every signal blocked (the script resets them; init
 * keeps them blocked across its re-exec, and the fresh image unblocks them
 * once its handlers are in place: a SIGTERM meanwhile stays pending).
 * fork, not vfork: the script waits for init's re-exec before it goes on.
 * Returns its pid. */
static pid_t init_fork_script(struct jail_ns_ctx *c)
{
    sigset_t blocked;
    sigfillset(&blocked);
    sigprocmask(SIG_SETMASK, &blocked, NULL);
    if (pipe2(c->reaper_go, O_CLOEXEC) < 0)
        jail__child_fail(c->err_w, JAIL_STAGE_FORK);
    pid_t script = fork();
    if (script == 0)
        script_main(c);
    if (script < 0)
        jail__child_fail(c->err_w, JAIL_STAGE_FORK);
    close(c->reaper_go[0]);
    return script;
}

/* init becomes a fresh image of this program: argv "runmyscript-init
 * JAIL_INIT_ARG SCRIPT STATUS_FD GO_FD", no environment. Only the status
 * pipe and the script's go survive the exec (the error pipe, the script's
 * stdio, the plan and the program's descriptor are close-on-exec): a
 * failed exec is still reported on the error pipe. */
static _Noreturn void init_reexec(struct jail_ns_ctx *c, pid_t script)
{
    char spid[16], sfd[16], gfd[16];
    snprintf(spid, sizeof spid, "%d", (int)script);
    snprintf(sfd, sizeof sfd, "%d", c->status_w);
    snprintf(gfd, sizeof gfd, "%d", c->reaper_go[1]);
    const char *argv[] = {"runmyscript-init", JAIL_INIT_ARG, spid, sfd, gfd, NULL};
    const char *envp[] = {NULL};
    if (fcntl(c->status_w, F_SETFD, 0) < 0 || fcntl(c->reaper_go[1], F_SETFD, 0) < 0)
        jail__child_fail(c->err_w, JAIL_STAGE_INIT_EXEC);
    syscall(SYS_execveat, c->self_exe, "", argv, envp, AT_EMPTY_PATH);
    jail__child_fail(c->err_w, JAIL_STAGE_INIT_EXEC);
}

/* Reaps every process until the script is done, then reports its status
 * and the resource use of all (children reaped before the re-exec count
 * too) and leaves. The kernel kills the rest of the namespace when pid 1
 * exits. */
static _Noreturn void init_report(int status_w, pid_t script)
{
    int st = 0;
    struct rusage ru;
    for (;;) {
        pid_t w = wait4(-1, &st, 0, &ru);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            _exit(1);
        if (w == script)
            break;
    }
    struct jail_status_msg msg = {.status = st};
    getrusage(RUSAGE_CHILDREN, &msg.ru);
    ssize_t w = write(status_w, &msg, sizeof msg);
    (void)w;
    _exit(0);
}

_Noreturn void jail__init_main(struct jail_ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;

    init_prepare(c);
    if (o->net_sock > 0) {
        /* The run's own network, while the host's libraries and files are
         * in view (libnftables reads some), before anything of the script. */
        char what[sizeof ((struct jail_child_error *)0)->what] = "";
        int rc = jail__net_own(o->net_sock, o->net_all, what, sizeof what);
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_NET_OWN, -rc, what);
        close(o->net_sock);
    }
    jail__build_root(c);
    /* A container's default seccomp profile refuses it even in a UTS
     * namespace of our own: the run then keeps the container's name. */
    if (sethostname(JAIL_HOSTNAME, sizeof JAIL_HOSTNAME - 1) < 0 && errno != EPERM)
        jail__child_fail(efd, JAIL_STAGE_ROOT);
    if (!o->network && o->net_sock <= 0) {
        int rc = jail__loopback_up();
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_NET, -rc, NULL);
    }
    init_receive_filter(c);
    int rc = jail__cg_enter_self(c->cg_tasks, c->n_cg_tasks);
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_CGROUP, -rc, NULL);
    pid_t script = init_fork_script(c);
    init_reexec(c, script);
}

static int parse_fd(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 0 && v < INT32_MAX ? (int)v : -1;
}

/* The fresh image of init: the program re-executed with argv[1] =
 * JAIL_INIT_ARG. */
static _Noreturn void init_fresh_main(int argc, char **argv)
{
    /* Not dumpable: the script (uid 1000 like init, unprivileged) can
     * neither read nor write this process's memory through /proc. */
    prctl(PR_SET_DUMPABLE, 0);
    /* The parent's death still takes the run with it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int script = argc == 5 ? parse_fd(argv[2]) : -1;
    int status_w = argc == 5 ? parse_fd(argv[3]) : -1;
    int go_w = argc == 5 ? parse_fd(argv[4]) : -1;
    if (script <= 0 || status_w < 0 || go_w < 0 || getpid() != 1) {
        fprintf(stderr, "runmyscript: %s is the sandbox's own init, not a command\n", JAIL_INIT_ARG);
        _exit(JAIL_CHILD_FAILED);
    }
    jail__init_forward_signals();
    /* Everything else of the namespace is the script's: let it go. */
    if (write(go_w, "g", 1) != 1)
        _exit(JAIL_CHILD_FAILED);
    close(go_w);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    init_report(status_w, (pid_t)script);
}

/* Whatever program links the sandbox (the server, its test twin, the unit
 * tests) is the one init re-executes, so init's fresh image starts here,
 * before that program's main() and anything it reads: the C library calls
 * a constructor with main's arguments. */
__attribute__((constructor)) static void init_fresh_entry(int argc, char **argv, char **envp)
{
    (void)envp;
    if (argc >= 2 && argv && argv[1] && !strcmp(argv[1], JAIL_INIT_ARG))
        init_fresh_main(argc, argv);
}
