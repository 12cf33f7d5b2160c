/* test-cfg.c: the configuration file, environment and --set; every key
 * driven through its row; the documentation's tables against the rows.
 * `test-cfg --doc-table` prints the tables doc/configuration.md must hold. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg_internal.h"
#include "tap.h"

static char dir[] = "/tmp/rms-test-cfg-XXXXXX";

static const char *write_conf(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_units(void)
{
    int64_t ms;
    uint64_t b;
    bool v;
    ok(cfg_parse_duration("60", &ms) == 0 && ms == 60000, "60 is seconds");
    ok(cfg_parse_duration("1.5s", &ms) == 0 && ms == 1500, "1.5s");
    ok(cfg_parse_duration("250ms", &ms) == 0 && ms == 250, "250ms");
    ok(cfg_parse_duration("2m", &ms) == 0 && ms == 120000, "2m");
    ok(cfg_parse_duration("1h", &ms) == 0 && ms == 3600000, "1h");
    ok(cfg_parse_duration("-1", &ms) < 0, "no negative durations");
    ok(cfg_parse_duration("10x", &ms) < 0, "unknown unit");
    ok(cfg_parse_duration("", &ms) < 0, "empty");
    ok(cfg_parse_duration("nan", &ms) < 0, "nan");
    ok(cfg_parse_size("1048576", &b) == 0 && b == 1048576, "bytes");
    ok(cfg_parse_size("64K", &b) == 0 && b == 65536, "64K");
    ok(cfg_parse_size("1.5M", &b) == 0 && b == 1572864, "1.5M");
    ok(cfg_parse_size("2GiB", &b) == 0 && b == 2147483648ull, "2GiB");
    ok(cfg_parse_size("2gb", &b) == 0 && b == 2147483648ull, "units are case-insensitive");
    ok(cfg_parse_size("1.5", &b) < 0, "no fractional bytes");
    ok(cfg_parse_size("0x10", &b) < 0, "no hex");
    ok(cfg_parse_size("99999999999T", &b) < 0, "overflow");
    ok(cfg_parse_bool("on", &v) == 0 && v, "on");
    ok(cfg_parse_bool("OFF", &v) == 0 && !v, "OFF");
    ok(cfg_parse_bool("maybe", &v) < 0, "maybe");
}

/* Every line of a dump, given back as --set, gives the same dump: the
 * values are in a form cfg_set reads (but those that say something else:
 * a secret's "(set)", "auto (64)", an empty value). */
static void test_dump_reads_back(const char *dump)
{
    const char *sets[256];
    char *copy = strdup(dump ? dump : ""), *save = NULL;
    size_t n = 0;
    for (char *line = strtok_r(copy, "\n", &save); line && n < ARRAY_SIZE(sets); line = strtok_r(NULL, "\n", &save)) {
        char *eq = strstr(line, " = ");
        if (line[0] == '#' || !eq || !eq[3] || strchr(eq + 3, '(') || strchr(eq + 3, ' '))
            continue;
        memmove(eq + 1, eq + 3, strlen(eq + 3) + 1);
        eq[0] = '=';
        sets[n++] = line;
    }
    struct cfg c;
    char err[512] = "";
    is_int(cfg_load(&c, NULL, NULL, sets, n, err, sizeof err), 0, "every value of the dump reads back (%s)", err);
    char *again = cfg_dump(&c);
    ok(again && dump && !strcmp(again, dump), "and gives the same dump");
    free(again);
    cfg_free(&c);
    free(copy);
}

