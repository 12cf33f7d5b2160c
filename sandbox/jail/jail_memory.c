/* jail_memory.c: the memory a run holds as a whole, where no memory cgroup
 * holds it (the jail run unprivileged, or as root without a usable
 * cgroup, and always the fallback). RLIMIT_AS binds each process alone;
 * this sum, which the executor's watch compares with `memory`, binds them
 * together.
 *
 * What counts: each process's anonymous and shared memory (and swap, as a
 * cgroup's memsw does); the files it holds memory through by descriptor
 * whether it maps them or not (a memfd, a deleted tmpfs file), each once
 * however many processes hold it; in the namespaces, the pages of the
 * run's own /tmp and /dev/shm. File pages (the interpreter, shared
 * libraries, the page cache) do not: they are the host's, shared with
 * every other user.
 *
 * How, cheaply: the counters each process keeps (/proc/PID/status:
 * RssAnon, RssShmem, VmSwap) cost no page-table walk, but a page shared
 * copy-on-write after a fork counts once in every process that maps it.
 * Their sum is an upper bound, so while it stays under the limit nothing
 * more is read. Past it, the exact count: the proportional sizes of
 * /proc/PID/smaps_rollup (Pss_Anon, Pss_Shmem, SwapPss), in which a page
 * mapped by N processes counts 1/N in each, so that the sum counts it
 * once.
 *
 * The same look at the descriptors serves the disk bound: a file deleted
 * while open still takes the disk of the workspace it was in, out of the
 * sight of the walk of the tree (jail_deleted_bytes). */
#include "config.h"

#include "jail_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define JAIL_PROC_TEXT_MAX 8192 /* /proc/PID/status and smaps_rollup: under 2 KiB, in one read */

#define JAIL_TMPFS_DIRS 2         /* the jail's /tmp and /dev/shm */

#define JAIL_DELETED_PACE 10      /* jail_deleted_bytes waits this many times as long as its last look took */

#define JAIL_FILES_FIRST 16       /* files a pass makes room for at first; it doubles as it grows */

/* A file that holds memory, by its identity: one that several processes
 * hold counts once. */
struct held_file {
    dev_t dev;
    ino_t ino;
    uint64_t bytes;
};

/* One pass over the run's processes. */
struct memory_pass {
    bool exact;       /* smaps_rollup's proportional sizes; else the status counters */
    uint64_t limit;   /* the pass may stop once the sum passes it */
    uint64_t bytes;
    dev_t disk;       /* nonzero: the pass counts deleted files of this device, not memory */
    dev_t own[JAIL_TMPFS_DIRS]; /* the jail's tmpfs devices, counted whole by their statfs */
    size_t n_own;
    struct held_file *files;    /* found in this pass, each as often as it is held */
    size_t n_files, cap_files;
};

/* The kB value of "key:" at the start of a line of a /proc text; false
 * when the text has no such line. */
static bool kb_field(const char *text, const char *key, uint64_t *bytes)
{
    size_t kl = strlen(key);
    for (const char *line = text; *line;) {
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            *bytes = strtoull(line + kl + 1, NULL, 10) * 1024;
            return true;
        }
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    return false;
}

/* The sum of the fields of keys in /proc/PID/FILE; false when the file
 * cannot be read (a process that ended meanwhile) or lacks the first key.
 * One read into the stack: this runs for every process at every watch. */
static bool proc_fields(pid_t pid, const char *file, const char *const *keys, size_t n, uint64_t *sum)
{
    char path[64], text[JAIL_PROC_TEXT_MAX];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t r;
    do
        r = read(fd, text, sizeof text - 1);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return false;
    text[r] = '\0';
    *sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        if (!kb_field(text, keys[i], &v) && i == 0)
            return false;
        *sum += v;
    }
    return true;
}

/* What one process holds: the counters, or the proportional sizes. An
 * older kernel's smaps_rollup has no Pss_Anon: then its Pss (file pages
 * too, in their share) stands in, and where it cannot be read the counters do. */
static uint64_t process_bytes(pid_t pid, bool exact)
{
    static const char *const quick[] = {"RssAnon", "RssShmem", "VmSwap"};
    static const char *const pss[] = {"Pss_Anon", "Pss_Shmem", "SwapPss"};
    static const char *const pss_old[] = {"Pss", "SwapPss"};
    uint64_t b = 0;
    if (exact && (proc_fields(pid, "smaps_rollup", pss, ARRAY_SIZE(pss), &b) ||
                  proc_fields(pid, "smaps_rollup", pss_old, ARRAY_SIZE(pss_old), &b)))
        return b;
    return proc_fields(pid, "status", quick, ARRAY_SIZE(quick), &b) ? b : 0;
}

/* Notes a file; without memory to note it, it goes uncounted (the sum may
 * miss a file, never fail). */
static void note_file(struct memory_pass *m, struct held_file f)
{
    if (UTIL_GROW(m->files, m->n_files, m->cap_files, JAIL_FILES_FIRST) < 0)
        return;
    m->files[m->n_files++] = f;
}

