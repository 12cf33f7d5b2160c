/* test-workspace.c: ids, run directories, path safety, the directories of
 * a path opened beneath a descriptor, and a session workspace's mounts/. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "workspace.h"

static int cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void test_ids(void)
{
    enum { N = 20000 };
    char(*ids)[WS_ID_MAX + 1] = calloc(N, sizeof *ids);
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (ws_new_id(NULL, ids[i]) < 0 || !ws_id_valid(ids[i]) || strlen(ids[i]) != WS_ID_LEN)
            bad++;
    is_int(bad, 0, "20000 ids are 32 lower-case hex digits");
    qsort(ids, N, sizeof *ids, cmp);
    int dup = 0;
    for (int i = 1; i < N; i++)
        dup += !strcmp(ids[i - 1], ids[i]);
    is_int(dup, 0, "and all different");
    /* Every hex digit shows up in every position over many ids: the bits are random. */
    int positions_ok = 0;
    for (int p = 0; p < WS_ID_LEN; p++) {
        int seen[16] = {0}, kinds = 0;
        for (int i = 0; i < N; i++) {
            char c = ids[i][p];
            seen[c <= '9' ? c - '0' : c - 'a' + 10] = 1;
        }
        for (int k = 0; k < 16; k++)
            kinds += seen[k];
        positions_ok += kinds == 16;
    }
    is_int(positions_ok, WS_ID_LEN, "each position takes all 16 digits");
    free(ids);
    ok(!ws_id_valid("0123456789abcdef0123456789abcde"), "31 digits is not an id");
    ok(!ws_id_valid("0123456789abcdef0123456789abcdef0"), "33 digits is not an id");
    ok(!ws_id_valid("0123456789ABCDEF0123456789abcdef"), "upper case is not an id");
    ok(!ws_id_valid("../../../../etc/passwd/aaaaaaaaaa"), "a path is not an id");
    ok(ws_run_path("/s", "../x") == NULL, "ws_run_path refuses a non-id");
}

/* Ids that carry a node id (node_id, a cluster): NODE-HEX. The artifact
 * routes and the state directory take them; nothing else gets through. */