static void test_load(void)
{
    struct cfg c;
    char err[512] = "";
    const char *f = write_conf("a.conf", "# comment\n\nstate_dir = /tmp/rms-state-x\n"
                                         "timeout = 5\nmemory=512M\n  log_bytes = 2K  \n"
                                         "script_network = on\nisolation = rlimits\nrequire_isolation = off\n");
    unsetenv("RUNMYSCRIPT_TIMEOUT");
    is_int(cfg_load(&c, f, NULL, NULL, 0, err, sizeof err), 0, "a file loads (%s)", err);
    is_str(c.state_dir, "/tmp/rms-state-x", "state_dir");
    is_int(c.exec.limits.wall_ms, 5000, "timeout");
    is_int((long long)c.exec.limits.memory, 512ll << 20, "memory");
    is_int((long long)c.exec.limits.log_bytes, 2048, "log_bytes with spaces around");
    is_int(c.exec.script_network, NET_MODE_ON, "script_network = on: the run's own network through the policy");
    ok(c.exec.isolation == EXEC_ISOLATION_RLIMITS, "isolation");
    is_str(c.exec.state_dir, "/tmp/rms-state-x", "the exec config points at the value");
    cfg_free(&c);

    setenv("RUNMYSCRIPT_TIMEOUT", "7", 1);
    is_int(cfg_load(&c, f, NULL, NULL, 0, err, sizeof err), 0, "with the environment");
    is_int(c.exec.limits.wall_ms, 7000, "the environment beats the file");
    cfg_free(&c);
    const char *sets[] = {"timeout=9", "python=/usr/bin/python3"};
    is_int(cfg_load(&c, f, NULL, sets, 2, err, sizeof err), 0, "with --set");
    is_int(c.exec.limits.wall_ms, 9000, "--set beats the environment");
    cfg_free(&c);
    unsetenv("RUNMYSCRIPT_TIMEOUT");

    const char *bad_sets[] = {"bogus=1"};
    ok(cfg_load(&c, f, NULL, bad_sets, 1, err, sizeof err) < 0, "an unknown --set key fails");
    ok(strstr(err, "unknown configuration key 'bogus'") != NULL, "and says so: %s", err);
    cfg_free(&c);
    const char *bad_val[] = {"memory=lots"};
    ok(cfg_load(&c, f, NULL, bad_val, 1, err, sizeof err) < 0, "a bad value fails");
    ok(strstr(err, "memory = 'lots'") != NULL, "and names it: %s", err);
    cfg_free(&c);
    const char *range[] = {"timeout=0"};
    ok(cfg_load(&c, f, NULL, range, 1, err, sizeof err) < 0, "a value out of range fails");
    ok(strstr(err, "out of range") != NULL, "and says so: %s", err);
    cfg_free(&c);

    const char *contra[] = {"isolation=rlimits", "require_isolation=on"};
    ok(cfg_load(&c, NULL, NULL, contra, 2, err, sizeof err) < 0, "isolation = rlimits with require_isolation = on fails");
    ok(strstr(err, "require_isolation = off") != NULL, "and says what to do: %s", err);
    cfg_free(&c);
    const char *unfiltered[] = {"script_network=host-unfiltered", "egress_allow=*.example.org, 198.51.100.0/24:443"};
    is_int(cfg_load(&c, NULL, NULL, unfiltered, 2, err, sizeof err), 0, "host-unfiltered and a list load (%s)", err);
    is_int(c.exec.script_network, NET_MODE_HOST_UNFILTERED, "script_network = host-unfiltered");
    is_str(c.exec.egress_allow, "*.example.org, 198.51.100.0/24:443", "the executor gets egress_allow as given");
    ok(c.exec.egress_deny == NULL, "and no egress_deny");
    cfg_free(&c);
    const char *old_bool[] = {"script_network=yes"};
    ok(cfg_load(&c, NULL, NULL, old_bool, 1, err, sizeof err) < 0, "script_network takes its three names only");
    cfg_free(&c);
    const char *octal[] = {"egress_deny=0177.0.0.1"};
    ok(cfg_load(&c, NULL, NULL, octal, 1, err, sizeof err) < 0, "an octal address in egress_deny fails");
    ok(strstr(err, "egress_deny: bad rule '0177.0.0.1'") != NULL, "and names the key and the rule: %s", err);
    cfg_free(&c);
    const char *uids[] = {"uid_count=0"};
    ok(cfg_load(&c, NULL, NULL, uids, 1, err, sizeof err) < 0, "uid_count = 0 fails");
    cfg_free(&c);

    f = write_conf("b.conf", "timeout = 5\nwhat is this\n");
    ok(cfg_load(&c, f, NULL, NULL, 0, err, sizeof err) < 0, "a line without = fails");
    ok(strstr(err, "b.conf:2:") != NULL, "with file and line: %s", err);
    cfg_free(&c);
    f = write_conf("c.conf", "nope = 1\n");
    ok(cfg_load(&c, f, NULL, NULL, 0, err, sizeof err) < 0, "an unknown key in a file fails");
    ok(strstr(err, "c.conf:1:") != NULL, "with file and line: %s", err);
    cfg_free(&c);
    ok(cfg_load(&c, "/nonexistent/x.conf", NULL, NULL, 0, err, sizeof err) < 0, "a missing explicit file fails");
    cfg_free(&c);
    setenv("RUNMYSCRIPT_NOPE", "1", 1);
    ok(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err) < 0, "an unknown RUNMYSCRIPT_ variable fails");
    ok(strstr(err, "RUNMYSCRIPT_NOPE") != NULL, "and names it: %s", err);
    cfg_free(&c);
    unsetenv("RUNMYSCRIPT_NOPE");

    /* RUNMYSCRIPT_CONFIG finds the file; a relative state_dir becomes absolute. */
    f = write_conf("d.conf", "state_dir = rel/state\n");
    setenv("RUNMYSCRIPT_CONFIG", f, 1);
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "RUNMYSCRIPT_CONFIG");
    ok(c.state_dir[0] == '/' && strstr(c.state_dir, "/rel/state"), "relative paths become absolute: %s",
       c.state_dir);
    cfg_free(&c);
    unsetenv("RUNMYSCRIPT_CONFIG");

    /* Next to the program. */
    write_conf("runmyscript.conf", "timeout = 3\n");
    char self[300];
    snprintf(self, sizeof self, "%s/runmyscript.cgi", dir);
    is_int(cfg_load(&c, NULL, self, NULL, 0, err, sizeof err), 0, "the file next to the program");
    is_int(c.exec.limits.wall_ms, 3000, "is read");
    cfg_free(&c);

    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "no file at all");
    char *dump = cfg_dump(&c);
    ok(dump && strstr(dump, "timeout = 1m\n") && strstr(dump, "log_bytes = 1M\n") && strstr(dump, "memory = 2G\n"),
       "cfg_dump shows the defaults");
    ok(dump && strstr(dump, "\nrun_ttl = 24h\n") && strstr(dump, "\nrequest_bytes = 96M\n") &&
           strstr(dump, "\nretry_after = 2s\n") && strstr(dump, "\nimage_inline_bytes = 512K\n") &&
           strstr(dump, "\nkill_grace = 2s\n"),
       "sizes and durations in the units the documentation writes (24h, 96M, 2s, 512K)");
    test_dump_reads_back(dump);
    int keys = 0;
    for (const char *const *k = cfg_keys(); *k; k++) {
        char pat[80];
        snprintf(pat, sizeof pat, "\n%s = ", *k);
        keys += strstr(dump, pat) != NULL;
    }
    int nkeys = 0;
    for (const char *const *k = cfg_keys(); *k; k++)
        nkeys++;
    is_int(keys, nkeys, "cfg_dump shows every key");
    free(dump);
    cfg_free(&c);
}

