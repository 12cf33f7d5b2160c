/* test-util.c: arrays that grow, lists of strings, bounded buffers, UTF-8, sha256, sizes, atomic writes, tree
 * walks, counted caps under a race, libraries loaded on first use. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sha256.h"
#include "strv.h"
#include "tap.h"
#include "util.h"

static void test_grow(void)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    bool kept = true;
    for (int i = 0; i < 100; i++) {
        if (UTIL_GROW(v, n, cap, 4) < 0)
            break;
        v[n++] = i;
    }
    is_int((int)n, 100, "UTIL_GROW: room for 100 elements, one at a time");
    for (size_t i = 0; i < n; i++)
        kept = kept && v[i] == (int)i;
    ok(kept, "UTIL_GROW: what was in the array is kept as it grows");
    is_int((int)cap, 128, "UTIL_GROW: doubled from its first 4 (4, 8, ..., 128)");
    is_int(UTIL_GROW(v, 50, cap, 4), 0, "UTIL_GROW: nothing to do while there is room");
    is_int((int)cap, 128, "UTIL_GROW: and the capacity stays");
    size_t huge = SIZE_MAX / 2 + 1;
    int *before = v;
    is_int(util_grow((void **)&v, &huge, huge, sizeof *v, 4), -ENOMEM, "util_grow: a size past memory is -ENOMEM");
    ok(v == before && huge == SIZE_MAX / 2 + 1, "util_grow: and the array is as it was");
    free(v);
}

static void test_strv(void)
{
    struct strv v = {0};
    int rc = 0;
    for (int i = 0; i < 20 && rc == 0; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "mod%d.x", i);
        rc = strv_push(&v, name, (size_t)n - 2); /* "modN": the length given, not the string's */
    }
    is_int(rc, 0, "strv_push: 20 strings, past its first 8");
    is_int((int)v.n, 20, "strv: holds all 20");
    is_str(v.n ? v.v[0] : "", "mod0", "strv_push: a copy of len bytes, NUL-terminated");
    is_str(v.n == 20 ? v.v[19] : "", "mod19", "strv_push: in the order pushed");
    ok(strv_has(&v, "mod7") && !strv_has(&v, "mod7.x") && !strv_has(&v, "mod"), "strv_has: whole strings only");
    strv_free(&v);
    ok(v.v == NULL && v.n == 0 && v.cap == 0, "strv_free: the list is empty again");
    ok(!strv_has(&v, "mod0"), "strv_has: an empty list has nothing");
}

static void test_dbuf(void)
{
    struct dbuf b;
    dbuf_init(&b, 10);
    is_int(dbuf_append(&b, "hello", 5), 0, "dbuf appends under its ceiling");
    is_int(dbuf_append(&b, "world", 5), 0, "dbuf appends up to its ceiling");
    is_int(dbuf_append(&b, "!", 1), -E2BIG, "dbuf refuses past its ceiling");
    is_int((long long)b.len, 10, "a refused append leaves the length");
    is_str(b.data, "helloworld", "the data is NUL-terminated");
    dbuf_free(&b);
    dbuf_init(&b, 100);
    is_int(dbuf_printf(&b, "%d-%s", 42, "x"), 0, "dbuf_printf");
    is_str(b.data, "42-x", "dbuf_printf formats");
    dbuf_free(&b);
}