static void test_node_ids(void)
{
    char id[WS_ID_MAX + 1];
    is_int(ws_new_id("n1", id), 0, "an id for node n1");
    ok(!strncmp(id, "n1-", 3) && strlen(id) == 3 + WS_ID_LEN && ws_id_valid(id), "is n1- and 32 hex digits");
    is_int(ws_new_id("0123456789abcdef", id), 0, "a node id of 16 characters");
    ok(ws_id_valid(id) && strlen(id) == WS_ID_MAX, "makes an id of WS_ID_MAX");
    is_int(ws_new_id("0123456789abcdefg", id), -EINVAL, "17 characters is not a node id");
    is_int(ws_new_id("N1", id), -EINVAL, "upper case is not a node id");
    is_int(ws_new_id("n-1", id), -EINVAL, "a dash is not in a node id");
    is_int(ws_new_id("", id), -EINVAL, "an empty node id is refused");
    ok(ws_node_valid("a") && ws_node_valid("node7") && !ws_node_valid("a.b") && !ws_node_valid("a/b") &&
           !ws_node_valid("..") && !ws_node_valid(""),
       "ws_node_valid");
    ok(ws_id_valid("b-0123456789abcdef0123456789abcdef"), "a one-letter node");
    ok(!ws_id_valid("-0123456789abcdef0123456789abcdef"), "an empty node is not an id");
    ok(!ws_id_valid("n1--0123456789abcdef0123456789abcdef"), "two dashes are not an id");
    ok(!ws_id_valid("n1-0123456789abcdef0123456789abcde"), "31 digits after a node are not an id");
    ok(!ws_id_valid("n1-0123456789abcdef0123456789abcdef0"), "33 digits after a node are not an id");
    ok(!ws_id_valid("n1-0123456789abcdef0123456789abcdeg"), "a non-hex digit after a node is not an id");
    ok(!ws_id_valid("N1-0123456789abcdef0123456789abcdef"), "an upper-case node is not an id");
    ok(!ws_id_valid("0123456789abcdefg-0123456789abcdef0123456789abcdef"), "a 17-character node is not an id");
    ok(!ws_id_valid("..-0123456789abcdef0123456789abcdef"), "a node of dots is not an id");
    ok(!ws_id_valid("n/1-0123456789abcdef0123456789abcdef"), "a slash in the node is not an id");
    ok(!ws_id_valid("0123456789abcdef0123456789abcdef-0123456789abcdef0123456789abcdef"),
       "an id as the node is not an id");
    ok(!ws_id_valid("n1-0123456789abcdef0123456789abcdef/"), "a trailing slash is not in an id");
    ok(!ws_id_valid(".ended-0123456789abcdef0123456789abcdef"), "an ended session's name is not an id");
    is_int((int)ws_id_prefix("n1-0123456789abcdef0123456789abcdef/a.png"), 35, "RUNID/PATH: the id's length");
    is_int((int)ws_id_prefix("n1-0123456789abcdef0123456789abcdef.zip"), 35, "RUNID.zip: the id's length");
    is_int((int)ws_id_prefix("0123456789abcdef0123456789abcdef/x"), 32, "a plain id before a slash");
    is_int((int)ws_id_prefix("n1-0123456789abcdef0123456789abcdef-x"), 0, "an id followed by a dash is none");
    is_int((int)ws_id_prefix("n1-../etc/passwd"), 0, "n1-../ is none");
    is_int((int)ws_id_prefix("n1/0123456789abcdef0123456789abcdef"), 0, "n1/ID is none");
    char *p = ws_run_path("/s", "n1-0123456789abcdef0123456789abcdef");
    is_str(p, "/s/runs/n1-0123456789abcdef0123456789abcdef", "ws_run_path takes a node id");
    free(p);
    ok(ws_run_path("/s", "n1-../../etc") == NULL, "and refuses n1-../../etc");
}

static void test_rel_paths(void)
{
    ok(ws_rel_path_ok("a.png"), "a plain name");
    ok(ws_rel_path_ok("plots/a.png"), "a nested name");
    ok(ws_rel_path_ok("..a/b..c"), "dots inside names are fine");
    ok(!ws_rel_path_ok(""), "empty");
    ok(!ws_rel_path_ok("/etc/passwd"), "absolute");
    ok(!ws_rel_path_ok(".."), "..");
    ok(!ws_rel_path_ok("../x"), "../x");
    ok(!ws_rel_path_ok("a/../../x"), "a/../../x");
    ok(!ws_rel_path_ok("a/./b"), "a/./b");
    ok(!ws_rel_path_ok("a//b"), "a//b");
    ok(!ws_rel_path_ok("a/"), "a trailing slash");
    char longp[1100];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    ok(!ws_rel_path_ok(longp), "over 1024 bytes");
}