/* The keys of the dependencies: installer, index, import map, cache. */
static void test_deps_keys(void)
{
    struct cfg c;
    char err[512] = "", data[400], set_data[420];
    const char *top = getenv("top_srcdir");
    snprintf(data, sizeof data, "%s/data", top ? top : ".");
    snprintf(set_data, sizeof set_data, "data_dir=%s", data);
    const char *sets[] = {"installer=pip", "index_url=none", "extra_index_url=none", "find_links=file:///w /x",
                          "only_binary=off", "auto_deps=off", "requirement_urls=on", "env_cache_size=512M",
                          "install_time=90", set_data, "package_store=off", "store_bytes=3G"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "every dependency key sets: %s", err);
    const struct exec_deps_config *d = &c.exec.deps;
    ok(d->installer == EXEC_INSTALLER_PIP, "installer pip");
    is_str(d->index_url, "none", "index_url none (offline)");
    ok(d->extra_index_url == NULL, "extra_index_url none is no URL");
    is_str(d->find_links, "file:///w /x", "find_links, a list");
    ok(!d->only_binary && !c.exec.auto_deps && d->requirement_urls, "the switches");
    is_int((long long)d->cache_bytes, 512ll << 20, "env_cache_size 512M");
    ok(!d->package_store, "package_store off");
    is_int((long long)d->store_bytes, 3ll << 30, "store_bytes 3G");
    is_int(c.exec.limits.install_ms, 90000, "install_time 90 s");
    is_str(d->data_dir, data, "data_dir");
    cfg_free(&c);
    /* A data_dir without the map is the configuration's error. */
    const char *nowhere[] = {"data_dir=/nonexistent/rms-data"};
    is_int(cfg_load(&c, NULL, NULL, nowhere, 1, err, sizeof err), -EINVAL, "a data_dir without import-names.tsv is refused");
    ok(strstr(err, "data_dir = /nonexistent/rms-data") && strstr(err, "No such file"), "naming the key and why: %s", err);
    cfg_free(&c);
    const char *defaults[] = {"index_url=default", "installer=auto", "extra_index_url=", "find_links=none"};
    is_int(cfg_load(&c, NULL, NULL, defaults, ARRAY_SIZE(defaults), err, sizeof err), 0, "the defaults by name");
    ok(c.exec.deps.index_url == NULL && c.exec.deps.find_links == NULL && c.exec.deps.extra_index_url == NULL,
       "index_url default is the installer's own; empty lists are none");
    ok(c.exec.deps.installer == EXEC_INSTALLER_AUTO && c.exec.deps.only_binary && c.exec.auto_deps,
       "installer auto, only_binary and auto_deps on by default");
    is_str(c.exec.deps.data_dir, "", "data_dir empty by default: the built-in import map");
    is_int((long long)c.exec.deps.cache_bytes, 10ll << 30, "env_cache_size defaults to 10G");
    ok(c.exec.deps.package_store, "package_store on by default");
    is_int((long long)c.exec.deps.store_bytes, 20ll << 30, "store_bytes defaults to 20G");
    cfg_free(&c);
    const char *bad[] = {"installer=conda"};
    ok(cfg_load(&c, NULL, NULL, bad, 1, err, sizeof err) < 0 && strstr(err, "auto, uv or pip"),
       "installer = conda is refused: %s", err);
    cfg_free(&c);
    const char *bad2[] = {"env_cache_size=lots"};
    ok(cfg_load(&c, NULL, NULL, bad2, 1, err, sizeof err) < 0, "a bad size is refused: %s", err);
    cfg_free(&c);
    const char *bad2s[] = {"store_bytes=much"};
    ok(cfg_load(&c, NULL, NULL, bad2s, 1, err, sizeof err) < 0, "a bad store_bytes is refused: %s", err);
    cfg_free(&c);
    setenv("RUNMYSCRIPT_STORE_BYTES", "7G", 1);
    setenv("RUNMYSCRIPT_PACKAGE_STORE", "off", 1);
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "store keys from the environment");
    ok(!c.exec.deps.package_store && c.exec.deps.store_bytes == 7ull << 30,
       "RUNMYSCRIPT_PACKAGE_STORE and RUNMYSCRIPT_STORE_BYTES are read");
    unsetenv("RUNMYSCRIPT_STORE_BYTES");
    unsetenv("RUNMYSCRIPT_PACKAGE_STORE");
    cfg_free(&c);
    const char *bad3[] = {"install_time=0.5"};
    ok(cfg_load(&c, NULL, NULL, bad3, 1, err, sizeof err) < 0 && strstr(err, "out of range"),
       "install_time below its minimum: %s", err);
    cfg_free(&c);
}

/* The 2026-07-28 keys: task_after, task_ttl, tools_list_ttl (durations;
 * task_after 0 is "a task at once"). */