static int file_cmp(const void *a, const void *b)
{
    const struct held_file *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The pass's files, each once however many descriptors hold it: sorted,
 * since a run may hold open_files of them in each of its processes. */
static uint64_t files_bytes(struct memory_pass *m)
{
    uint64_t sum = 0;
    if (m->n_files == 0)
        return 0; /* no array at all yet: qsort wants one */
    qsort(m->files, m->n_files, sizeof *m->files, file_cmp);
    for (size_t i = 0; i < m->n_files; i++)
        if (i == 0 || file_cmp(&m->files[i - 1], &m->files[i]) != 0)
            sum += m->files[i].bytes;
    return sum;
}

/* Memory that a process holds through a descriptor, mapped or not: a
 * memfd, or a deleted file of another tmpfs (only the descriptors keep
 * it). No process's counters show it once it is unmapped. The jail's own
 * /tmp and /dev/shm are left to their statfs. */
static void add_descriptors(struct memory_pass *m, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    cleanup_dir DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat st;
        if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode) ||
            st.st_nlink != 0)
            continue;
        if (m->disk) {
            /* What the tree's walk would count of it: the larger of its
             * size and its blocks. */
            uint64_t blocks = (uint64_t)st.st_blocks * 512, size = (uint64_t)st.st_size;
            if (st.st_dev == m->disk)
                note_file(m, (struct held_file){st.st_dev, st.st_ino, size > blocks ? size : blocks});
            continue;
        }
        bool own = false;
        for (size_t i = 0; i < m->n_own; i++)
            own = own || m->own[i] == st.st_dev;
        char fpath[64 + sizeof de->d_name];
        struct statfs sf;
        snprintf(fpath, sizeof fpath, "%s/%s", path, de->d_name);
        if (own || statfs(fpath, &sf) < 0 || (sf.f_type != TMPFS_MAGIC && sf.f_type != HUGETLBFS_MAGIC))
            continue;
        note_file(m, (struct held_file){st.st_dev, st.st_ino, (uint64_t)st.st_blocks * 512});
    }
}

static int add_process(pid_t pid, void *ctx)
{
    struct memory_pass *m = ctx;
    m->bytes += process_bytes(pid, m->exact);
    add_descriptors(m, pid);
    /* Past the limit the quick pass has its answer (an exact one follows)
     * and the exact pass has its verdict; the files only add to it. */
    return m->bytes > m->limit;
}

/* A pass from its start: in the namespaces, the pages of the jail's /tmp
 * and /dev/shm, seen through init's root (ours to look into: init is our
 * child; nothing where it cannot be seen). */
static void pass_start(struct memory_pass *m, const struct jail_proc *p, bool exact, uint64_t limit)
{
    static const char *const dirs[JAIL_TMPFS_DIRS] = {"tmp", "dev/shm"};
    m->exact = exact;
    m->limit = limit;
    m->bytes = 0;
    m->n_own = 0;
    m->n_files = 0;
    for (size_t i = 0; p->mode == JAIL_MODE_NAMESPACES && i < ARRAY_SIZE(dirs); i++) {
        char path[64];
        struct statfs sf;
        struct stat st;
        snprintf(path, sizeof path, "/proc/%d/root/%s", (int)p->pid, dirs[i]);
        if (statfs(path, &sf) < 0 || stat(path, &st) < 0 || sf.f_blocks < sf.f_bfree)
            continue;
        m->bytes += (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
        m->own[m->n_own++] = st.st_dev;
    }
}

/* In the namespaces every process of the run descends from init; in the
 * fallback from us, their subreaper. */
static pid_t run_root(const struct jail_proc *p)
{
    return p->mode == JAIL_MODE_NAMESPACES ? p->pid : getpid();
}

static int add_descriptors_of(pid_t pid, void *ctx)
{
    add_descriptors(ctx, pid);
    return 0;
}

int jail_deleted_bytes(struct jail_proc *p, dev_t dev, uint64_t *bytes)
{
    *bytes = 0;
    if (p->pid <= 0 || p->reaped || dev == 0)
        return 0;
    /* A run of open_files descriptors in each of its processes makes a
     * look slow (a stat each): it is made less often, not dearer. */
    int64_t start = util_now_ms();
    if (start < p->deleted_next_ms) {
        *bytes = p->deleted_held;
        return 0;
    }
    struct memory_pass m = {.disk = dev};
    int rc = jail__tree_each(run_root(p), add_descriptors_of, &m);
    *bytes = p->deleted_held = files_bytes(&m);
    free(m.files);
    int64_t end = util_now_ms();
    p->deleted_next_ms = end + (end - start) * JAIL_DELETED_PACE;
    return rc < 0 ? rc : 0;
}

int jail_memory_check(struct jail_proc *p, uint64_t limit, uint64_t *held)
{
    *held = 0;
    if (p->cg_memory || limit == 0 || p->pid <= 0 || p->reaped)
        return 0; /* a cgroup holds the run, or nothing is left to hold */
    pid_t root = run_root(p);
    struct memory_pass m = {0};
    pass_start(&m, p, false, limit);
    discard(jail__tree_each(root, add_process, &m));
    uint64_t sum = m.bytes + files_bytes(&m);
    if (sum > limit) {
        pass_start(&m, p, true, limit);
        discard(jail__tree_each(root, add_process, &m));
        sum = m.bytes + files_bytes(&m);
    }
    free(m.files);
    *held = sum;
    return sum > limit;
}
