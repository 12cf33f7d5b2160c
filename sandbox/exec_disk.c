/* exec_disk.c: the disk a run may use. What the script can write (the run
 * directory of a run alone, a session's workspace; in the fallback the run
 * directory with its home/ and tmp/ too) is held to workspace_bytes and
 * workspace_files, output/ in it to output_bytes and output_files, and the
 * fallback's home/ and tmp/ to tmp_bytes and tmp_files, as the jail's
 * private /tmp is: measured while the script runs (the tick of
 * exec_script.c) and when it ends, with the one walk of art.c. Then
 * what a run leaves is pruned: the run directory keeps its record and
 * nothing the script wrote outside output/, and a session run that crossed
 * the bound loses what it wrote, so that the session is back under it. */
#include "config.h"

#include "exec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art.h"
#include "jail.h"
#include "workspace.h"

/* The tallies of one measure. */
struct disk_tally {
    struct art_tally ws, out, tmp;
};

/* The limit a tally passed: files_key when its count did, else bytes_key. */
static const char *passed(const struct art_tally *t, const char *files_key, const char *bytes_key)
{
    return t->stop_files && t->files > t->stop_files ? files_key : bytes_key;
}

static void say_limit(const char *what, const char *key, uint64_t v, bool bytes, char *err, size_t errlen)
{
    char hs[32];
    if (bytes)
        util_human_size(v, hs, sizeof hs);
    else
        snprintf(hs, sizeof hs, "%llu files", (unsigned long long)v);
    snprintf(err, errlen, "%s (%s = %s)", what, key, hs);
}

const char *exec__disk_over(struct run *run, struct jail_proc *proc, bool fallback, bool output, char *err,
                            size_t errlen)
{
    const struct exec_limits *lim = &run->spec->limits;
    struct disk_tally d = {
        .ws = {.all_inodes = true, .stop_files = lim->workspace_files, .stop_bytes = lim->workspace_bytes},
        .out = {.stop_files = output ? lim->output_files : 0, .stop_bytes = output ? lim->output_bytes : 0},
        .tmp = {.all_inodes = true, .stop_files = lim->tmp_files, .stop_bytes = lim->tmp_bytes},
    };
    struct stat ost;
    if (fstat(run->out_fd, &ost) < 0) {
        snprintf(err, errlen, "the workspace could not be measured (output/: %s)", strerror(errno));
        return "workspace_files";
    }
    /* output/ wherever the script moved it; home/ and tmp/ by name, as
     * HOME and TMPDIR name them. */
    struct art_part parts[] = {{NULL, ost.st_dev, ost.st_ino, &d.out}, {"home", 0, 0, &d.tmp}, {"tmp", 0, 0, &d.tmp}};
    bool session = run->spec->workspace != NULL;
    int rc = art_measure_tree(session ? run->session_lock : run->run_fd, &d.ws, parts,
                              fallback && !session ? ARRAY_SIZE(parts) : 1);
    /* A session run of the fallback writes its run directory too. */
    if (rc == 0 && session && fallback && !art_tally_over(&d.ws))
        rc = art_measure_tree(run->run_fd, &d.ws, parts + 1, 2);
    /* Files deleted while open take the workspace's disk still. */
    uint64_t held = 0;
    if (rc == 0 && proc && jail_deleted_bytes(proc, ost.st_dev, &held) == 0)
        d.ws.bytes += held;
    if (output && art_tally_over(&d.out))
        return passed(&d.out, "output_files", "output_bytes"); /* exec_script.c says so */
    if (rc < 0) {
        snprintf(err, errlen, "the workspace could not be measured (%s)", strerror(-rc));
        return "workspace_files";
    }
    if (fallback && art_tally_over(&d.tmp)) {
        const char *key = passed(&d.tmp, "tmp_files", "tmp_bytes");
        bool bytes = !strcmp(key, "tmp_bytes");
        say_limit("the run directory's home/ and tmp/ passed their limit", key, bytes ? lim->tmp_bytes : lim->tmp_files,
                  bytes, err, errlen);
        return key;
    }
    if (art_tally_over(&d.ws)) {
        const char *key = passed(&d.ws, "workspace_files", "workspace_bytes");
        bool bytes = !strcmp(key, "workspace_bytes");
        say_limit("the workspace passed its limit", key, bytes ? lim->workspace_bytes : lim->workspace_files, bytes,
                  err, errlen);
        return key;
    }
    return NULL;
}