static void test_modern_keys(void)
{
    struct cfg c;
    char err[512] = "";
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "the defaults");
    ok(c.task_after_ms == 5000 && c.task_ttl_ms == 3600000 && c.tools_list_ttl_ms == 300000,
       "task_after 5 s, task_ttl 1 h, tools_list_ttl 5 min");
    cfg_free(&c);
    const char *sets[] = {"task_after=0", "task_ttl=10m", "tools_list_ttl=250ms"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "each of them sets");
    ok(c.task_after_ms == 0 && c.task_ttl_ms == 600000 && c.tools_list_ttl_ms == 250, "to what was said");
    cfg_free(&c);
    const char *bad[] = {"task_after=soon"};
    ok(cfg_load(&c, NULL, NULL, bad, 1, err, sizeof err) < 0 && strstr(err, "task_after"),
       "task_after that is not a duration is refused: %s", err);
    cfg_free(&c);
}

/* The warm pool's keys: they reach the executor, their ranges and the
 * module names are checked, the defaults. */
static void test_warm_keys(void)
{
    struct cfg c;
    char err[512] = "";
    const char *sets[] = {"warm=off", "warm_envs=2", "warm_idle=30s", "warm_memory=256M", "warm_runs=7",
                          "warm_lifetime=2m", "warm_modules=numpy pandas,matplotlib.pyplot", "warm_wait=10s",
                          "warm_spares=5"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "every warm key sets");
    const struct exec_warm *w = &c.exec.warm;
    ok(!w->on && w->envs == 2 && w->idle_ms == 30000 && w->memory == 256ull << 20 && w->runs == 7 &&
           w->lifetime_ms == 120000 && w->wait_ms == 10000 && w->spares == 5,
       "they reach the executor");
    is_str(w->modules, "numpy pandas,matplotlib.pyplot", "warm_modules, a list");
    cfg_free(&c);
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "the defaults");
    ok(c.exec.warm.on && c.exec.warm.envs == 4 && c.exec.warm.wait_ms == 3000 && c.exec.warm.memory == 1ull << 30 && c.exec.warm.runs == 1000 &&
           !strcmp(c.exec.warm.modules, "") && c.exec.warm.spares == 2,
       "warm on, 4 environments, 1G, 1000 runs, no extra modules, 2 spares by default");
    cfg_free(&c);
    const char *bad[] = {"warm_modules=os;rm"};
    ok(cfg_load(&c, NULL, NULL, bad, 1, err, sizeof err) < 0 && strstr(err, "module names"),
       "a module list with other characters is refused: %s", err);
    cfg_free(&c);
    const char *bad2[] = {"warm_envs=0"};
    ok(cfg_load(&c, NULL, NULL, bad2, 1, err, sizeof err) < 0 && strstr(err, "out of range"),
       "warm_envs below 1: %s", err);
    cfg_free(&c);
    const char *bad3[] = {"warm_spares=9"};
    ok(cfg_load(&c, NULL, NULL, bad3, 1, err, sizeof err) < 0 && strstr(err, "out of range"),
       "warm_spares above 8: %s", err);
    cfg_free(&c);
    char *dump = NULL;
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "loads for the dump");
    dump = cfg_dump(&c);
    ok(dump && strstr(dump, "warm = on\n") && strstr(dump, "warm_memory = 1G\n") && strstr(dump, "warm_modules = none\n"),
       "runmyscript config prints the warm keys");
    free(dump);
    cfg_free(&c);
}

/* The kernels' keys: they reach the executor (but on and server, which
 * serve sets), their ranges, the defaults and the dump. */
static void test_kernel_keys(void)
{
    struct cfg c;
    char err[512] = "";
    const char *sets[] = {"kernel_idle=90s", "max_kernels=3", "kernel_memory=512M", "kernel_grace=1500ms"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "every kernel key sets");
    const struct exec_kernels *k = &c.exec.kernels;
    ok(!k->on && k->server == 0 && k->idle_ms == 90000 && k->max == 3 && k->memory == 512ull << 20 &&
           k->grace_ms == 1500,
       "they reach the executor; kernels stay off until a server turns them on");
    cfg_free(&c);
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "the defaults");
    ok(c.exec.kernels.idle_ms == 600000 && c.exec.kernels.max == 64 && c.exec.kernels.memory == 8ull << 30 &&
           c.exec.kernels.grace_ms == 5000,
       "kernel_idle 10 min, 64 kernels, 8G, a grace of 5 s by default");
    char *dump = cfg_dump(&c);
    ok(dump && strstr(dump, "kernel_idle = 10m\n") && strstr(dump, "max_kernels = 64\n") &&
           strstr(dump, "kernel_memory = 8G\n") && strstr(dump, "kernel_grace = 5s\n"),
       "runmyscript config prints the kernel keys, durations in the largest unit that holds them exactly");
    ok(dump && strstr(dump, "mount_root = none\n") && strstr(dump, "allowed_origins = none\n") &&
           strstr(dump, "public_url = none\n"),
       "an empty optional string is spelled none in every key");
    free(dump);
    cfg_free(&c);
    const char *bad[] = {"max_kernels=5000"};
    ok(cfg_load(&c, NULL, NULL, bad, 1, err, sizeof err) < 0 && strstr(err, "out of range"),
       "max_kernels past its ceiling: %s", err);
    cfg_free(&c);
    const char *bad2[] = {"kernel_grace=soon"};
    ok(cfg_load(&c, NULL, NULL, bad2, 1, err, sizeof err) < 0 && strstr(err, "kernel_grace"),
       "kernel_grace that is not a duration: %s", err);
    cfg_free(&c);
}