static void test_open_beneath(void)
{
    char dir[] = "/tmp/rms-test-ws-XXXXXX";
    ok(mkdtemp(dir) != NULL, "temporary directory");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ok(mkdirat(dfd, "sub", 0755) == 0, "sub");
    int fd = openat(dfd, "sub/file", O_WRONLY | O_CREAT, 0644);
    ok(fd >= 0 && write(fd, "x", 1) == 1, "sub/file");
    close(fd);
    ok(symlinkat("/etc", dfd, "etc") == 0, "symlink etc -> /etc");
    ok(symlinkat("/etc/passwd", dfd, "sub/pw") == 0, "symlink sub/pw -> /etc/passwd");
    ok(symlinkat("sub", dfd, "alias") == 0, "relative symlink alias -> sub");

    fd = ws_open_beneath(dfd, "sub/file", O_RDONLY, 0);
    ok(fd >= 0, "opens a file beneath");
    if (fd >= 0)
        close(fd);
    is_int(ws_open_beneath(dfd, "etc/passwd", O_RDONLY, 0) < 0, 1, "refuses a symlinked directory");
    is_int(ws_open_beneath(dfd, "sub/pw", O_RDONLY, 0) < 0, 1, "refuses a final symlink");
    is_int(ws_open_beneath(dfd, "alias/file", O_RDONLY, 0) < 0, 1, "refuses even a symlink that stays inside");
    is_int(ws_open_beneath(dfd, "../etc/passwd", O_RDONLY, 0), -EINVAL, "refuses ..");
    is_int(ws_open_beneath(dfd, "/etc/passwd", O_RDONLY, 0), -EINVAL, "refuses an absolute path");
    fd = ws_open_beneath(dfd, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
    ok(fd >= 0, "creates a new file beneath");
    if (fd >= 0)
        close(fd);
    ok(util_rm_rf_at(AT_FDCWD, dir) == 0, "cleanup");
    close(dfd);
}

/* A scratch directory for one test, opened (its fd), and its removal. */
static int scratch_open(char *dir, const char *what)
{
    ok(mkdtemp(dir) != NULL, "%s: temporary directory", what);
    return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void scratch_done(const char *dir, int dfd, const char *what)
{
    ok(util_rm_rf_at(AT_FDCWD, dir) == 0, "%s: cleanup", what);
    close(dfd);
}

/* ws_open_beneath where openat2 is refused (a seccomp filter, as in a
 * jail, says EPERM): the component walk gives what openat2 would. */
static void test_open_beneath_fallback(void)
{
    char dir[] = "/tmp/rms-test-ws-XXXXXX";
    int dfd = scratch_open(dir, "fallback");
    int f = -1;
    ok(mkdirat(dfd, "sub", 0755) == 0 && (f = openat(dfd, "sub/file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0 &&
           symlinkat("/etc", dfd, "etc") == 0 && symlinkat("/etc/passwd", dfd, "sub/pw") == 0 &&
           symlinkat("sub", dfd, "alias") == 0,
       "fallback: sub/file and symlinks etc -> /etc, sub/pw -> /etc/passwd, alias -> sub");
    if (f >= 0)
        close(f);
    static const struct {
        const char *rel;
        int flags, want;
        const char *what;
    } cases[] = {
        {"sub/file", O_RDONLY, 0, "opens a file beneath"},
        {"etc/passwd", O_RDONLY, -ELOOP, "refuses a symlinked directory"},
        {"sub/pw", O_RDONLY, -ELOOP, "refuses a final symlink"},
        {"alias/file", O_RDONLY, -ELOOP, "refuses even a symlink that stays inside"},
        {"sub/file/x", O_RDONLY, -ELOOP, "refuses a file as a directory"},
        {"nowhere/file", O_RDONLY, -ENOENT, "a missing directory"},
        {"../etc/passwd", O_RDONLY, -EINVAL, "refuses .."},
        {"sub/new", O_WRONLY | O_CREAT | O_EXCL, 0, "creates a new file beneath"},
    };
    int got[ARRAY_SIZE(cases) + 1];
    int pfd[2];
    if (pipe(pfd) < 0) {
        ok(0, "fallback: pipe");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        got[0] = ctx && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                 seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat2), 0) == 0 && seccomp_load(ctx) == 0;
        if (got[0] && (syscall(SCMP_SYS(openat2), dfd, "sub", NULL, 0) != -1 || errno != EPERM))
            got[0] = 0; /* the filter is not what refuses it */
        for (size_t i = 0; got[0] && i < ARRAY_SIZE(cases); i++) {
            int fd = ws_open_beneath(dfd, cases[i].rel, cases[i].flags, 0600);
            got[i + 1] = fd >= 0 ? 0 : fd;
            if (fd >= 0)
                close(fd);
        }
        _exit(write(pfd[1], got, sizeof got) == (ssize_t)sizeof got ? 0 : 1);
    }
    close(pfd[1]);
    ssize_t n = pid > 0 ? read(pfd[0], got, sizeof got) : -1;
    close(pfd[0]);
    int status = -1;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (n == (ssize_t)sizeof got && status == 0 && !got[0]) {
        printf("ok %d - # SKIP fallback: no seccomp filter could refuse openat2 here\n", ++tap__n);
    } else {
        ok(n == (ssize_t)sizeof got && status == 0, "fallback: openat2 refused with EPERM in a child");
        for (size_t i = 0; n == (ssize_t)sizeof got && i < ARRAY_SIZE(cases); i++)
            is_int(got[i + 1], cases[i].want, "fallback: %s (%s)", cases[i].what, cases[i].rel);
    }
    scratch_done(dir, dfd, "fallback");
}

/* How many descriptors this process has open: a walk leaves none behind. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *de; (de = readdir(d));)
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the listing's own */
}

/* Whether fd is the directory dirfd/path (path "" : dirfd itself). */
static bool same_dir(int fd, int dirfd, const char *path)
{
    struct stat a, b;
    return fd >= 0 && fstat(fd, &a) == 0 && fstatat(dirfd, path, &b, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISDIR(a.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ws_open_dir: one directory, made or not, never a symlink. */
static void test_open_dir(void)
{
    char dir[] = "/tmp/rms-test-ws-XXXXXX";
    int dfd = scratch_open(dir, "ws_open_dir");
    int before = open_fds();
    is_int(ws_open_dir(dfd, "d", false), -ENOENT, "ws_open_dir: a missing directory is not made unless asked");
    ok(faccessat(dfd, "d", F_OK, AT_SYMLINK_NOFOLLOW) < 0, "ws_open_dir: and is still missing");
    int fd = ws_open_dir(dfd, "d", true);
    ok(same_dir(fd, dfd, "d"), "ws_open_dir: made when asked, and opened");
    if (fd >= 0)
        close(fd);
    mode_t um = umask(0);
    umask(um);
    struct stat st;
    ok(fstatat(dfd, "d", &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 07777) == (0755 & ~um),
       "ws_open_dir: mode 0755 (less the umask)");
    fd = ws_open_dir(dfd, "d", true);
    ok(same_dir(fd, dfd, "d"), "ws_open_dir: one already there is opened");
    if (fd >= 0)
        close(fd);
    ok(symlinkat("d", dfd, "ln") == 0 && symlinkat("/etc", dfd, "etc") == 0, "ws_open_dir: symlinks ln -> d, etc -> /etc");
    is_int(ws_open_dir(dfd, "ln", false), -ELOOP, "ws_open_dir: a symlink to a directory beside it is refused");
    is_int(ws_open_dir(dfd, "etc", true), -ELOOP, "ws_open_dir: a symlink out is refused, making or not");
    int f = openat(dfd, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (f >= 0)
        close(f);
    is_int(ws_open_dir(dfd, "file", true), -ELOOP, "ws_open_dir: a file is not a directory");
    is_int(ws_open_dir(dfd, "..", false), -EINVAL, "ws_open_dir: '..' is refused");
    is_int(ws_open_dir(dfd, "..", true), -EINVAL, "ws_open_dir: '..' is refused when making too");
    is_int(ws_open_dir(dfd, ".", false), -EINVAL, "ws_open_dir: '.' is refused");
    is_int(ws_open_dir(dfd, "", true), -EINVAL, "ws_open_dir: '' is refused");
    is_int(ws_open_dir(dfd, "d/e", true), -EINVAL, "ws_open_dir: a path is not one name");
    ok(faccessat(dfd, "d/e", F_OK, AT_SYMLINK_NOFOLLOW) < 0, "ws_open_dir: and nothing was made of it");
    is_int(open_fds(), before, "ws_open_dir: no descriptor left open");
    scratch_done(dir, dfd, "ws_open_dir");
}

/* ws_open_parent: every directory on the way, made or not as asked; a
 * symlink refused at every level, '..' refused, and where it stopped. */
static void test_open_parent(void)
{
    char dir[] = "/tmp/rms-test-ws-XXXXXX";
    int dfd = scratch_open(dir, "ws_open_parent");
    int before = open_fds();
    const char *leaf = NULL;
    struct ws_walk_stop stop = {0};

    const char *rel = "x/y/f";
    is_int(ws_open_parent(dfd, rel, false, &leaf, &stop), -ENOENT, "ws_open_parent: missing directories, not made");
    ok(stop.name == rel && stop.len == 1 && !stop.making, "ws_open_parent: stopped opening x");
    ok(faccessat(dfd, "x", F_OK, AT_SYMLINK_NOFOLLOW) < 0, "ws_open_parent: nothing made");

    rel = "a/b/c/f";
    int fd = ws_open_parent(dfd, rel, true, &leaf, &stop);
    ok(same_dir(fd, dfd, "a/b/c"), "ws_open_parent: a/b/c made when asked, and opened");
    ok(leaf == rel + 6, "ws_open_parent: the leaf is f");
    ok(faccessat(dfd, "a/b/c/f", F_OK, AT_SYMLINK_NOFOLLOW) < 0, "ws_open_parent: the leaf itself is not made");
    if (fd >= 0)
        close(fd);
    fd = ws_open_parent(dfd, "a/b/g", false, &leaf, &stop);
    ok(same_dir(fd, dfd, "a/b") && !strcmp(leaf, "g"), "ws_open_parent: directories there are opened without making");
    if (fd >= 0)
        close(fd);
    rel = "f";
    fd = ws_open_parent(dfd, rel, false, &leaf, &stop);
    ok(fd >= 0 && fd != dfd && same_dir(fd, dfd, "") && leaf == rel, "ws_open_parent: no '/': a duplicate of dirfd");
    if (fd >= 0)
        close(fd);

    /* A symlink at each level, into the tree or out of it, making or not. */
    ok(mkdirat(dfd, "target", 0755) == 0 && symlinkat("a", dfd, "ln") == 0 && symlinkat("b", dfd, "a/ln") == 0 &&
           symlinkat("../../target", dfd, "a/b/ln") == 0 && symlinkat("/tmp", dfd, "a/b/c/ln") == 0,
       "ws_open_parent: symlinks ln -> a, a/ln -> b, a/b/ln -> ../../target, a/b/c/ln -> /tmp");
    static const struct {
        const char *rel;
        size_t off;
    } links[] = {{"ln/b/rms-ws-new/f", 0},
                 {"a/ln/rms-ws-new/f", 2},
                 {"a/b/ln/rms-ws-new/f", 4},
                 {"a/b/c/ln/rms-ws-new/f", 6}};
    for (size_t i = 0; i < ARRAY_SIZE(links); i++)
        for (int make = 0; make <= 1; make++) {
            stop = (struct ws_walk_stop){0};
            int rc = ws_open_parent(dfd, links[i].rel, make, &leaf, &stop);
            ok((rc == -ELOOP || rc == -ENOTDIR) && stop.name == links[i].rel + links[i].off && stop.len == 2 &&
                   !stop.making,
               "ws_open_parent: %s, %s: refused at its symlink (%d)", links[i].rel, make ? "making" : "not making", rc);
        }
    ok(faccessat(dfd, "target/rms-ws-new", F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
           faccessat(dfd, "a/b/rms-ws-new", F_OK, 0) < 0 && faccessat(AT_FDCWD, "/tmp/rms-ws-new", F_OK, 0) < 0,
       "ws_open_parent: nothing made through a symlink");

    int f = openat(dfd, "a/file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (f >= 0)
        close(f);
    rel = "a/file/f";
    is_int(ws_open_parent(dfd, rel, true, &leaf, &stop), -ENOTDIR, "ws_open_parent: a file in the way");
    ok(stop.name == rel + 2 && stop.len == 4 && !stop.making, "ws_open_parent: stopped opening it");

    /* '..', '.' and empty components. */
    static const struct {
        const char *rel;
        size_t off, len;
    } bad[] = {{"../f", 0, 2}, {"a/../../f", 2, 2}, {"a/b/../../../rms-ws-above/f", 4, 2}, {"./f", 0, 1}, {"a//f", 2, 0},
               {"/etc/f", 0, 0}};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
        for (int make = 0; make <= 1; make++) {
            stop = (struct ws_walk_stop){0};
            int rc = ws_open_parent(dfd, bad[i].rel, make, &leaf, &stop);
            ok(rc == -EINVAL && stop.name == bad[i].rel + bad[i].off && stop.len == bad[i].len,
               "ws_open_parent: %s, %s: refused (%d)", bad[i].rel, make ? "making" : "not making", rc);
        }
    char up[PATH_MAX];
    snprintf(up, sizeof up, "%s/../rms-ws-above", dir);
    ok(faccessat(AT_FDCWD, up, F_OK, AT_SYMLINK_NOFOLLOW) < 0, "ws_open_parent: nothing made above dirfd");

    char longname[NAME_MAX + 8];
    memset(longname, 'n', NAME_MAX + 1);
    memcpy(longname + NAME_MAX + 1, "/f", 3);
    is_int(ws_open_parent(dfd, longname, true, &leaf, &stop), -ENAMETOOLONG, "ws_open_parent: a name past NAME_MAX");
    ok(stop.making && stop.len == NAME_MAX + 1, "ws_open_parent: which making it could not take");

    /* Any length: 600 levels, 1800 bytes, one directory open at a time. */
    char deep[1900] = "";
    for (int i = 0; i < 600; i++)
        strcat(deep, "dd/");
    strcat(deep, "f");
    fd = ws_open_parent(dfd, deep, true, &leaf, &stop);
    ok(fd >= 0 && !strcmp(leaf, "f"), "ws_open_parent: a path of %zu bytes, 600 directories made", strlen(deep));
    if (fd >= 0)
        close(fd);
    fd = ws_open_parent(dfd, deep, false, &leaf, &stop);
    ok(fd >= 0, "ws_open_parent: and opened again without making");
    if (fd >= 0)
        close(fd);

    is_int(open_fds(), before, "ws_open_parent: no descriptor left open");
    ok(fcntl(dfd, F_GETFD) >= 0, "ws_open_parent: dirfd is borrowed, still open");
    scratch_done(dir, dfd, "ws_open_parent");
}

static void test_runs(void)
{
    char dir[] = "/tmp/rms-test-state-XXXXXX";
    ok(mkdtemp(dir) != NULL, "state directory");
    char id[WS_ID_MAX + 1], id2[WS_ID_MAX + 1];
    char *p = NULL, *p2 = NULL;
    is_int(ws_run_create(dir, NULL, id, &p), 0, "a run directory");
    is_int(ws_run_create(dir, "node2", id2, &p2), 0, "another, on a node");
    ok(!strncmp(id2, "node2-", 6) && ws_id_valid(id2), "whose id carries the node");
    ok(strcmp(id, id2) != 0, "with different ids");
    struct stat st;
    ok(stat(p, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "mode 0700");
    char *q = ws_run_path(dir, id);
    is_str(q, p, "ws_run_path finds it");
    free(q);
    /* Reaping: age one run past the TTL. */
    struct timespec old[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
    ok(utimensat(AT_FDCWD, p, old, 0) == 0, "age a run");
    is_int(ws_reap_runs(dir, 3600 * 1000), 1, "reaping removes the old run only");
    ok(access(p, F_OK) < 0 && access(p2, F_OK) == 0, "the old one is gone, the new one stays");
    is_int(ws_reap_runs(dir, 3600 * 1000), 0, "a second scan within a minute does nothing");
    free(p);
    free(p2);
    ok(util_rm_rf_at(AT_FDCWD, dir) == 0, "cleanup");
}

/* A finished run of n bytes in dir (result.json last, then the ledger),
 * aged to mtime seconds when it is not 0. */
static char *finished_run(const char *dir, size_t n, time_t mtime)
{
    char id[WS_ID_MAX + 1], *p = NULL;
    if (ws_run_create(dir, NULL, id, &p) < 0)
        return NULL;
    int fd = open(p, O_RDONLY | O_DIRECTORY);
    char *data = calloc(1, n + 1);
    memset(data, 'x', n);
    discard(util_write_file_new(fd, "log", data, n, 0644));
    discard(util_write_file_new(fd, "result.json", "{}", 2, 0644));
    free(data);
    close(fd);
    discard(ws_runs_account(p));
    struct timespec t[2] = {{.tv_sec = mtime}, {.tv_sec = mtime}};
    if (mtime)
        discard(utimensat(AT_FDCWD, p, t, 0));
    return p;
}

/* The run records bounded by size: the ledger, the oldest removed first
 * past runs_bytes or runs_files, never one in flight; the low-disk guard. */
static void test_runs_bound(void)
{
    char dir[] = "/tmp/rms-test-bound-XXXXXX";
    ok(mkdtemp(dir) != NULL, "bound: state directory");
    is_int(ws_init_state(dir), 0, "bound: its layout");
    struct exec_config cfg = {.state_dir = dir, .runs_bytes = 200 << 10};
    uint64_t bytes = 0, files = 0;
    char *runs[12];
    for (int i = 0; i < 12; i++) /* 12 runs of 40 KiB, the oldest first */
        runs[i] = finished_run(dir, 40 << 10, 1000000 + i);
    is_int(ws_runs_usage(dir, &bytes, &files), 0, "bound: the ledger");
    ok(bytes >= 12 * (40 << 10) && files == 12 * 3, "bound: it holds the 12 runs (%llu bytes, %llu inodes)",
       (unsigned long long)bytes, (unsigned long long)files);
    /* One in flight: its lock is held, and it is the oldest of all. */
    char *busy = finished_run(dir, 40 << 10, 999999);
    int bfd = open(busy, O_RDONLY | O_DIRECTORY);
    ok(flock(bfd, LOCK_EX) == 0, "bound: a run in flight holds its lock");
    /* And one without result.json yet. */
    char nid[WS_ID_MAX + 1], *young = NULL;
    is_int(ws_run_create(dir, NULL, nid, &young), 0, "bound: a run that has not finished");
    struct timespec t[2] = {{.tv_sec = 999998}, {.tv_sec = 999998}};
    discard(utimensat(AT_FDCWD, young, t, 0));
    int removed = ws_bound_runs(&cfg);
    ok(removed >= 8, "bound: past runs_bytes, the oldest go (%d)", removed);
    is_int(ws_runs_usage(dir, &bytes, &files), 0, "bound: the ledger again");
    ok(bytes <= (200 << 10) / 10 * 9 + (40 << 10), "bound: down to nine tenths of runs_bytes (%llu bytes)",
       (unsigned long long)bytes);
    ok(access(runs[0], F_OK) < 0 && access(runs[11], F_OK) == 0, "bound: the oldest went, the newest stays");
    ok(access(busy, F_OK) == 0 && access(young, F_OK) == 0, "bound: never a run in flight nor one without its result");
    is_int(ws_bound_runs(&cfg), 0, "bound: under the cap, nothing more goes");
    close(bfd);
    /* runs_files the same way. */
    cfg.runs_bytes = 0;
    cfg.runs_files = 9;
    ok(ws_bound_runs(&cfg) > 0, "bound: past runs_files, more go");
    is_int(ws_runs_usage(dir, &bytes, &files), 0, "bound: the ledger");
    ok(files <= 8, "bound: down to nine tenths of runs_files (%llu inodes)", (unsigned long long)files);
    ok(access(runs[11], F_OK) == 0, "bound: the newest stays");
    /* A removal by id takes the run out of the ledger. */
    uint64_t before = files;
    char *id = strrchr(runs[11], '/') + 1;
    is_int(ws_run_remove(dir, id), 0, "bound: ws_run_remove");
    is_int(ws_runs_usage(dir, &bytes, &files), 0, "bound: the ledger");
    is_int((long long)(before - files), 3, "bound: less its three inodes");
    is_int(ws_run_remove(dir, "../x"), -EINVAL, "bound: ws_run_remove takes ids only");
    /* The low-disk guard. */
    struct ws_disk d;
    char err[256] = "";
    cfg.disk_reserve_bytes = 1;
    is_int(ws_disk_check(&cfg, &d, err, sizeof err), 0, "disk: a reserve of 1 byte: not low");
    ok(!d.low && d.total_bytes > 0, "disk: and the file system is measured");
    cfg.disk_reserve_bytes = d.total_bytes + 1;
    is_int(ws_disk_check(&cfg, &d, err, sizeof err), -ENOSPC, "disk: a reserve above the whole disk: low, -ENOSPC");
    ok(d.low && strstr(err, "disk_reserve") && !strstr(err, dir), "disk: the reason names the key, not the path (%s)", err);
    cfg.disk_reserve_bytes = 0;
    cfg.disk_reserve_pct = 0;
    is_int(ws_disk_check(&cfg, &d, err, sizeof err), 0, "disk: a reserve of 0%%: no guard");
    for (int i = 0; i < 12; i++)
        free(runs[i]);
    free(busy);
    free(young);
    ok(util_rm_rf_at(AT_FDCWD, dir) == 0, "bound: cleanup");
}

/* mounts/: missing, made, a symlink in its place, a file in its place. */
static void test_mounts(void)
{
    char tmp[] = "/tmp/rms-test-ws-XXXXXX";
    if (!mkdtemp(tmp)) {
        ok(0, "mkdtemp");
        return;
    }
    int wfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    is_int(ws_mounts_open(wfd, false), -ENOENT, "mounts/: missing");
    ok(!ws_mounts_dir(tmp, false), "mounts/: ws_mounts_dir says missing");
    int m = ws_mounts_open(wfd, true);
    ok(m >= 0, "mounts/: made and opened");
    if (m >= 0)
        close(m);
    ok(ws_mounts_dir(tmp, false), "mounts/: ws_mounts_dir finds it");
    is_int(unlinkat(wfd, WS_MOUNTS_DIR, AT_REMOVEDIR), 0, "mounts/: removed");
    is_int(symlinkat("/etc", wfd, WS_MOUNTS_DIR), 0, "mounts/: a symlink in its place");
    is_int(ws_mounts_open(wfd, true), -ELOOP, "mounts/: a symlink is not followed");
    ok(!ws_mounts_dir(tmp, true), "mounts/: ws_mounts_dir refuses a symlink");
    is_int(unlinkat(wfd, WS_MOUNTS_DIR, 0), 0, "mounts/: symlink removed");
    int f = openat(wfd, WS_MOUNTS_DIR, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (f >= 0)
        close(f);
    is_int(ws_mounts_open(wfd, true), -ELOOP, "mounts/: a file is not a directory");
    is_int(unlinkat(wfd, WS_MOUNTS_DIR, 0), 0, "mounts/: file removed");
    ok(ws_mounts_dir(tmp, true), "mounts/: ws_mounts_dir makes it");
    unlinkat(wfd, WS_MOUNTS_DIR, AT_REMOVEDIR);
    close(wfd);
    rmdir(tmp);
}

int main(void)
{
    test_mounts();
    test_ids();
    test_node_ids();
    test_rel_paths();
    test_open_beneath();
    test_open_beneath_fallback();
    test_open_dir();
    test_open_parent();
    test_runs();
    test_runs_bound();
    return tap_done();
}
