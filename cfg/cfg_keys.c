/* cfg_keys.c: every configuration key but the limits, one row each
 * (common/key.h): name, kind, the field of struct cfg it is stored in,
 * default, range or choices, one line of documentation. The limits are rows
 * of the same type in sandbox/exec_limits.c; cfg__tables lists them all in
 * the order `runmyscript config` prints them. Reading (cfg.c), defaults,
 * checking, printing and the documentation's tables (cfg_dump.c) are all
 * made from these rows.
 *
 * Adding a key: a field where its value lands (struct cfg, or the struct
 * exec_config / fetch_config of the executor when the executor reads it),
 * and one row here, in the place `runmyscript config` should print it; then
 * `runmyscript config --doc-table` gives the row of doc/configuration.md
 * (test-cfg fails until it is there), and data/runmyscript.conf.sample
 * wants a line. */
#include "config.h"

#include "cfg_internal.h"

#include <stdio.h>

/* The field m of struct cfg. */
#define AT(m) .offset = offsetof(struct cfg, m), .size = sizeof(((struct cfg *)0)->m)

const char *const cfg__levels[] = {"error", "warning", "info", "debug", NULL};
static const char *const isolations[] = {"auto", "namespaces", "rlimits", NULL};
static const char *const installers[] = {"auto", "uv", "pip", NULL};
static const char *const tristate[] = {"auto", "on", "off", NULL};
static const char *const net_modes[] = {"off", "on", "host-unfiltered", NULL}; /* enum net_mode's order */
static const char *const log_formats[] = {"text", "json", NULL}; /* enum log_format's order */
static const int accel_values[] = {-1, 1, 0}; /* accel_redirect: an int, -1 for auto */

/* What auto is, for cfg_dump: "auto (64)". */
static void queued_auto(const void *base, char *out, size_t n)
{
    snprintf(out, n, "%u", ((const struct cfg *)base)->exec.admit.max_queued);
}

static void request_memory_auto(const void *base, char *out, size_t n)
{
    cfg__format_size(cfg_request_memory(base), out, n);
}

static void streams_auto(const void *base, char *out, size_t n)
{
    snprintf(out, n, "%llu in serve, else %llu", (unsigned long long)cfg_max_streams(base, true),
             (unsigned long long)cfg_max_streams(base, false));
}

static void streams_per_client_auto(const void *base, char *out, size_t n)
{
    snprintf(out, n, "%llu in serve, else %llu", (unsigned long long)cfg_max_streams_per_client(base, true),
             (unsigned long long)cfg_max_streams_per_client(base, false));
}