/* The admission keys: they reach the executor, their ranges
 * hold, and workers = 0 makes room for every running and queued run. */
static void test_admission_keys(void)
{
    struct cfg c;
    char err[512] = "";
    const char *sets[] = {"max_concurrent_runs=3", "max_queued_runs=40", "queue_wait=90s", "retry_after=5",
                          "cancel_on_disconnect=on"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "every admission key sets");
    ok(c.exec.admit.max_running == 3 && c.exec.admit.max_queued == 40 && c.exec.admit.queue_wait_ms == 90000 &&
           c.exec.retry_after_ms == 5000 && c.cancel_on_disconnect,
       "they reach the executor");
    is_int((int)cfg_workers(&c), 3 + 40 + CFG_SPARE_WORKERS, "workers = 0: running + queued + spare");
    cfg_free(&c);
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "the defaults");
    ok(c.exec.admit.max_running == 0 && c.max_queued_runs == CFG_AUTO && c.exec.admit.queue_wait_ms == 60000 &&
           c.exec.retry_after_ms == 2000 && !c.cancel_on_disconnect,
       "max_concurrent_runs 0 (the CPUs), max_queued_runs auto, queue_wait 60 s, retry_after 2 s, finish on disconnect");
    /* auto: 32 a CPU, at least 64, within an eighth of the memory at 4 MiB
     * a call. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t mem_q = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 8 / (4u << 20);
    uint64_t want = 32 * (uint64_t)cpus > 64 ? 32 * (uint64_t)cpus : 64;
    if (want > mem_q)
        want = mem_q;
    is_int((long long)c.exec.admit.max_queued, (long long)want, "auto: %llu queue places here (%ld CPUs)",
           (unsigned long long)want, cpus);
    ok(c.exec.admit.max_queued >= 64 || mem_q < 64, "at least 64 where the memory holds them");
    ok(cfg_workers(&c) >= exec_admit_max_running(&c.exec.admit) + c.exec.admit.max_queued + CFG_SPARE_WORKERS,
       "the default workers fit them");
    cfg_free(&c);
    const char *autoq[] = {"max_queued_runs=auto", "max_concurrent_runs=3"};
    is_int(cfg_load(&c, NULL, NULL, autoq, 2, err, sizeof err), 0, "max_queued_runs = auto by name");
    ok(c.max_queued_runs == CFG_AUTO && c.exec.admit.max_queued == want, "the same count");
    cfg_free(&c);
    const char *noq[] = {"max_queued_runs=0"};
    is_int(cfg_load(&c, NULL, NULL, noq, 1, err, sizeof err), 0, "max_queued_runs = 0");
    is_int((int)c.exec.admit.max_queued, 0, "no queue");
    cfg_free(&c);
    const char *bad[] = {"max_concurrent_runs=5000"};
    ok(cfg_load(&c, NULL, NULL, bad, 1, err, sizeof err) < 0 && strstr(err, "out of range"),
       "max_concurrent_runs past 4096 is refused: %s", err);
    cfg_free(&c);
    const char *bad2[] = {"max_queued_runs=-1"};
    ok(cfg_load(&c, NULL, NULL, bad2, 1, err, sizeof err) < 0 && strstr(err, "auto or"),
       "a negative queue is refused, naming what is expected: %s", err);
    cfg_free(&c);
}

/* The keys of the clients' bounds: max_tasks, the request memory, the
 * origins, the run records' caps and the disk reserve; their defaults,
 * their parsing, what reaches the executor, what is refused. */
static void test_client_keys(void)
{
    struct cfg c;
    char err[512] = "";
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "clients: the defaults");
    ok(c.max_tasks == 1000 && c.request_memory == CFG_AUTO && c.request_memory_wait_ms == 10000 &&
           !strcmp(c.allowed_origins, ""),
       "clients: max_tasks 1000, request_memory auto, request_memory_wait 10 s, no more origins");
    uint64_t eighth = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 8;
    is_int((long long)cfg_request_memory(&c), (long long)(eighth > c.request_bytes ? eighth : c.request_bytes),
           "clients: request_memory auto is an eighth of the memory, at least request_bytes");
    ok(c.exec.runs_bytes == 10ull << 30 && c.exec.runs_files == 1000000 && c.exec.disk_reserve_pct == 5 &&
           c.exec.disk_reserve_bytes == 0,
       "clients: runs_bytes 10G, runs_files 10^6, disk_reserve 5%% reach the executor");
    cfg_free(&c);
    const char *sets[] = {"max_tasks=7", "request_bytes=1M", "request_memory=3M", "request_memory_wait=500ms",
                          "allowed_origins=http://localhost:3000", "runs_bytes=1G", "runs_files=0", "disk_reserve=2G"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "clients: each sets (%s)", err);
    ok(c.max_tasks == 7 && cfg_request_memory(&c) == 3u << 20 && c.request_memory_wait_ms == 500 &&
           !strcmp(c.allowed_origins, "http://localhost:3000") && c.exec.runs_bytes == 1u << 30 &&
           c.exec.runs_files == 0 && c.exec.disk_reserve_bytes == 2ull << 30 && c.exec.disk_reserve_pct == 0,
       "clients: to what was said (disk_reserve as a size)");
    char *dump = cfg_dump(&c);
    ok(dump && strstr(dump, "request_memory = 3M\n") && strstr(dump, "disk_reserve = 2G\n") &&
           strstr(dump, "max_tasks = 7\n") && strstr(dump, "allowed_origins = http://localhost:3000\n"),
       "clients: runmyscript config prints them");
    free(dump);
    cfg_free(&c);
    const char *pct[] = {"disk_reserve=12%"};
    is_int(cfg_load(&c, NULL, NULL, pct, 1, err, sizeof err), 0, "clients: disk_reserve as a share");
    ok(c.exec.disk_reserve_pct == 12 && c.exec.disk_reserve_bytes == 0, "clients: 12%%");
    dump = cfg_dump(&c);
    ok(dump && strstr(dump, "disk_reserve = 12%\n") && strstr(dump, "request_memory = auto ("), "clients: printed back");
    free(dump);
    cfg_free(&c);
    static const struct {
        const char *set, *why;
    } bad[] = {
        {"disk_reserve=51%", "0% to 50%"},
        {"disk_reserve=x%", "expected a share"},
        {"disk_reserve=lots", "a size such as"},
        {"max_tasks=0", "out of range"},
        {"request_memory=1K", "out of range"},
        {"request_memory=later", "auto or a size"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        const char *one[] = {bad[i].set};
        ok(cfg_load(&c, NULL, NULL, one, 1, err, sizeof err) < 0 && strstr(err, bad[i].why), "clients: %s is refused: %s",
           bad[i].set, err);
        cfg_free(&c);
    }
    const char *small[] = {"request_bytes=8M", "request_memory=4M"};
    ok(cfg_load(&c, NULL, NULL, small, 2, err, sizeof err) < 0 && strstr(err, "at least request_bytes"),
       "clients: request_memory below request_bytes is refused: %s", err);
    cfg_free(&c);
}