static void test_utf8(void)
{
    ok(util_utf8_valid("h\xc3\xa9llo", 6), "valid 2-byte UTF-8");
    ok(util_utf8_valid("\xf0\x9f\x98\x80", 4), "valid 4-byte UTF-8");
    ok(!util_utf8_valid("\xff", 1), "0xff is not UTF-8");
    ok(!util_utf8_valid("\xc0\xaf", 2), "an overlong encoding is not UTF-8");
    ok(!util_utf8_valid("\xed\xa0\x80", 3), "a surrogate is not UTF-8");
    ok(!util_utf8_valid("\xe2\x82", 2), "a cut sequence is not UTF-8");
    size_t n;
    char *s = util_utf8_sanitize("a\xff" "b\0c", 5, &n);
    is_str(s, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c", "sanitize replaces bad bytes and NUL with U+FFFD");
    free(s);
}

/* RFC 4231's test cases 2 (a short key) and 6 (a key longer than a block). */
static void test_sha256_hmac(void)
{
    unsigned char d[32];
    char hex[65];
    const char *data = "what do ya want for nothing?";
    sha256_hmac("Jefe", 4, data, strlen(data), d);
    util_hex(d, 32, hex);
    is_str(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", "hmac-sha256: RFC 4231 case 2");
    unsigned char key[131];
    memset(key, 0xaa, sizeof key);
    const char *big = "Test Using Larger Than Block-Size Key - Hash Key First";
    sha256_hmac(key, sizeof key, big, strlen(big), d);
    util_hex(d, 32, hex);
    is_str(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
           "hmac-sha256: RFC 4231 case 6, a key longer than a block");
}

static void test_sha256(void)
{
    char hex[65];
    sha256_hex("", 0, hex);
    is_str(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256 of nothing");
    sha256_hex("abc", 3, hex);
    is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 of abc");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    is_str(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "sha256 of two blocks");
    /* A million 'a's fed in odd-sized pieces. */
    struct sha256 c;
    unsigned char d[32];
    char a[997];
    memset(a, 'a', sizeof a);
    sha256_init(&c);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof a ? left : sizeof a;
        sha256_update(&c, a, n);
        left -= n;
    }
    sha256_final(&c, d);
    util_hex(d, 32, hex);
    is_str(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "sha256 of a million a");
}

static void test_human(void)
{
    char b[32];
    util_human_size(812, b, sizeof b);
    is_str(b, "812 B", "bytes");
    util_human_size(4300, b, sizeof b);
    is_str(b, "4.2 KiB", "KiB");
    util_human_size(3u << 20, b, sizeof b);
    is_str(b, "3.0 MiB", "MiB");
}

static void test_files(void)
{
    char dir[] = "/tmp/rms-test-util-XXXXXX";
    ok(mkdtemp(dir) != NULL, "temporary directory");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    is_int(util_write_file_atomic(dfd, "f", "data", 4, 0644), 0, "atomic write");
    char *text = NULL;
    size_t len = 0;
    is_int(util_read_file_at(dfd, "f", 100, &text, &len), 0, "read back");
    is_str(text, "data", "the atomic write holds the data");
    free(text);
    is_int(util_read_file_at(dfd, "f", 3, &text, &len), -E2BIG, "reading past max fails");
    ok(symlinkat("/etc/passwd", dfd, "link") == 0, "symlink made");
    is_int(util_read_file_at(dfd, "link", 1 << 20, &text, &len), -ELOOP, "reads do not follow a final symlink");
    is_int(util_write_file_atomic(dfd, "link", "x", 1, 0644), 0, "an atomic write over a symlink...");
    struct stat st;
    ok(fstatat(dfd, "link", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode),
       "...replaces the link, it does not write through it");
    /* Published (no fsync): the same rename over what was there, and
     * nothing left beside it. */
    is_int(util_write_file_published(dfd, "f", "newer", 5, 0644), 0, "published write over a file");
    is_int(util_read_file_at(dfd, "f", 100, &text, &len), 0, "read back");
    is_str(text, "newer", "the published write holds the new data whole");
    free(text);
    DIR *dl = util_opendir_at(dfd);
    int temps = 0;
    struct dirent *de;
    while (dl && (de = readdir(dl)))
        temps += strstr(de->d_name, ".tmp") != NULL;
    if (dl)
        closedir(dl);
    is_int(temps, 0, "no temporary file left beside it");
    ok(mkdirat(dfd, "d", 0755) == 0 && mkdirat(dfd, "d/e", 0755) == 0, "nested dirs");
    ok(symlinkat("/etc", dfd, "d/e/etc") == 0, "a symlink to /etc inside");
    is_int(util_rm_rf_at(AT_FDCWD, dir), 0, "rm -rf of the tree");
    ok(access("/etc/passwd", F_OK) == 0, "rm -rf did not follow the symlink");
    ok(access(dir, F_OK) < 0, "the tree is gone");
    close(dfd);
}

/* A walk counts what it meets, a directory's post after its contents. */
struct count {
    int pre, post, deepest;
    bool order_ok;
};

static int count_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct count *c = ctx;
    (void)dirfd;
    (void)st;
    c->pre++;
    if (depth > c->deepest)
        c->deepest = depth;
    return depth == 1 && !strcmp(name, "skip") ? 1 : 0;
}

static int count_post(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct count *c = ctx;
    (void)dirfd;
    (void)name;
    c->post++;
    c->order_ok = c->order_ok && S_ISDIR(st->st_mode) && depth <= c->deepest;
    return 0;
}

/* Deeper than descriptors allow and than PATH_MAX spells. */
#define DEEP 3000

static void test_walk(void)
{
    char dir[] = "/tmp/rms-test-walk-XXXXXX";
    ok(mkdtemp(dir) != NULL, "temporary directory");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    ok(mkdirat(fd, "skip", 0755) == 0 && mkdirat(fd, "skip/x", 0755) == 0, "a directory to skip");
    bool made = true;
    for (int i = 0; i < DEEP && made; i++) {
        made = mkdirat(fd, "d", 0755) == 0;
        int sub = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = sub;
        made = made && fd >= 0;
        if (made && i % 100 == 0) {
            int f = openat(fd, "f", O_WRONLY | O_CREAT, 0644);
            made = f >= 0;
            close(f);
        }
    }
    close(fd);
    ok(made, "a tree %d directories deep", DEEP);
    struct rlimit old, low = {64, 64};
    getrlimit(RLIMIT_NOFILE, &old);
    low.rlim_max = old.rlim_max;
    setrlimit(RLIMIT_NOFILE, &low);
    struct count c = {0, 0, 0, true};
    struct util_walk w = {.pre = count_pre, .post = count_post, .ctx = &c};
    is_int(util_walk_at(AT_FDCWD, dir, &w), 0, "walked with 64 descriptors");
    is_int(c.deepest, DEEP, "to the bottom");
    is_int(c.pre, 1 + 1 + DEEP + DEEP / 100, "every entry once, the skipped directory's contents not");
    is_int(c.post, 1 + DEEP, "every directory walked into has its post");
    ok(c.order_ok, "posts come after the contents");
    is_int(util_rm_rf_at(AT_FDCWD, dir), 0, "rm -rf of the deep tree");
    setrlimit(RLIMIT_NOFILE, &old);
    ok(access(dir, F_OK) < 0, "it is gone");
}

/* A tree for the walks below: files interleaved with directories, a
 * chain deeper than the streams the walk keeps open, an entry after it. */
#define CHAIN 40

static int make_tree(int top)
{
    int made = 0;
    char name[64];
    for (int i = 0; i < 60; i++) {
        snprintf(name, sizeof name, i % 6 == 5 ? "s%02d" : "f%02d", i);
        if (i % 6 == 5) {
            made += mkdirat(top, name, 0755) == 0;
            int sub = openat(top, name, O_RDONLY | O_DIRECTORY);
            for (int j = 0; j < 20; j++) {
                char f[16];
                snprintf(f, sizeof f, "g%02d", j);
                int fd = openat(sub, f, O_WRONLY | O_CREAT, 0644);
                made += fd >= 0;
                close(fd);
            }
            close(sub);
        } else {
            int fd = openat(top, name, O_WRONLY | O_CREAT, 0644);
            made += fd >= 0;
            close(fd);
        }
    }
    int fd = dup(top);
    for (int i = 0; i < CHAIN && fd >= 0; i++) {
        made += mkdirat(fd, "c", 0755) == 0;
        for (int j = 0; j < 3; j++) {
            snprintf(name, sizeof name, "h%d", j);
            int f = openat(fd, name, O_WRONLY | O_CREAT, 0644);
            made += f >= 0;
            close(f);
        }
        int sub = openat(fd, "c", O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = sub;
    }
    close(fd);
    fd = openat(top, "zz", O_WRONLY | O_CREAT, 0644);
    made += fd >= 0;
    close(fd);
    return made;
}

/* What a walk saw: entries, posts, paths that do not spell the entry. */
struct seen {
    struct util_walk *w;
    int pre, post, bad_paths, stop_at, fails;
    bool remove;
};

static bool path_is(const char *path, const char *name, int depth)
{
    size_t n = strlen(path), m = strlen(name);
    int slashes = 0;
    for (const char *p = path; *p; p++)
        slashes += *p == '/';
    return n >= m && !strcmp(path + n - m, name) && slashes == depth - 1 && (n == m || path[n - m - 1] == '/');
}

static int seen_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct seen *c = ctx;
    if (depth == 0)
        return 0;
    c->pre++;
    if ((c->w->flags & UTIL_WALK_PATHS) && !path_is(c->w->path, name, depth))
        c->bad_paths++;
    if (c->stop_at && c->pre == c->stop_at)
        return UTIL_WALK_STOP;
    if (c->remove && !S_ISDIR(st->st_mode))
        return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
    if (!strcmp(name, "gone"))
        return renameat(dirfd, name, dirfd, "went") < 0 ? -errno : 0;
    return 0;
}

static int seen_post(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct seen *c = ctx;
    (void)st;
    if (depth == 0)
        return 0;
    c->post++;
    if ((c->w->flags & UTIL_WALK_PATHS) && !path_is(c->w->path, name, depth))
        c->bad_paths++;
    if (c->remove)
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
    return 0;
}

static int seen_fail(int dirfd, const char *name, const struct stat *st, int depth, int err, void *ctx)
{
    struct seen *c = ctx;
    (void)dirfd, (void)name, (void)st, (void)depth;
    c->fails++;
    return err == -ENOENT ? 0 : err;
}

static int skip_top(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    (void)dirfd, (void)name, (void)st, (void)depth;
    ((struct seen *)ctx)->pre++;
    return UTIL_WALK_SKIP;
}

static int walk_seen(int top, struct seen *c, unsigned flags, bool fail)
{
    struct util_walk w = {.pre = seen_pre, .post = seen_post, .fail = fail ? seen_fail : NULL, .ctx = c, .flags = flags};
    c->w = &w;
    c->pre = c->post = c->bad_paths = c->fails = 0;
    return util_walk_at(top, "", &w);
}

static int count_left(int top)
{
    DIR *d = util_opendir_at(top);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* Paths, a stop, a directory that cannot be opened, and the walk's own
 * removals, in a directory of base (a tmpfs: /dev/shm, and /tmp). */
static void test_walk_more(const char *base)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/rms-test-walk2-XXXXXX", base);
    if (!mkdtemp(dir)) {
        ok(1, "# skip %s: %s", base, strerror(errno));
        return;
    }
    int top = open(dir, O_RDONLY | O_DIRECTORY);
    int n = make_tree(top);
    struct seen c = {0};
    is_int(walk_seen(top, &c, UTIL_WALK_PATHS, false), 0, "%s: a walk with paths", base);
    is_int(c.pre, n, "%s: every entry once", base);
    is_int(c.post, 10 + CHAIN, "%s: every directory's post", base);
    is_int(c.bad_paths, 0, "%s: each path is the entry's, from the top", base);
    struct util_walk top_skip = {.pre = skip_top, .ctx = &c};
    c.pre = 0;
    ok(util_walk_at(top, "", &top_skip) == 0 && c.pre == 1, "%s: the top skipped, nothing below it is met", base);
    c.stop_at = 7;
    is_int(walk_seen(top, &c, 0, false), 0, "%s: a stopped walk ends with 0", base);
    ok(c.pre == 7 && c.post == 0, "%s: no call after the stop (%d, %d)", base, c.pre, c.post);
    c.stop_at = 0;
    ok(mkdirat(top, "gone", 0755) == 0, "%s: a directory that goes before the walk opens it", base);
    is_int(walk_seen(top, &c, 0, false), -ENOENT, "%s: without fail, the walk ends with its error", base);
    ok(renameat(top, "went", top, "gone") == 0, "%s: it is back", base);
    is_int(walk_seen(top, &c, 0, true), 0, "%s: fail passes over it", base);
    ok(c.fails == 1 && c.pre == n + 1, "%s: and the walk goes on (%d fails, %d of %d)", base, c.fails, c.pre, n + 1);
    ok(unlinkat(top, "went", AT_REMOVEDIR) == 0, "%s: tidied", base);
    c.remove = true;
    is_int(walk_seen(top, &c, UTIL_WALK_PATHS, false), 0, "%s: a walk removing what it is given", base);
    is_int(c.pre, n, "%s: it met every entry", base);
    is_int(count_left(top), 0, "%s: one walk leaves nothing", base);
    close(top);
    ok(rmdir(dir) == 0, "%s: cleanup", base);
}

/* As a uid that modes bind (the server's own in the unprivileged modes):
 * a directory of ours chmod 000 is opened with UTIL_WALK_FIX_MODES and is
 * fail's to judge without; a directory we may list but not search, deeper
 * than the streams kept open, is left from the top. The child's answer:
 * a bit per check that failed. */
#define NOBODY 65534

static int modes_child(const char *dir)
{
    int bad = 0;
    if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
        return 0xff;
    int top = open(dir, O_RDONLY | O_DIRECTORY);
    bool made = mkdirat(top, "shut", 0755) == 0;
    int fd = openat(top, "shut/x", O_WRONLY | O_CREAT, 0644);
    made = made && fd >= 0 && close(fd) == 0 && fchmodat(top, "shut", 0, 0) == 0;
    struct seen c = {0};
    bad |= !made;
    bad |= (walk_seen(top, &c, 0, true) != -EACCES || c.fails != 1) << 1;
    bad |= (walk_seen(top, &c, UTIL_WALK_FIX_MODES, true) != 0 || c.pre != 2 || c.fails != 0) << 2;
    fd = dup(top);
    for (int i = 0; i < 20 && fd >= 0; i++) {
        discard(mkdirat(fd, "c", 0755));
        int sub = openat(fd, "c", O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = sub;
    }
    made = fd >= 0 && mkdirat(fd, "r", 0400) == 0 && mkdirat(fd, "s", 0755) == 0;
    close(fd);
    bad |= !made << 3;
    bad |= (walk_seen(top, &c, 0, false) != 0 || c.pre != 2 + 20 + 2 || c.post != 1 + 20 + 2) << 4;
    close(top);
    return bad;
}

static void test_walk_modes(void)
{
    char dir[] = "/tmp/rms-test-walk3-XXXXXX";
    ok(mkdtemp(dir) != NULL && chown(dir, NOBODY, NOBODY) == 0, "a directory of uid %d", NOBODY);
    pid_t pid = fork();
    if (pid == 0)
        _exit(modes_child(dir));
    int status = 0;
    waitpid(pid, &status, 0);
    int bad = WIFEXITED(status) ? WEXITSTATUS(status) : 0xff;
    is_int(bad & 1, 0, "a shut directory of ours");
    is_int(bad & 2, 0, "without UTIL_WALK_FIX_MODES it is fail's (-EACCES)");
    is_int(bad & 4, 0, "with it, it is opened and walked");
    is_int(bad & 8, 0, "a directory listable, not searchable, 21 levels down");
    is_int(bad & 16, 0, "the walk comes back up from it, and on");
    is_int(util_rm_rf_at(AT_FDCWD, dir), 0, "cleanup");
}

/* util_dl_load: a library and its symbols, all or nothing, and the text
 * a caller shows when it cannot have them. */
/* util_cap_take's callbacks: entries named "e..." count 1, or their
 * number after "w" (a budget). */
static uint64_t cap_weigh(int dirfd, const char *name, void *ctx)
{
    (void)dirfd, (void)ctx;
    return name[0] == 'e' ? 1 : name[0] == 'w' ? strtoull(name + 1, NULL, 10) : 0;
}

static int cap_make(int dirfd, void *ctx)
{
    return mkdirat(dirfd, ctx, 0700) < 0 ? -errno : 0;
}

/* n processes, let go at once, each take one entry of a cap of max (each
 * weighing need; a count when need is 0). Returns how many made theirs;
 * *full: how many were told -EDQUOT. */
static int cap_race(int dfd, int n, uint64_t max, uint64_t need, int *full)
{
    int go[2];
    if (pipe(go) < 0)
        return -1;
    pid_t pids[128];
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            char c, name[64];
            close(go[1]);
            if (read(go[0], &c, 1) < 0)
                _exit(3);
            if (need)
                snprintf(name, sizeof name, "w%llu-%d", (unsigned long long)need, i);
            else
                snprintf(name, sizeof name, "e%d", i);
            struct util_cap cap = {.max = max, .need = need ? need : 1, .weigh = cap_weigh, .make = cap_make, .ctx = name};
            int rc = util_cap_take(dfd, &cap);
            _exit(rc == 0 ? 0 : rc == -EDQUOT ? 1 : 2);
        }
    }
    close(go[0]);
    close(go[1]); /* all of them go now */
    int made = 0;
    *full = 0;
    for (int i = 0; i < n; i++) {
        int st;
        if (pids[i] > 0 && waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st)) {
            made += WEXITSTATUS(st) == 0;
            *full += WEXITSTATUS(st) == 1;
        }
    }
    return made;
}