static const struct key_def keys[] = {
    {.key = "state_dir", .type = KEY_PATH, AT(state_dir),
     .doc_default = "`/usr/local/var/lib/runmyscript` as root, else `~/.local/state/runmyscript`",
     .doc = "where runs, sessions and environments live"},
    {.key = "python", .type = KEY_PATH, AT(python), .dflt_text = "/usr/bin/python3",
     .doc = "the interpreter scripts run with"},
    {.key = "isolation", .type = KEY_ENUM, AT(exec.isolation), .choices = isolations,
     .doc = "`auto` (namespaces; the fallback only if `require_isolation = off`), `namespaces` (never the "
          "fallback), `rlimits` (force the fallback; needs `require_isolation = off`)"},
    {.key = "require_isolation", .type = KEY_BOOL, AT(exec.require_isolation), .dflt = 1,
     .doc = "refuse to run where the namespaces cannot be made"},
    {.key = "landlock", .type = KEY_TRISTATE, AT(exec.landlock), .choices = tristate,
     .doc = "the fallback's own sandbox: `auto` (Landlock and the fallback's seccomp filter where the kernel "
          "has them: result `\"isolation\": \"landlock+seccomp\"`), `on` (the same, and a fallback run is "
          "refused where the kernel has no Landlock), `off` (neither: the plain `rlimits` fallback); see "
          "[the fallback](isolation.md#the-rlimits-fallback)"},
    {.key = "script_network", .type = KEY_ENUM, AT(exec.script_network), .choices = net_modes,
     .doc = "a run's network: `off` (none), `on` (a network of the run's own whose TCP connections and DNS "
          "queries go through the server's proxy and resolver: only what `egress_allow` names, never the "
          "host's loopback, private or link-local addresses, within `net_bytes` and `net_connections`, and "
          "recorded in the result's `network`), `host-unfiltered` (the host's own network as it is: its "
          "loopback, its private networks and the cloud's metadata address, no policy, no record); see "
          "[The network](isolation.md#the-network)"},
    {.key = "egress_allow", .type = KEY_OPTSTRING, .flags = KEY_F_NONE, AT(egress_allow), .dflt_text = "",
     .doc = "with `script_network = on`, what a run may reach: names (`api.example.com`, `*.example.com`), "
          "addresses and CIDR ranges, each with an optional `:port`, separated by commas or blanks; a call's "
          "`network` can only narrow it (none: nothing)"},
    {.key = "egress_deny", .type = KEY_OPTSTRING, .flags = KEY_F_NONE, AT(egress_deny), .dflt_text = "",
     .doc = "addresses and CIDR ranges (and names) never reachable from a run, whatever `egress_allow` says: "
          "added to loopback, the server's own addresses, the private, shared, unique-local, link-local and "
          "multicast ranges"},
    {.key = "uid_base", .type = KEY_COUNT, AT(exec.uid_base), .dflt = 800000,
     .doc = "as root: the namespaces' root; runs use the uids above it"},
    {.key = "uid_count", .type = KEY_COUNT, AT(exec.uid_count), .dflt = 1024,
     .doc = "as root: how many runs at once can have a uid of their own"},
    {.key = "run_ttl", .type = KEY_DURATION, AT(exec.run_ttl_ms), .dflt = 24 * 3600000ull,
     .doc = "run directories older than this are removed (checked at most once a minute)"},
    {.key = "runs_bytes", .type = KEY_SIZE, AT(exec.runs_bytes), .dflt = 10 * GIB,
     .doc = "the run directories (`STATE/runs`: logs, results, artifacts, zips) in all: past it the oldest "
          "finished runs are removed first, down to nine tenths of it, whatever their age; never a run in "
          "flight, never a session's workspace (0: no cap; \"[The state "
          "directory](serving.md#the-state-directory)\")"},
    {.key = "runs_files", .type = KEY_COUNT, AT(exec.runs_files), .dflt = 1000000,
     .doc = "the same in inodes (a run keeps about 7)"},
    {.key = "disk_reserve", .type = KEY_RESERVE, AT(disk_reserve), .dflt_text = "5%",
     .doc = "new runs are refused (HTTP 507, an MCP tool error, exit 74) while the file system of `state_dir`"
          " has less free space than this, or fewer free inodes than this share of them; `/healthz` says "
          "`\"status\": \"low_disk\"`. A size (`2G`) or a whole percentage up to 50 (`0`: no guard)"},
    {.key = "log_level", .type = KEY_ENUM, .flags = KEY_F_ANYCASE, AT(log_level), .dflt = LOG_LVL_WARN,
     .choices = cfg__levels,
     .doc = "`error`, `warning`, `info`, `debug` (to stderr)"},
    {.key = "log_format", .type = KEY_ENUM, AT(log_format), .choices = log_formats,
     .doc = "`text`: a line of text per message; `json`: every line a JSON object, and one more per request "
          "served (method, route, status, duration, run id, client) whatever `log_level` is, for log "
          "collectors (\"[Logs](serving.md#logs)\")"},
    {.key = "workers", .type = KEY_COUNT, AT(workers), .max = CFG_WORKERS_MAX,
     .doc_default = "`0` (4 + 4 x CPUs, at least `max_concurrent_runs` + `max_queued_runs` + 2: 68 on two cores)",
     .doc = "FastCGI workers of `serve` (`--workers`), 0 to 1024"},
    {.key = "max_concurrent_runs", .type = KEY_COUNT, AT(exec.admit.max_running), .max = EXEC_MAX_SLOTS,
     .doc_default = "`0` (the CPUs)",
     .doc = "scripts running at once across every process of this `state_dir`, 0 to 4096 "
          "(\"[Admission](serving.md#admission)\")"},
    {.key = "max_queued_runs", .type = KEY_COUNT, .flags = KEY_F_AUTO, AT(max_queued_runs), .dflt = KEY_AUTO,
     .max = EXEC_MAX_SLOTS, .auto_text = queued_auto,
     .doc = "runs that may wait for a slot; past them: 503 / MCP busy error / exit 75; `auto` (32 per CPU, at"
          " least 64, within an eighth of the memory at 4 MiB a queued call: 64 on two cores) or 0 to 4096 "
          "(0: no queue)"},
    {.key = "queue_wait", .type = KEY_DURATION, AT(exec.admit.queue_wait_ms), .dflt = 60000,
     .doc = "the longest a queued run waits for a slot before it is turned away like the others"},
    {.key = "retry_after", .type = KEY_DURATION, AT(exec.retry_after_ms), .dflt = 2000,
     .doc = "the `Retry-After` of a busy answer (and the \"try again in\" of its message)"},
    {.key = "cancel_on_disconnect", .type = KEY_BOOL, AT(cancel_on_disconnect),
     .doc = "a client that hangs up in the middle of a call cancels its run (MCP and `/api/run`); off: the "
          "run finishes and its result is kept"},
    {.key = "session_ttl", .type = KEY_DURATION, AT(session_ttl_ms), .dflt = 3600000,
     .doc = "MCP sessions idle this long are removed with their runs (0: never)"},
    {.key = "drain_grace", .type = KEY_DURATION, AT(drain_grace_ms),
     .doc_default = "`0` (`timeout` + `kill_grace` + 5 s)",
     .doc = "how long SIGTERM waits for calls in flight"},
    {.key = "request_bytes", .type = KEY_SIZE, AT(request_bytes), .dflt = 96 * MIB, .min = 4096, .max = 16 * GIB,
     .doc = "the largest request body: 413 past it (match nginx's `client_max_body_size`)"},
    {.key = "request_memory", .type = KEY_SIZE, .flags = KEY_F_AUTO, AT(request_memory), .dflt = KEY_AUTO,
     .min = 4096, .max = 1024 * GIB, .auto_text = request_memory_auto,
     .doc_default = "`auto` (an eighth of the memory, at least `request_bytes`)",
     .doc = "the request bodies held at once by every process of this `state_dir` together (each body over 64"
          " KiB counts; smaller ones are bounded by the workers): a body that would pass it waits for room "
          "up to `request_memory_wait`, then gets 503 with `Retry-After` (\"[Request "
          "memory](serving.md#request-memory)\"); 4K to 1T"},
    {.key = "request_memory_wait", .type = KEY_DURATION, AT(request_memory_wait_ms), .dflt = 10000,
     .doc = "how long a body waits for room in `request_memory` before the 503"},
    {.key = "max_sessions", .type = KEY_COUNT, AT(max_sessions), .dflt = 1000, .min = 1, .max = 1000000,
     .doc = "open MCP sessions at once: `initialize` gets 503 past it (after reaping idle ones); and apart "
          "from them, open workspaces of the 2026-07-28 revision (a call that would make one more is "
          "refused). Counted and made in one step: a burst of calls ends at the cap exactly"},
    {.key = "max_tasks", .type = KEY_COUNT, AT(max_tasks), .dflt = 1000, .min = 1, .max = 1000000,
     .doc = "MCP tasks kept at once (working, or finished and within `task_ttl`), 1 to 10^6: a call that "
          "would become one more is refused with a tool error naming the key (after reaping finished ones "
          "past `task_ttl`)"},
    {.key = "task_after", .type = KEY_DURATION, AT(task_after_ms), .dflt = 5000,
     .doc = "a `run_code` or `run_my_script` call of a 2026-07-28 client that declares the tasks extension "
          "and is still running after this long becomes a task: the stream ends with the task's handle and "
          "the run goes on without a worker or a connection (0: a task at once)"},
    {.key = "task_ttl", .type = KEY_DURATION, AT(task_ttl_ms), .dflt = 3600000,
     .doc = "a finished task (its result) is kept this long after its last change, then removed (also its "
          "`ttlMs`)"},
    {.key = "tools_list_ttl", .type = KEY_DURATION, AT(tools_list_ttl_ms), .dflt = 300000,
     .doc = "the `ttlMs` of `tools/list` and `server/discover` in 2026-07-28: how long a client may cache "
          "them"},
    {.key = "image_inline_bytes", .type = KEY_SIZE, AT(image_inline_bytes), .dflt = 512 * KIB, .max = 64 * MIB,
     .doc = "image artifacts are sent inline in MCP results while they fit, all together"},
    {.key = "preview_bytes", .type = KEY_SIZE, AT(preview_bytes), .dflt = 8 * KIB, .min = 256, .max = 16 * MIB,
     .doc = "what `preview_file` shows of a file"},
    {.key = "mount_root", .type = KEY_OPTSTRING, .flags = KEY_F_NONE, AT(mount_root),
     .doc = "an absolute directory whose files `mount_file` takes as `file:///PATH` URLs, over stdio only (the "
          "client's own machine); no symlink is followed beneath it. Empty: `file://` is refused"},
    {.key = "write_bytes", .type = KEY_SIZE, AT(write_bytes), .dflt = 10 * MIB, .min = 1, .max = 1024 * MIB,
     .doc = "the most a file `write_file` (MCP) or the notebook's Add a file puts into a workspace may weigh"},
    {.key = "auth_token", .type = KEY_SECRET, .flags = KEY_F_NONE, AT(auth_token),
     .doc = "a bearer token for `/mcp` and `/api/` (401 without it); `runmyscript config` shows `(set)`. "
          "`none`: no token (so the word none is never a token)"},
    {.key = "allowed_hosts", .type = KEY_STRING, AT(allowed_hosts), .dflt_text = "localhost,127.0.0.1,[::1]",
     .doc = "host names accepted in `Host` (DNS-rebinding protection) and, for `/artifacts/` and `/healthz`, "
          "in `Origin` (403 otherwise); `*` accepts any"},
    {.key = "metrics_allow", .type = KEY_STRING, AT(metrics_allow), .dflt_text = "127.0.0.0/8,::1",
     .doc = "the clients that may read `/metrics`: addresses or networks (`10.0.0.0/8`, `fd00::/8`) of the "
          "peer (`REMOTE_ADDR`), blanks or commas between them; `*` any, empty none (403 otherwise; "
          "\"[Metrics](serving.md#metrics)\")"},
    {.key = "allowed_origins", .type = KEY_OPTSTRING, .flags = KEY_F_NONE, AT(allowed_origins), .dflt_text = "",
     .doc = "more origins (`scheme://host[:port]`, blanks or commas between them) whose pages may call `/mcp`"
          " and `/api/` (the CSRF check of `Origin`, 403 otherwise); the server's own origin is always "
          "allowed: the request's scheme and `Host`, and `public_url`'s. `*` accepts any. A page of another"
          " port of the same host is another origin (`http://localhost:3000` is not "
          "`http://localhost:8080`)"},
    {.key = "public_url", .type = KEY_OPTSTRING, .flags = KEY_F_NONE, AT(public_url),
     .doc = "the `scheme://host[:port][/path]` artifact links start with (default: from the request); a path "
          "means the site is under it: requests under it route without it"},
    {.key = "node_id", .type = KEY_NODE, .flags = KEY_F_NONE, AT(node_id),
     .doc = "this node's name in a cluster (1 to 16 of `a-z`, `0-9`): run and session ids start with `NODE-`,"
          " so a front nginx routes by them (\"[Scaling out](serving.md#scaling-out)\")"},
    {.key = "accel_redirect", .type = KEY_TRISTATE, AT(accel_redirect), .choices = tristate, .values = accel_values,
     .doc = "`on`: `/artifacts/` answers with `X-Accel-Redirect` and nginx sends the file; `off`: runmyscript"
          " sends it, in bounded memory (nginx's user cannot read `STATE/runs`, or no nginx); `auto`: on "
          "under FastCGI, off as a CGI program and as root (a run's files belong to its per-run uid)"},
    {.key = "form_fields", .type = KEY_COUNT, AT(form.fields), .dflt = 16, .min = 1, .max = 1024,
     .doc = "parts in one multipart body on `/api/run` (413 past it; see \"[The web "
          "page](web.md#limits-of-a-form)\")"},
    {.key = "form_field_bytes", .type = KEY_SIZE, AT(form.field_bytes), .dflt = 8 * MIB, .min = 1, .max = 16 * GIB,
     .doc = "bytes of one field of it that is not a file"},
    {.key = "form_file_bytes", .type = KEY_SIZE, AT(form.file_bytes), .dflt = 64 * MIB, .min = 1, .max = 16 * GIB,
     .doc = "bytes of one file part of it"},
    {.key = "form_header_bytes", .type = KEY_SIZE, AT(form.header_bytes), .dflt = 8 * KIB, .min = 256, .max = MIB,
     .doc = "bytes of one part's header block"},
    {.key = "cgi_sse_padding", .type = KEY_SIZE, AT(cgi_sse_padding), .dflt = 8192, .max = MIB,
     .doc = "as a CGI program: the padding comment that pushes `/api/run`'s events through fcgiwrap's buffer "
          "(0: none; see \"[The web page](web.md#the-answer)\")"},
    {.key = "max_streams", .type = KEY_COUNT, .flags = KEY_F_AUTO, AT(max_streams), .dflt = KEY_AUTO, .min = 1,
     .max = CFG_STREAMS_MAX, .auto_text = streams_auto,
     .doc = "streams that may stay open with nothing to run (`subscriptions/listen`) at once: past it 503 "
          "with `Retry-After`; `auto`: 10000 in `serve`, whose stream process carries them without a "
          "worker, else 2 (CGI, FastCGI on stdin: each holds a process of the web server's, so keep it "
          "below their number); 1 to 1000000. A call's stream is not counted: admission bounds it "
          "(\"[Streams](serving.md#streams)\")"},
    {.key = "max_streams_per_client", .type = KEY_COUNT, .flags = KEY_F_AUTO, AT(max_streams_per_client),
     .dflt = KEY_AUTO, .min = 1, .max = CFG_STREAMS_MAX, .auto_text = streams_per_client_auto,
     .doc = "of them, those of one client (its peer address, `REMOTE_ADDR`): past it 429 with `Retry-After`; "
          "`auto`: an eighth of `max_streams`, at least 1 (1250 in `serve`)"},
    {.key = "stream_buffer_bytes", .type = KEY_SIZE, AT(stream_buffer_bytes), .dflt = 8 * MIB, .min = 64 * KIB,
     .max = GIB,
     .doc = "a stream with more than this waiting for its client is closed (the client reads too slowly, or "
          "not at all); 64K to 1G"},
    {.key = "stream_stall", .type = KEY_DURATION, AT(stream_stall_ms), .dflt = 60000,
     .doc = "... and one whose client took nothing of what waits for it for this long; also a stream held by "
          "its process (CGI, FastCGI on stdin, or while serve's stream process is being started again): a "
          "write its client takes nothing of for this long fails, as a client gone"},
    {.key = "test_fixture_tools", .type = KEY_BOOL, AT(test_fixture_tools),
     .doc = "test only: adds the conformance suite's fixture tools (`test_*`) in `tests/runmyscript-test`, "
          "which `make check` builds; the installed program has none"},
    {.key = "data_dir", .type = KEY_PATH, .flags = KEY_F_NONE, AT(data_dir), .dflt_text = "", /* the built-in import map */
     .doc = "`none`: the import map built into the program (`data/import-names.tsv` at build time); a "
          "directory: its `import-names.tsv` replaces it (start from the installed "
          "`$(pkgdatadir)/import-names.tsv`). A directory without the file, or with a malformed one, is a "
          "configuration error: the program does not start (exit 78). A directory named none is `./none`"},
    {.key = "installer", .type = KEY_ENUM, AT(exec.deps.installer), .choices = installers,
     .doc = "`uv` when it is on `PATH`, else `pip`; or `uv`, `pip`"},
    {.key = "index_url", .type = KEY_STRING, AT(index_url), .dflt_text = "default",
     .doc = "the package index: `default` (the installer's own), `none` (no index: `find_links` only, the "
          "offline mode the tests use), or a URL"},
    {.key = "extra_index_url", .type = KEY_OPTSTRING, .flags = KEY_F_NONE, AT(extra_index_url), .dflt_text = "",
     .doc = "more indexes, separated by blanks"},
    {.key = "find_links", .type = KEY_OPTSTRING, .flags = KEY_F_NONE, AT(find_links), .dflt_text = "",
     .doc = "directories or URLs of wheels, separated by blanks (`file:///srv/wheels`)"},
    {.key = "only_binary", .type = KEY_BOOL, AT(exec.deps.only_binary), .dflt = 1,
     .doc = "wheels only (`--only-binary :all:`): no package's `setup.py` runs at install time"},
    {.key = "auto_deps", .type = KEY_BOOL, AT(exec.auto_deps), .dflt = 1,
     .doc = "find requirements from the script's imports (`--no-auto-deps` / `--auto-deps` per call)"},
    {.key = "requirement_urls", .type = KEY_BOOL, AT(exec.deps.requirement_urls),
     .doc = "accept direct references (`name @ URL`) in requirements"},
    {.key = "fallback_installer_network", .type = KEY_BOOL, AT(exec.deps.fallback_host_network),
     .doc = "where installs run in the rlimits fallback (no user namespaces: a shared host), an install from a "
          "remote source (an index, a find_links URL) is refused, for the fallback has no network of its own "
          "to hold the installer to its sources; `on` gives the installer there the host's whole network "
          "instead, unfiltered, as before there was a network of its own (local sources need neither)"},
    {.key = "env_cache_size", .type = KEY_SIZE, AT(exec.deps.cache_bytes), .dflt = 10 * GIB,
     .doc = "size cap of the environments in `STATE/envs` (`0`: no cap); least recently used ones are evicted"
          " past it. With the package store an environment counts only its own files, not those it links "
          "from the store"},
    {.key = "package_store", .type = KEY_BOOL, AT(exec.deps.package_store), .dflt = 1,
     .doc = "environments are assembled from the package store `STATE/store` (each wheel unpacked once, "
          "environments of symlinks and hard links into it; "
          "[Dependencies](dependencies.md#the-package-store)); `off`: each environment is a `pip install` "
          "of its own, as before the store. With uv as the installer the store is not used"},
    {.key = "store_bytes", .type = KEY_SIZE, AT(exec.deps.store_bytes), .dflt = 20 * GIB,
     .doc = "the one disk budget of the package store and the environments together (`0`: no cap): past it "
          "the least recently used environments go first, then store entries no environment links; never "
          "one in use. A wheel that would unpack to more than this is refused (`install_failed`)"},
    {.key = "shared_proc", .type = KEY_BOOL, AT(exec.shared_proc), .dflt = 0,
     .doc = "where the kernel refuses a run a `/proc` of its own (a container's, whose `/proc` is masked): "
          "`on`, the run is in the namespaces with the container's `/proc` (it lists the container's "
          "processes, none of which it can signal or read the memory of) and starts warm; `off`, runs take "
          "the fallback there. The image sets it `on` (\"[In a container](serving.md#in-a-container)\")"},
    {.key = "warm", .type = KEY_BOOL, AT(exec.warm.on), .dflt = 1,
     .doc = "`serve` keeps a warm pool: a zygote per environment that runs are forked from, in namespaces of "
          "their own (`\"start\": \"warm\"` in the result); `off`: every run starts cold. Root or not, "
          "where the host can make user namespaces (elsewhere every run starts cold); the CLI uses the pool"
          " of a server that serves the same `state_dir` (\"[Warm starts](isolation.md#warm-starts)\")"},
    {.key = "warm_envs", .type = KEY_COUNT, AT(exec.warm.envs), .dflt = 4, .min = 1, .max = 16,
     .doc = "zygotes kept at once, 1 to 16 (a session's runs and others have one each); past it the least "
          "recently used goes. A pool that starts starts the base environment's, then the most used "
          "environments' before it, within this"},
    {.key = "warm_idle", .type = KEY_DURATION, AT(exec.warm.idle_ms), .dflt = 600000,
     .doc = "a zygote unused this long goes (0: never)"},
    {.key = "warm_memory", .type = KEY_SIZE, AT(exec.warm.memory), .dflt = GIB,
     .doc = "what the zygotes may hold together (their resident memory; `0`: no cap); the least recently used"
          " goes past it, and an environment whose zygote alone passes it starts cold for `warm_idle`"},
    {.key = "warm_runs", .type = KEY_COUNT, AT(exec.warm.runs), .dflt = 1000, .max = 1000000000,
     .doc = "a zygote is replaced after this many runs (0: never), 0 to 10^9"},
    {.key = "warm_lifetime", .type = KEY_DURATION, AT(exec.warm.lifetime_ms), .dflt = 3600000,
     .doc = "a zygote is replaced after this long (0: never)"},
    {.key = "warm_modules", .type = KEY_MODULES, .flags = KEY_F_NONE, AT(warm_modules), .dflt_text = "",
     .doc = "modules every zygote imports first, besides the module paths its environment's runs import (the "
          "pool learns those from each run's import scan, `matplotlib.pyplot` and not only `matplotlib`): "
          "for what no scan sees (`__import__`, `importlib`), e.g. `numpy pandas`; one that fails, starts a"
          " thread or leaves a socket is skipped and remembered ([Warm starts](isolation.md#warm-starts))"},
    {.key = "warm_wait", .type = KEY_DURATION, AT(exec.warm.wait_ms), .dflt = 3000,
     .doc = "how long a run waits for the pool's answer, and then for the zygote's fork of it, before it "
          "starts cold (a zygote that takes longer is taken for hung)"},
    {.key = "kernel_idle", .type = KEY_DURATION, AT(exec.kernels.idle_ms), .dflt = 600000,
     .doc = "a kernel (`run_cell`'s live Python of a workspace, [A cell](architecture.md#a-cell-exec_kernel_cell), "
          "[Kernels](isolation.md#kernels)) without a cell this long is stopped, its state saved first "
          "(`kernel_save_bytes`); the workspace's next cell restores it, or starts a new one and says why "
          "(0: never)"},
    {.key = "max_kernels", .type = KEY_COUNT, AT(exec.kernels.max), .dflt = 64, .max = CFG_KERNELS_MAX,
     .doc = "kernels live at once on the server (at most 4096; 0: no kernels). A new one stops the least "
          "recently used idle kernel of another workspace (its state saved) when all are taken; a saved kernel "
          "is not counted; when every kernel is running "
          "a cell, the new workspace's cell is answered busy"},
    {.key = "kernel_memory", .type = KEY_SIZE, AT(exec.kernels.memory), .dflt = 8 * GIB,
     .doc = "what all kernels may hold together (each one's cgroup, or the memory watch where none holds it):"
          " past it the least recently used idle kernels are stopped, after a cell and when a kernel starts"
          " (0: no budget). One kernel is held to `memory` as a run is"},
    {.key = "kernel_save_bytes", .type = KEY_SIZE, AT(exec.kernels.save_bytes), .dflt = 2 * GIB,
     .doc = "the largest state of one kernel that is saved ([Saved kernels](isolation.md#saved-kernels)): a "
          "kernel stopped for `kernel_idle`, `max_kernels`, `kernel_memory` or the server's drain first saves "
          "its names into its workspace's `.kernel/state` (within `workspace_bytes` too), and the next cell "
          "restores them; a state past it is not saved and the next cell says why (0: kernels are never saved)"},
    {.key = "kernel_grace", .type = KEY_DURATION, AT(exec.kernels.grace_ms), .dflt = 5000,
     .doc = "how long a cell interrupted (its `timeout`, `cpu_time`, a disk limit, a cancel) may go on before"
          " its kernel is killed; a cell that stops within it keeps the kernel and its names"},
    {.key = "warm_spares", .type = KEY_COUNT, AT(exec.warm.spares), .dflt = 2, .max = 8,
     .doc = "runs' inits a zygote makes ahead once it has served a run, 0 to 8: each a fresh set of "
          "namespaces with its `/proc`, `/tmp`, `/dev/shm` and loopback made and the run's script process "
          "forked in it, waiting for one run ([Warm starts](isolation.md#warm-starts)); a warm call then "
          "pays for the handover, not for the clone and the fork. Their memory counts in `warm_memory`; 0: "
          "each run's init is made when the run comes"},
};

static const struct key_def fetch_keys[] = {
    {.key = "fetch_allow", .type = KEY_ALLOW, .flags = KEY_F_NONE, AT(fetch_allow_text), .dflt_text = "",
     .doc = "addresses, CIDR ranges and `address:port` the fetch guard lets through although not public (see "
          "\"[Files from and to the outside](mcp.md#files-from-and-to-the-outside)\")"},
};

static const size_t keys_n = ARRAY_SIZE(keys), fetch_keys_n = ARRAY_SIZE(fetch_keys);

const struct cfg__table cfg__tables[] = {
    {keys, &keys_n, 0},
    {exec_limit_defs, &exec_limit_defs_n, offsetof(struct cfg, exec.limits)},
    {fetch_keys, &fetch_keys_n, 0},
    {fetch_limit_defs, &fetch_limit_defs_n, offsetof(struct cfg, fetch.limits)},
};
const size_t cfg__tables_n = ARRAY_SIZE(cfg__tables);