/* The stream keys: auto caps by where streams live (serve's stream process
 * or a process each), numbers as given, their ranges, the buffer and the
 * stall. */
static void test_stream_keys(void)
{
    struct cfg c;
    char err[512] = "";
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "the defaults");
    ok(c.max_streams == CFG_AUTO && cfg_max_streams(&c, true) == 10000 && cfg_max_streams(&c, false) == 2,
       "max_streams auto: 10000 in serve's stream process, 2 held by processes");
    ok(cfg_max_streams_per_client(&c, true) == 1250 && cfg_max_streams_per_client(&c, false) == 1,
       "max_streams_per_client auto: an eighth of them, at least 1");
    ok(c.stream_buffer_bytes == 8ull << 20 && c.stream_stall_ms == 60000, "stream_buffer_bytes 8M, stream_stall 60 s");
    cfg_free(&c);
    const char *sets[] = {"max_streams=30", "max_streams_per_client=7", "stream_buffer_bytes=64K", "stream_stall=1.5s"};
    is_int(cfg_load(&c, NULL, NULL, sets, ARRAY_SIZE(sets), err, sizeof err), 0, "every stream key sets");
    ok(cfg_max_streams(&c, true) == 30 && cfg_max_streams(&c, false) == 30 && cfg_max_streams_per_client(&c, true) == 7 &&
           c.stream_buffer_bytes == 65536 && c.stream_stall_ms == 1500,
       "to what was said, wherever the streams live");
    cfg_free(&c);
    const char *half[] = {"max_streams=40"};
    is_int(cfg_load(&c, NULL, NULL, half, 1, err, sizeof err), 0, "max_streams alone");
    ok(cfg_max_streams_per_client(&c, false) == 5, "max_streams_per_client auto follows it");
    char *dump = cfg_dump(&c);
    ok(dump && strstr(dump, "max_streams = 40\n") && strstr(dump, "max_streams_per_client = auto (5 in serve, else 5)\n") &&
           strstr(dump, "stream_buffer_bytes = 8M\n") && strstr(dump, "stream_stall = 1m\n"),
       "runmyscript config prints them");
    free(dump);
    cfg_free(&c);
    const char *bad[][1] = {{"max_streams=0"}, {"max_streams_per_client=2000000"}, {"stream_buffer_bytes=1K"},
                            {"stream_stall=soon"}};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(bad[i][0], "="), bad[i][0]);
        ok(cfg_load(&c, NULL, NULL, bad[i], 1, err, sizeof err) < 0 && strstr(err, key), "%s is refused: %s",
           bad[i][0], err);
        cfg_free(&c);
    }
}

/* node_id: none by default (run ids without a node), else a node id that
 * run and session ids start with; nothing that could leave a path. */
static void test_node_id(void)
{
    struct cfg c;
    char err[512] = "";
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "defaults");
    ok(c.exec.node_id == NULL, "node_id: none by default");
    cfg_free(&c);
    const char *sets[] = {"node_id=b7"};
    is_int(cfg_load(&c, NULL, NULL, sets, 1, err, sizeof err), 0, "node_id = b7");
    is_str(c.exec.node_id, "b7", "reaches the executor");
    cfg_free(&c);
    const char *none[] = {"node_id=b7", "node_id=none"};
    is_int(cfg_load(&c, NULL, NULL, none, 2, err, sizeof err), 0, "node_id = none");
    ok(c.exec.node_id == NULL, "is no node");
    cfg_free(&c);
    static const char *const bad[] = {"node_id=../x", "node_id=N1", "node_id=a-b", "node_id=a.b",
                                      "node_id=0123456789abcdefg", "node_id=a b"};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        ok(cfg_load(&c, NULL, NULL, &bad[i], 1, err, sizeof err) < 0 && strstr(err, "node_id"), "%s is refused: %s",
           bad[i], err);
        cfg_free(&c);
    }
}

