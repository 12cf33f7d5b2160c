/* test-artifacts.c: MIME sniffing, summaries, the safe walk and the zip. */
#include "config.h"

#include <archive.h>
#include <dirent.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art.h"
#include "tap.h"

static int dfd;

static void put(const char *name, const void *data, size_t n)
{
    unlinkat(dfd, name, 0);
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        printf("# cannot write %s\n", name);
    close(fd);
}

static const char *mime_of(const char *name)
{
    unsigned char head[4096];
    int fd = openat(dfd, name, O_RDONLY);
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return ws_mime(head, n > 0 ? (size_t)n : 0, name);
}

static char *summary_of(const char *name)
{
    int fd = openat(dfd, name, O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    char *s = art_summary(fd, mime_of(name), (uint64_t)st.st_size);
    close(fd);
    return s;
}

#define CHECK(name, data, n, want_mime, want_summary)                          \
    do {                                                                      \
        put(name, data, n);                                                   \
        is_str(mime_of(name), want_mime, "mime of %s", name);                 \
        char *s_ = summary_of(name);                                          \
        is_str(s_, want_summary, "summary of %s", name);                      \
        free(s_);                                                             \
    } while (0)

static void test_sniff(void)
{
    static const unsigned char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\1\0\0\0\0\x80\x08\x02\0\0\0";
    CHECK("a.png", png, sizeof png - 1, "image/png", "PNG image 256x128");
    CHECK("png-named.dat", png, sizeof png - 1, "image/png", "PNG image 256x128");
    /* JPEG: SOI, an APP0 segment, then SOF0 with 600x400. */
    static const unsigned char jpg[] = "\xff\xd8\xff\xe0\0\x10JFIF\0\1\1\0\0\1\0\1\0\0"
                                       "\xff\xc0\0\x11\x08\x01\x90\x02\x58\x03\x01\x22\0\x02\x11\x01\x03\x11\x01";
    CHECK("photo.jpg", jpg, sizeof jpg - 1, "image/jpeg", "JPEG image 600x400");
    static const unsigned char gif[] = "GIF89a\x20\0\x10\0\0\0\0";
    CHECK("x.gif", gif, sizeof gif - 1, "image/gif", "GIF image 32x16");
    static const unsigned char webp[] = "RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0\x63\0\0\x31\0\0";
    CHECK("w.webp", webp, sizeof webp - 1, "image/webp", "WebP image 100x50");
    CHECK("doc.pdf", "%PDF-1.7\n%...", 13, "application/pdf", "PDF document, 13 B");
    static const unsigned char zip[] = "PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    CHECK("e.zip", zip, sizeof zip - 1, "application/zip", "ZIP archive, 0 entries, 22 B");
    CHECK("sheet.xlsx", zip, sizeof zip - 1, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
          "22 B");
    const char *svg = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\"></svg>\n";
    CHECK("pic.svg", svg, strlen(svg), "image/svg+xml", "SVG image, 80 B");
    CHECK("pic-no-ext", svg, strlen(svg), "image/svg+xml", "SVG image, 80 B");
    const char *obj = "{\"a\": 1, \"b\": [1,2], \"c\": {}}\n";
    CHECK("d.json", obj, strlen(obj), "application/json", "JSON object with 3 keys");
    CHECK("noext", obj, strlen(obj), "application/json", "JSON object with 3 keys");
    const char *nb = "{\"cells\": [{\"cell_type\": \"markdown\"}, {\"cell_type\": \"code\", \"execution_count\": 1},"
                     " {\"cell_type\": \"code\", \"execution_count\": null}], \"nbformat\": 4}";
    CHECK("run.ipynb", nb, strlen(nb), "application/json", "Jupyter notebook (nbformat 4), 3 cells, 1 of 2 code cells run");
    CHECK("arr.json", "[1, 2, 3]", 9, "application/json", "JSON array of 3 items");
    CHECK("bad.json", "{\"a\": ", 6, "application/json", "JSON that does not parse: unexpected end of data, 6 B");
    CHECK("two.json", "{} {}", 5, "application/json", "JSON that does not parse, 5 B");
    const char *csv = "name,age,\"city, country\"\nann,31,\"Paris, FR\"\nbob,42,\"multi\nline\"\n";
    CHECK("people.csv", csv, strlen(csv), "text/csv", "CSV, 2 rows x 3 columns; header: name, age, city, country");
    CHECK("people-sniffed", csv, strlen(csv), "text/csv", "CSV, 2 rows x 3 columns; header: name, age, city, country");
    CHECK("nolast.csv", "a,b\n1,2", 7, "text/csv", "CSV, 1 row x 2 columns; header: a, b");
    CHECK("t.tsv", "a\tb\tc\n1\t2\t3\n", 12, "text/tab-separated-values", "TSV, 1 row x 3 columns; header: a, b, c");
    CHECK("notes.txt", "one\ntwo\nthree", 13, "text/plain", "text, 3 lines");
    CHECK("prose.txt", "Hello, world\nBye, now\n", 22, "text/plain", "text, 2 lines");
    CHECK("README.md", "# T\n\ntext\n", 10, "text/markdown", "Markdown, 3 lines");
    CHECK("s.py", "print(1)\n", 9, "text/x-python", "Python source, 1 line");
    CHECK("utf8.txt", "h\xc3\xa9llo\n", 7, "text/plain", "text, 1 line");
    CHECK("latin1.txt", "h\xe9llo\n", 6, "text/plain", "text, 1 line");
    CHECK("blob.bin", "\x00\x01\x02\xff", 4, "application/octet-stream", "4 B");
    CHECK("blob", "\x00\x01\x02\xff", 4, "application/octet-stream", "4 B");
    CHECK("empty.txt", "", 0, "text/plain", "empty file");
    CHECK("arr.npy", "\x93NUMPY\x01\x00", 8, "application/x-npy", "8 B");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_walk_and_zip(const char *root)
{
    int rfd = open(root, O_RDONLY | O_DIRECTORY);
    ok(mkdirat(rfd, "out", 0755) == 0, "output dir");
    int ofd = openat(rfd, "out", O_RDONLY | O_DIRECTORY);
    ok(mkdirat(ofd, "plots", 0755) == 0 && mkdirat(ofd, "plots/deep", 0755) == 0, "nested dirs");
    int fd = openat(ofd, "a.txt", O_WRONLY | O_CREAT, 0644);
    ok(fd >= 0 && write(fd, "alpha\n", 6) == 6, "a.txt");
    close(fd);
    fd = openat(ofd, "plots/deep/b.csv", O_WRONLY | O_CREAT, 0644);
    ok(fd >= 0 && write(fd, "x,y\n1,2\n", 8) == 8, "plots/deep/b.csv");
    close(fd);
    ok(symlinkat("/etc/passwd", ofd, "passwd-link") == 0, "a symlink to /etc/passwd");
    ok(symlinkat("/etc", ofd, "etc-dir") == 0, "a symlink to /etc");
    ok(mkfifoat(ofd, "fifo", 0644) == 0, "a FIFO");
    /* A hard link to a file outside output/, and a pair of links inside. */
    fd = openat(rfd, "secret", O_WRONLY | O_CREAT, 0600);
    ok(fd >= 0 && write(fd, "secret\n", 7) == 7, "a file outside");
    close(fd);
    ok(linkat(rfd, "secret", ofd, "hardlink-out", 0) == 0, "a hard link to it inside output/");
    fd = openat(ofd, "pair1", O_WRONLY | O_CREAT, 0644);
    ok(fd >= 0 && write(fd, "pair\n", 5) == 5, "pair1");
    close(fd);
    ok(linkat(ofd, "pair1", ofd, "plots/pair2", 0) == 0, "a second name for it inside output/");

    struct art_list l;
    is_int(art_collect(ofd, 100, 1 << 20, &l), 0, "collect");
    const char *want[] = {"a.txt", "pair1", "plots/deep/b.csv", "plots/pair2"};
    is_int((long long)l.n, 4, "four artifacts: no symlink, FIFO or shared hard link");
    for (size_t i = 0; i < l.n && i < 4; i++)
        is_str(l.v[i].path, want[i], "artifact %zu in path order", i);
    is_int((long long)l.skipped, 4, "skipped: 2 symlinks, a FIFO, a shared hard link");
    ok(l.limit == NULL, "no limit crossed");
    if (l.n == 4)
        is_str(l.v[2].summary, "CSV, 1 row x 2 columns; header: x, y", "summary in the list");

    is_int(mkdirat(rfd, "zipdir", 0755), 0, "zip dir");
    int zfd = openat(rfd, "zipdir", O_RDONLY | O_DIRECTORY);
    char err[256] = "";
    is_int(art_zip(ofd, &l, zfd, "artifacts.zip", err, sizeof err), 0, "zip written (%s)", err);
    struct stat st;
    ok(fstatat(zfd, "artifacts.zip", &st, 0) == 0 && st.st_size > 0, "the zip exists");

    /* Read it back with libarchive: the same names, the same bytes. */
    struct archive *a = archive_read_new();
    archive_read_support_format_zip(a);
    int zf = openat(zfd, "artifacts.zip", O_RDONLY);
    ok(archive_read_open_fd(a, zf, 16384) == ARCHIVE_OK, "the zip opens");
    struct archive_entry *e;
    char *names[16];
    int n = 0, bad = 0;
    while (n < 16 && archive_read_next_header(a, &e) == ARCHIVE_OK) {
        const char *p = archive_entry_pathname(e);
        names[n++] = strdup(p);
        if (p[0] == '/' || strstr(p, "..") || archive_entry_filetype(e) != AE_IFREG)
            bad++;
        char buf[64] = "";
        ssize_t got = archive_read_data(a, buf, sizeof buf - 1);
        if (!strcmp(p, "a.txt") && (got != 6 || memcmp(buf, "alpha\n", 6)))
            bad++;
    }
    archive_read_free(a);
    close(zf);
    is_int(n, 4, "four entries");
    is_int(bad, 0, "regular files only, relative names, intact bytes");
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n && i < 4; i++) {
        is_str(names[i], want[i], "zip entry %d", i);
        free(names[i]);
    }
    int left = 0;
    int dup = openat(zfd, ".", O_RDONLY | O_DIRECTORY);
    DIR *d = fdopendir(dup);
    struct dirent *de;
    while ((de = readdir(d)))
        left += de->d_name[0] == '.' && strstr(de->d_name, ".tmp") != NULL;
    closedir(d);
    is_int(left, 0, "no temporary file is left");
    art_list_free(&l);

    /* Limits: two files at most, then 10 bytes at most. */
    is_int(art_collect(ofd, 2, 1 << 20, &l), 0, "collect with output_files = 2");
    ok(l.n == 2 && l.limit && !strcmp(l.limit, "output_files"), "two listed, output_files named");
    art_list_free(&l);
    is_int(art_collect(ofd, 100, 10, &l), 0, "collect with output_bytes = 10");
    ok(l.n == 1 && l.limit && !strcmp(l.limit, "output_bytes"), "one listed, output_bytes named");
    art_list_free(&l);
    uint64_t files = 0, bytes = 0;
    is_int(art_measure(ofd, 0, 0, &files, &bytes), 0, "measure");
    is_int((long long)files, 5, "measure counts regular files (a shared link too: it takes room)");
    is_int(art_measure(ofd, 1, 0, &files, &bytes), 0, "measure with an early stop");
    is_int((long long)files, 2, "stops once past the stop value");

    /* A zip that cannot be completed is not left behind. */
    char gpath[] = "does-not-exist", gmime[] = "text/plain", gsum[] = "x";
    struct result_artifact ghost = {.path = gpath, .size = 1, .mime = gmime, .summary = gsum};
    struct art_list gl = {.v = &ghost, .n = 1};
    ok(art_zip(ofd, &gl, zfd, "broken.zip", err, sizeof err) < 0, "a zip of a missing file fails: %s", err);
    ok(faccessat(zfd, "broken.zip", F_OK, 0) < 0, "and no broken.zip exists");
    close(zfd);
    close(ofd);
    close(rfd);
}

/* Writes n bytes of x into dirfd/name. */
static void put_at(int dirfd, const char *name, size_t n)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    for (size_t done = 0; fd >= 0 && done < n; done += sizeof buf)
        discard(util_write_all(fd, buf, n - done < sizeof buf ? n - done : sizeof buf));
    if (fd >= 0)
        close(fd);
}