static int count_entries(const char *dir, char first)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += de->d_name[0] == first;
    if (d)
        closedir(d);
    return n;
}

static void test_cap(void)
{
    char dir[] = "/tmp/rms-test-cap-XXXXXX";
    ok(mkdtemp(dir) != NULL, "cap: a temporary directory");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    int full = 0;
    is_int(cap_race(dfd, 100, 37, 0, &full), 37, "cap: 100 processes racing for a cap of 37: exactly 37 make theirs");
    is_int(full, 63, "cap: and the 63 others are told the cap is reached");
    is_int(count_entries(dir, 'e'), 37, "cap: 37 entries on disk");
    is_int(cap_race(dfd, 10, 37, 0, &full), 0, "cap: at the cap, nobody more");
    int gone = -1;
    for (int i = 0; i < 100 && gone < 0; i++) {
        char name[16];
        snprintf(name, sizeof name, "e%d", i);
        gone = unlinkat(dfd, name, AT_REMOVEDIR) == 0 ? i : -1;
    }
    ok(gone >= 0, "cap: one entry goes (e%d)", gone);
    is_int(cap_race(dfd, 10, 37, 0, &full), 1, "cap: then exactly one more");
    /* A budget: weights, not a count (the request memory's). */
    is_int(cap_race(dfd, 100, 1000, 64, &full), 15, "cap: a budget of 1000 taken 64 at a time by 100: 15 fit");
    is_int(full, 85, "cap: the other 85 do not");
    char w2000[] = "w2000";
    struct util_cap big = {.max = 1000, .need = 2000, .weigh = cap_weigh, .make = cap_make, .ctx = w2000};
    is_int(util_cap_take(dfd, &big), -EDQUOT, "cap: more than the whole budget never fits");
    ok(faccessat(dfd, ".cap.lock", F_OK, 0) == 0, "cap: its lock file is in the directory");
    struct util_cap bad = {.max = 1, .need = 1};
    is_int(util_cap_take(dfd, &bad), -EINVAL, "cap: no callbacks: -EINVAL");
    close(dfd);
    discard(util_rm_rf_at(AT_FDCWD, dir));
}