/* Each kind of key refuses a bad value with its own reason, word for word:
 * the CLI prints these, and its tests and users match them. */
static void test_messages(void)
{
    static const struct {
        const char *key, *value, *err;
    } cases[] = {
        {"isolation", "x", "isolation = 'x': expected auto, namespaces or rlimits"},
        {"installer", "x", "installer = 'x': expected auto, uv or pip"},
        {"log_level", "loud", "log_level = 'loud': expected error, warning, info or debug"},
        {"accel_redirect", "maybe", "accel_redirect = 'maybe': expected auto, on or off"},
        {"landlock", "maybe", "landlock = 'maybe': expected auto, on or off"},
        {"require_isolation", "maybe", "require_isolation = 'maybe': expected on or off"},
        {"queue_wait", "soon", "queue_wait = 'soon': expected a duration such as 30, 1.5s, 2m or 24h"},
        {"request_bytes", "big", "request_bytes = 'big': expected a size such as 1048576, 64K, 512M or 2G"},
        {"request_bytes", "1K", "request_bytes = '1K': out of range (4096 to 17179869184)"},
        {"workers", "many", "workers = 'many': expected a whole number"},
        {"workers", "2000", "workers = '2000': out of range (0 to 1024)"},
        {"uid_base", "5000000000", "uid_base = '5000000000': expected a whole number below 2^32"},
        {"python", "", "python: empty value"},
        {"allowed_hosts", "", "allowed_hosts: empty value"},
        {"node_id", "BAD", "node_id = 'BAD': expected none or 1 to 16 of a-z and 0-9"},
        {"timeout", "soon", "timeout = 'soon': expected a duration such as 30, 1.5s, 500ms or 2m"},
        {"memory", "lots", "memory = 'lots': expected a size such as 1048576, 64K, 512M or 2G"},
        {"bogus", "1", "unknown configuration key 'bogus' (runmyscript config lists them)"},
    };
    struct cfg c;
    char err[512] = "";
    ok(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err) == 0, "defaults load: %s", err);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        err[0] = '\0';
        ok(cfg_set(&c, cases[i].key, cases[i].value, err, sizeof err) == -EINVAL, "%s = '%s' is refused",
           cases[i].key, cases[i].value);
        is_str(err, cases[i].err, "with its reason");
    }
    ok(cfg_set(&c, "log_level", "DEBUG", err, sizeof err) == 0 && c.log_level == LOG_LVL_DEBUG,
       "log_level: any case");
    ok(cfg_set(&c, "accel_redirect", "auto", err, sizeof err) == 0 && c.accel_redirect == -1, "accel_redirect auto");
    ok(cfg_set(&c, "accel_redirect", "on", err, sizeof err) == 0 && c.accel_redirect == 1, "accel_redirect on");
    ok(cfg_set(&c, "auth_token", "s3cret", err, sizeof err) == 0 && c.auth_token && !strcmp(c.auth_token, "s3cret"),
       "auth_token set");
    ok(cfg_set(&c, "auth_token", "", err, sizeof err) == 0 && c.auth_token == NULL, "auth_token empty: none");
    ok(cfg_set(&c, "public_url", "none", err, sizeof err) == 0 && c.public_url && !*c.public_url,
       "an optional string: none is empty");
    ok(cfg_set(&c, "isolation", "rlimits", err, sizeof err) == 0 && c.exec.isolation == EXEC_ISOLATION_RLIMITS,
       "isolation: a choice taken");
    cfg_free(&c);
}

/* Every key of every table, through its row: its default (as `config`
 * prints it) parses back to itself; a ranged number refuses a value past
 * its range with a message naming the key and the range; every value
 * round-trips through `config` (printed, parsed, printed the same). */
static void test_every_key(void)
{
    struct cfg c;
    char err[512] = "";
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "defaults load: %s", err);
    int keys = 0, defaults = 0, ranged = 0, refused = 0, trips = 0;
    for (size_t t = 0; t < cfg__tables_n; t++)
        for (size_t i = 0; i < *cfg__tables[t].n; i++) {
            const struct key_def *k = &cfg__tables[t].rows[i];
            char v[256], again[256], bad[64];
            keys++;
            ok(k->doc && *k->doc && !strchr(k->doc, '\n') && !strchr(k->doc, '|'), "%s: one line of documentation",
               k->key);
            if (cfg_value(&c, k->key, v, sizeof v) < 0) {
                ok(0, "%s: has a value", k->key);
                continue;
            }
            /* "auto (64)" reads back as auto; a secret is not printed. */
            char *paren = strstr(v, " (");
            if (paren)
                *paren = '\0';
            {
                int rc = cfg_set(&c, k->key, v, err, sizeof err);
                defaults += rc == 0;
                if (rc < 0)
                    diag("%s = '%s': %s", k->key, v, err);
                trips += rc == 0 && cfg_value(&c, k->key, again, sizeof again) == 0 &&
                         !strncmp(again, v, strlen(v));
            }
            if ((k->type == KEY_DURATION || k->type == KEY_SIZE || k->type == KEY_COUNT) && k->max) {
                ranged++;
                snprintf(bad, sizeof bad, "%llu", (unsigned long long)k->max + 1);
                if (k->type == KEY_DURATION)
                    snprintf(bad, sizeof bad, "%llums", (unsigned long long)k->max + 1);
                err[0] = '\0';
                int rc = cfg_set(&c, k->key, bad, err, sizeof err);
                char want[96];
                snprintf(want, sizeof want, "%s = '%s': out of range (", k->key, bad);
                refused += rc == -EINVAL && !strncmp(err, want, strlen(want)) && strstr(err, " to ");
                if (rc != -EINVAL || strncmp(err, want, strlen(want)))
                    diag("%s = %s: %d %s", k->key, bad, rc, err);
            }
        }
    ok(keys > 90, "every table's keys: %d", keys);
    is_int(defaults, keys, "every key parses its own default");
    is_int(refused, ranged, "every ranged key refuses a value past its range, naming the key and the range");
    is_int(trips, keys, "every key round-trips through config");
    struct form_limits f;
    form_limits_default(&f);
    ok(!memcmp(&f, &c.form, sizeof f), "the form parser's own defaults are the rows' (form_*)");
    cfg_free(&c);
}