/* A chain of depth directories "d" below dirfd. */
/* Deeper than descriptors allow and than PATH_MAX spells. */
#define DEEP 2000

static void nest(int dirfd, int depth)
{
    int cur = dup(dirfd);
    for (int i = 0; i < depth && cur >= 0; i++) {
        discard(mkdirat(cur, "d", 0755));
        int next = openat(cur, "d", O_RDONLY | O_DIRECTORY);
        close(cur);
        cur = next;
    }
    if (cur >= 0) {
        put_at(cur, "deep.bin", 10);
        close(cur);
    }
}

/* Down to 64 descriptors (on), or back to what there was (off). */
static void few_descriptors(bool on)
{
    static struct rlimit old;
    if (on) {
        getrlimit(RLIMIT_NOFILE, &old);
        struct rlimit low = {64, old.rlim_max};
        setrlimit(RLIMIT_NOFILE, &low);
    } else {
        setrlimit(RLIMIT_NOFILE, &old);
    }
}

/* Deeper than descriptors go: measured to the bottom all the same (and
 * pruned in place by test_disk). before: the measure without it. */
static void test_deep(int wfd, const struct art_tally *before)
{
    nest(wfd, DEEP);
    few_descriptors(true);
    struct art_tally t = {.all_inodes = true}, part = {.all_inodes = true};
    struct art_part deep_part[] = {{"d", 0, 0, &part}};
    is_int(art_measure_tree(wfd, &t, deep_part, 1), 0, "measure a tree %d directories deep with 64 descriptors", DEEP);
    is_int((long long)(t.files - before->files), DEEP + 1, "every directory of it and the file at its bottom counted");
    is_int((long long)part.files, DEEP + 1, "all of it tallied in its part");
    ok(t.bytes >= before->bytes + 10, "its bytes too");
    struct art_tally capped = {.all_inodes = true, .stop_files = before->files + DEEP / 2};
    is_int(art_measure_tree(wfd, &capped, NULL, 0), 0, "measure the deep tree with a bound");
    ok(art_tally_over(&capped), "past the bound halfway down");
    few_descriptors(false);
}