static int a_file(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    (void)dirfd;
    if (depth == 1 && !strcmp(name, WS_MOUNTS_DIR))
        return UTIL_WALK_SKIP;
    if (S_ISDIR(st->st_mode))
        return UTIL_WALK_NEXT;
    *(bool *)ctx = true;
    return UTIL_WALK_STOP;
}

bool exec__disk_has_files(const char *workspace)
{
    bool found = false;
    struct util_walk w = {.pre = a_file, .ctx = &found};
    /* (a walk that fails: as if there were, the careful side) */
    return util_walk_at(AT_FDCWD, workspace, &w) < 0 || found;
}

int exec__disk_mark_open(struct run *run)
{
    /* The run directory itself, whose times the mark sets (the jail binds
     * it read-only; what a fallback script does to it comes after the
     * mark): a file made for it and removed after would free an inode
     * every run. */
    return fcntl(run->run_fd, F_DUPFD_CLOEXEC, 3);
}

void exec__disk_mark(struct run *run, const struct jail_mark *mark, struct timespec *since)
{
    struct stat st;
    if (mark && mark->taken) {
        *since = mark->at;
        return;
    }
    cleanup_fd int fd = exec__disk_mark_open(run);
    if (fd >= 0 && futimens(fd, NULL) == 0 && fstat(fd, &st) == 0) {
        *since = st.st_ctim;
        return;
    }
    /* No marker (a full disk): the clock, which may run a little ahead
     * of the files' stamps. */
    clock_gettime(CLOCK_REALTIME, since);
}

void exec__disk_cut(struct run *run, const struct timespec *since)
{
    struct art_prune p = {.has_since = true, .since = *since};
    int rc = art_prune(run->session_lock, &p);
    char hs[32];
    util_human_size(p.bytes, hs, sizeof hs);
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "removing what the run wrote from its session's workspace: %s", strerror(-rc));
    exec__system_line(run,
                      "[runmyscript] the files this run wrote were removed from the session's workspace "
                      "(%llu names, %s)%s, to bring it back under its limits",
                      (unsigned long long)p.files, hs, rc < 0 ? ", as far as they could be" : "");
}

/* script.py and input as the run was given them: a script that could write
 * its run directory (a run alone, or the fallback) may have replaced them
 * with something else, or something bigger. */
static int restore_file(int run_fd, const char *name, const char *data, size_t len)
{
    struct stat st;
    if (fstatat(run_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
        (uint64_t)st.st_size == len)
        return 0;
    if (unlinkat(run_fd, name, 0) < 0 && errno != ENOENT) {
        int rc = util_rm_rf_at(run_fd, name);
        if (rc < 0)
            return rc;
    }
    return util_write_file_new(run_fd, name, data ? data : "", len, 0644);
}

void exec__disk_tidy(struct run *run)
{
    const struct exec_spec *spec = run->spec;
    struct result *r = run->r;
    /* output/ is kept only when it is the directory collected: one made
     * in its place holds nothing of the result. */
    struct stat ost, st;
    bool out_here = fstat(run->out_fd, &ost) == 0 && fstatat(run->run_fd, "output", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    st.st_dev == ost.st_dev && st.st_ino == ost.st_ino;
    const char *keep[5] = {"script.py", "input"};
    size_t n = 2;
    /* A session run's own output/ is the snapshot, made by us. */
    if (out_here || spec->workspace)
        keep[n++] = "output";
    if (r->has_zip)
        keep[n++] = "artifacts.zip";
    keep[n] = NULL;
    struct art_prune p = {.keep = keep};
    int rc = art_prune(run->run_fd, &p);
    /* A run's own output/ holds its artifacts and nothing more: not what
     * was past output_bytes or output_files, nor links, FIFOs and the like
     * (a session's is shared by its runs: its run has a copy). */
    if (out_here && !spec->workspace && r->status != RESULT_STATUS_SANDBOX_ERROR) {
        struct art_prune o = {.listed = r->artifacts, .n_listed = r->n_artifacts};
        int orc = art_prune(run->out_fd, &o);
        p.files += o.files;
        rc = rc < 0 ? rc : orc;
    }
    /* Each step whatever the one before it did: the first failure is told. */
    int src = run->script ? restore_file(run->run_fd, "script.py", run->script, run->script_len)
                          : restore_file(run->run_fd, "script.py", spec->code, spec->code_len);
    int irc = restore_file(run->run_fd, "input", spec->input, spec->input_len);
    rc = rc < 0 ? rc : src < 0 ? src : irc;
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "removing what the script left in the run directory: %s", strerror(-rc));
    else if (p.files)
        log_msg(LOG_LVL_DEBUG, "removed %llu names the script left in the run directory",
                (unsigned long long)p.files);
}