/* An empty value is spelled none in every key that has one: `config`
 * prints no key blank, and each string key set empty prints none, which
 * reads back as empty; a path named none is ./none. */
static void test_none_everywhere(void)
{
    struct cfg c;
    char err[512] = "", v[256], again[256];
    is_int(cfg_load(&c, NULL, NULL, NULL, 0, err, sizeof err), 0, "defaults load: %s", err);
    int blank = 0, strings = 0, spelled = 0;
    for (size_t t = 0; t < cfg__tables_n; t++)
        for (size_t i = 0; i < *cfg__tables[t].n; i++) {
            const struct key_def *k = &cfg__tables[t].rows[i];
            if (cfg_value(&c, k->key, v, sizeof v) == 0 && !*v) {
                blank++;
                diag("%s prints blank", k->key);
            }
            if (k->type < KEY_STRING || k->type == KEY_RESERVE || cfg_set(&c, k->key, "", err, sizeof err) < 0)
                continue;
            strings++;
            bool ok_none = cfg_value(&c, k->key, v, sizeof v) == 0 && !strcmp(v, "none") &&
                           cfg_set(&c, k->key, v, err, sizeof err) == 0 &&
                           cfg_value(&c, k->key, again, sizeof again) == 0 && !strcmp(again, "none");
            const char *const *field = (const char *const *)((const char *)&c + cfg__tables[t].base + k->offset);
            ok_none = ok_none && (!*field || !**field);
            spelled += ok_none;
            if (!ok_none)
                diag("%s: empty prints '%s', and none reads back as '%s'", k->key, v, again);
        }
    is_int(blank, 0, "config prints no key blank");
    ok(strings >= 10, "the keys that take an empty value: %d", strings);
    is_int(spelled, strings, "each prints its empty value as none, which reads back as empty");
    ok(cfg_set(&c, "auth_token", "none", err, sizeof err) == 0 && c.auth_token == NULL, "auth_token none: no token");
    ok(cfg_set(&c, "fetch_allow", "none", err, sizeof err) == 0 && !*c.fetch_allow_text, "fetch_allow none: empty");
    ok(cfg_set(&c, "data_dir", "none", err, sizeof err) == 0 && !*c.data_dir, "data_dir none: the built-in map");
    ok(cfg_set(&c, "data_dir", "./none", err, sizeof err) == 0 && c.data_dir[0] == '/' &&
           !strcmp(c.data_dir + strlen(c.data_dir) - 5, "/none"),
       "data_dir ./none: a directory named none (%s)", c.data_dir);
    cfg_free(&c);
}

/* The file's text, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

static const char *const doc_tables[] = {"keys", "limits", "transfers"};

/* doc/configuration.md holds each table as the rows make it (the man page
 * is made from that page: doc/man-tables). */
static void test_doc_tables(void)
{
    const char *top = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/doc/configuration.md", top ? top : "..");
    char *md = slurp(path);
    ok(md != NULL, "read %s", path);
    for (size_t i = 0; md && i < ARRAY_SIZE(doc_tables); i++) {
        char *table = cfg_doc_table(doc_tables[i]);
        bool found = table && strstr(md, table);
        ok(found, "doc/configuration.md has the table of %s as the rows make it (test-cfg --doc-table)",
           doc_tables[i]);
        for (char *line = table, *nl; !found && line && *line; line = nl + 1) {
            nl = strchr(line, '\n');
            *nl = '\0';
            if (!strstr(md, line)) {
                diag("not in the page: %s", line);
                break;
            }
        }
        free(table);
    }
    ok(cfg_doc_table("nope") == NULL, "no other table");
    free(md);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--doc-table")) {
        for (size_t i = 0; i < ARRAY_SIZE(doc_tables); i++) {
            char *table = cfg_doc_table(doc_tables[i]);
            printf("%s%s", i ? "\n" : "", table ? table : "");
            free(table);
        }
        return 0;
    }
    ok(mkdtemp(dir) != NULL, "temporary directory");
    test_every_key();
    test_none_everywhere();
    test_doc_tables();
    test_units();
    test_load();
    test_deps_keys();
    test_warm_keys();
    test_kernel_keys();
    test_admission_keys();
    test_stream_keys();
    test_modern_keys();
    test_client_keys();
    test_node_id();
    test_messages();
    ok(util_rm_rf_at(AT_FDCWD, dir) == 0, "cleanup");
    return tap_done();
}