static void test_dl(void)
{
    const char *(*version)(void) = NULL;
    void *missing = NULL;
    char err[256] = "";
    struct util_dl_sym one[] = {{"archive_version_string", (void **)&version}};
    is_int(util_dl_load(LIBARCHIVE_SONAME, false, one, ARRAY_SIZE(one), "", err, sizeof err), 0,
           "loads " LIBARCHIVE_SONAME " and its symbol");
    ok(version && !strncmp(version(), "libarchive ", 11), "and the symbol is the function");
    version = NULL;
    struct util_dl_sym two[] = {{"archive_version_string", (void **)&version},
                                {"rms_no_such_symbol", &missing}};
    is_int(util_dl_load(LIBARCHIVE_SONAME, false, two, ARRAY_SIZE(two), "x: ", err, sizeof err), -ENOSYS,
           "a symbol the library lacks: -ENOSYS");
    is_str(err, "x: " LIBARCHIVE_SONAME " lacks rms_no_such_symbol", "which the error names");
    ok(!version && !missing, "and no symbol is filled: all or nothing");
    is_int(util_dl_load("librms-no-such-library.so.0", true, one, ARRAY_SIZE(one), "y: ", err, sizeof err),
           -ENOENT, "a library that is not there: -ENOENT");
    const char *said = "y: cannot load librms-no-such-library.so.0: ";
    ok(!strncmp(err, said, strlen(said)), "which the error says (%s)", err);
    is_int(util_dl_load("librms-no-such-library.so.0", false, one, ARRAY_SIZE(one), "", NULL, 0), -ENOENT,
           "without room for the error");
}

int main(void)
{
    test_grow();
    test_strv();
    test_dbuf();
    test_utf8();
    test_sha256();
    test_sha256_hmac();
    test_human();
    test_files();
    test_walk();
    test_walk_more("/dev/shm");
    test_walk_more("/tmp");
    test_walk_modes();
    test_cap();
    test_dl();
    return tap_done();
}