static void test_disk(void)
{
    ok(mkdirat(dfd, "ws", 0755) == 0, "workspace dir");
    int wfd = openat(dfd, "ws", O_RDONLY | O_DIRECTORY);
    discard(mkdirat(wfd, "output", 0755));
    discard(mkdirat(wfd, "tmp", 0755));
    int ofd = openat(wfd, "output", O_RDONLY | O_DIRECTORY);
    int tfd = openat(wfd, "tmp", O_RDONLY | O_DIRECTORY);
    put_at(wfd, "scratch", 100000);
    put_at(ofd, "a.txt", 1000);
    put_at(tfd, "t", 5000);
    discard(symlinkat("/etc", wfd, "link"));
    struct stat ost;
    discard(fstat(ofd, &ost));

    struct art_tally total = {.all_inodes = true}, out = {0}, tmp = {.all_inodes = true};
    struct art_part parts[] = {{NULL, ost.st_dev, ost.st_ino, &out}, {"tmp", 0, 0, &tmp}};
    is_int(art_measure_tree(wfd, &total, parts, 2), 0, "measure a tree");
    is_int((long long)total.files, 6, "every inode counts: 3 files, 2 directories, a symlink (not followed)");
    ok(total.bytes >= 106000, "bytes: at least the files' sizes (%llu)", (unsigned long long)total.bytes);
    ok(out.files == 1 && out.bytes == 1000, "output/ tallied apart: regular files and their sizes");
    ok(tmp.files == 2 && tmp.bytes >= 5000, "tmp/ tallied apart, itself included");
    ok(!art_tally_over(&total), "measured whole, under no bound");

    struct art_tally capped = {.all_inodes = true, .stop_bytes = 50000};
    is_int(art_measure_tree(wfd, &capped, NULL, 0), 0, "measure with a bound");
    ok(art_tally_over(&capped), "past the bound");

    /* chmod 000 does not hide a directory from its owner's measure. */
    discard(mkdirat(wfd, "shut", 0755));
    int hfd = openat(wfd, "shut", O_RDONLY | O_DIRECTORY);
    put_at(hfd, "h", 70000);
    close(hfd);
    discard(fchmodat(wfd, "shut", 0, 0));
    struct art_tally t2 = {.all_inodes = true};
    is_int(art_measure_tree(wfd, &t2, NULL, 0), 0, "measure with a shut directory");
    ok(t2.bytes >= 176000, "what the shut directory holds is counted (%llu)",
       (unsigned long long)t2.bytes);

    test_deep(wfd, &t2);

    /* A prune by time: only what changed after since, the ctime of a
     * marker (as exec_disk.c takes it). What follows is written once the
     * file system's clock has moved past it (a coarse clock moves in
     * ticks): a wait for a condition, not for a time. */
    struct timespec since;
    struct stat mst;
    put_at(dfd, "marker", 1);
    discard(fstatat(dfd, "marker", &mst, 0));
    since = mst.st_ctim;
    for (long i = 0; i < 100000000; i++) {
        put_at(dfd, "probe", 1);
        discard(fstatat(dfd, "probe", &mst, 0));
        if (mst.st_ctim.tv_sec > since.tv_sec ||
            (mst.st_ctim.tv_sec == since.tv_sec && mst.st_ctim.tv_nsec > since.tv_nsec))
            break;
    }
    put_at(ofd, "new.txt", 10);
    discard(mkdirat(wfd, "fresh", 0755));
    int ffd = openat(wfd, "fresh", O_RDONLY | O_DIRECTORY);
    put_at(ffd, "f", 10);
    close(ffd);
    struct art_prune p = {.has_since = true, .since = since};
    is_int(art_prune(wfd, &p), 0, "prune what changed since");
    ok(faccessat(ofd, "new.txt", F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
           faccessat(wfd, "fresh", F_OK, AT_SYMLINK_NOFOLLOW) < 0,
       "the new file and directory are gone");
    ok(faccessat(ofd, "a.txt", F_OK, 0) == 0 && faccessat(wfd, "scratch", F_OK, 0) == 0 &&
           faccessat(wfd, "link", F_OK, AT_SYMLINK_NOFOLLOW) == 0,
       "the older ones stay");

    /* A prune to the listed files: output/ left holding its artifacts. */
    put_at(ofd, "b.txt", 10);
    discard(mkdirat(ofd, "sub", 0755));
    int sfd = openat(ofd, "sub", O_RDONLY | O_DIRECTORY);
    put_at(sfd, "c.txt", 10);
    put_at(sfd, "d.txt", 10);
    close(sfd);
    discard(symlinkat("a.txt", ofd, "ln"));
    char pa[] = "a.txt", pc[] = "sub/c.txt";
    struct result_artifact listed[] = {{.path = pa}, {.path = pc}};
    struct art_prune lp = {.listed = listed, .n_listed = 2};
    is_int(art_prune(ofd, &lp), 0, "prune output/ to its artifacts");
    ok(faccessat(ofd, "a.txt", F_OK, 0) == 0 && faccessat(ofd, "sub/c.txt", F_OK, 0) == 0, "the listed files stay");
    ok(faccessat(ofd, "b.txt", F_OK, 0) < 0 && faccessat(ofd, "sub/d.txt", F_OK, 0) < 0 &&
           faccessat(ofd, "ln", F_OK, AT_SYMLINK_NOFOLLOW) < 0,
       "the others, and the symlink, are gone");

    /* A prune of all but the kept names, the deep tree and the shut
     * directory included. */
    const char *keep[] = {"output", NULL};
    struct art_prune all = {.keep = keep};
    few_descriptors(true);
    is_int(art_prune(wfd, &all), 0, "prune all but output/, with 64 descriptors");
    few_descriptors(false);
    int left = 0;
    int d2 = dup(wfd);
    DIR *d = fdopendir(d2);
    struct dirent *de;
    rewinddir(d);
    while ((de = readdir(d)))
        left += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    is_int(left, 1, "only output/ is left");
    ok(faccessat(ofd, "a.txt", F_OK, 0) == 0, "with what it holds");
    close(tfd);
    close(ofd);
    close(wfd);
}

int main(void)
{
    char dir[] = "/tmp/rms-test-art-XXXXXX";
    ok(mkdtemp(dir) != NULL, "temporary directory");
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ok(mkdirat(dfd, "sniff", 0755) == 0, "sniff dir");
    int sfd = openat(dfd, "sniff", O_RDONLY | O_DIRECTORY);
    int root = dfd;
    dfd = sfd;
    test_sniff();
    dfd = root;
    close(sfd);
    test_walk_and_zip(dir);
    test_disk();
    ok(util_rm_rf_at(AT_FDCWD, dir) == 0, "cleanup");
    return tap_done();
}
