#!/bin/bash
# Warm starts through a real nginx in front of `runmyscript serve`: the
# pool on /healthz, and "start" in the result of tools/call run_code (MCP
# structuredContent, a session's run) and of /api/run (a run of its own):
# warm from the first call, since the pool starts the base environment's
# zygote with the server, and the same zygote serves both. Then what the
# pool learns from what is served: a script that imports
# matplotlib.pyplot, served twice, is warm the second time from a zygote
# that imported matplotlib.pyplot; a module that starts a thread at import
# is skipped (/healthz counts it) and its environment's zygote serves on.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/warm.sh"
"$RUNMYSCRIPT" check-sandbox 2>/dev/null | grep -q '^namespaces and mounts: *yes' ||
    skip_all "warm starts need user namespaces, which this host cannot make"
export RUNMYSCRIPT_WARM_WAIT=60s # a slow machine must not make these runs cold
# The test's wheelhouse is the only package source.
STACK_CONF="index_url = none\nfind_links = file://${WHEELHOUSE:-/nonexistent}"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
wait_until test -S "$RUNMYSCRIPT_STATE_DIR/.warm/pool.sock"
ok $? "the server's warm pool listens"

curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["warm"]["serving"]')" true "/healthz: the pool serves"

# The pool starts the base environment's zygote itself: no run of it is
# cold.
wait_until warm_has 1
ok $? "the pool made the base environment's zygote ready without a run"
init
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
call() {
    post '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(6*7)"}}}' "${H[@]}"
}
call
is "$(jb 'r["result"]["structuredContent"]["logs"], r["result"]["structuredContent"]["start"]')" '["42\n", "warm"]' \
    "run_code: the first call of the server just started is warm"
api() {
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        -d '{"code":"print(6*7)"}' "$BASE/api/run")
}
# A run of its own has /job as a session's has (the run directory the
# script runs from): the environment's one zygote serves both.
api
is "$STATUS/$(jb 'r["status"]')/$(jb 'r["start"]')" "200/ok/warm" "/api/run: ok, and warm from the zygote run_code's runs use"
api
is "$(jb 'r["logs"], r["start"]')" '["42\n", "warm"]' "/api/run: warm again, with the same log"
call
is "$(jb 'r["result"]["structuredContent"]["start"]')" warm "run_code: and the next"
curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["warm"]["envs"] >= 1, r["warm"]["runs"] >= 4, r["warm"]["skipped"]')" '[true, true, 0]' \
    "/healthz: environments warm, runs served warm, no module skipped"

# --- what the pool learns from the runs it serves ---
learned_imported() { # the modules the zygotes imported, one environment a line
    sed -n 's/^imported //p' "$T/state/.warm/learned" 2>/dev/null
}
serve_code() { # serve_code FILE: /api/run of the script in FILE, the result in $T/b
    python3 -c 'import json, sys; print(json.dumps({"code": open(sys.argv[1]).read()}))' "$1" >"$T/req.json"
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary @"$T/req.json" "$BASE/api/run")
}
if ls "${WHEELHOUSE:-/nonexistent}"/matplotlib-*.whl >/dev/null 2>&1; then
    cat >"$T/plt.py" <<'PY'
import os, sys
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.bar(["a", "b"], [1, 2])
fig.savefig(os.path.join(os.environ["SCRIPT_OUTPUT"], "bar.png"), dpi=30)
print("pyplot", plt.get_backend())
PY
    serve_code "$T/plt.py"
    is "$STATUS/$(jb 'r["status"]')/$(jb 'r["start"]')" "200/ok/cold" "import matplotlib.pyplot: the first run of its environment is cold"
    first_logs=$(jb 'r["logs"]')
    pyplot_ready() { learned_imported | grep -qw 'matplotlib\.pyplot'; }
    wait_until pyplot_ready
    ok $? "its zygote imported matplotlib.pyplot ($(learned_imported | grep -w matplotlib | head -1))"
    serve_code "$T/plt.py"
    is "$STATUS/$(jb 'r["status"]')/$(jb 'r["start"]')" "200/ok/warm" "served again: warm"
    is "$(jb 'r["logs"]')" "$first_logs" "with the cold run's log (the Agg backend)"
    is "$(jb '[a["path"] for a in r["artifacts"]]')" '["bar.png"]' "and its chart"
else
    skip "no matplotlib wheel (python3-matplotlib is not installed): the pool learns matplotlib.pyplot"
fi
if ls "${WHEELHOUSE:-/nonexistent}"/rms_thread-*.whl >/dev/null 2>&1; then
    printf 'import json\nimport rms_thread\nprint("threads", rms_thread.threads())\n' >"$T/thread.py"
    serve_code "$T/thread.py"
    is "$STATUS/$(jb 'r["status"]')" "200/ok" "a module that starts a thread at import: its run is ok"
    thread_logs=$(jb 'r["logs"]')
    skipped() { curl -sS -o "$T/hz" "$BASE/healthz" && [ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["warm"]["skipped"])' "$T/hz")" -ge 1 ]; }
    wait_until skipped
    ok $? "/healthz: the module is skipped"
    thread_warm() { serve_code "$T/thread.py"; [ "$(jb 'r["start"]')" = warm ]; }
    wait_until thread_warm
    ok $? "its environment's zygote stays usable: a run of it is warm"
    is "$(jb 'r["status"]') $(jb 'r["logs"]')" "ok $thread_logs" "and imports the module itself, as the cold run did ($thread_logs)"
else
    skip "the wheelhouse lacks rms-thread: a module a zygote cannot import safely"
fi
done_testing
