#!/bin/bash
# Warm starts through a real nginx in front of `runmyscript serve`: the
# pool on /healthz, and "start" in the result of tools/call run_code (MCP
# structuredContent, a session's run) and of /api/run (a run of its own):
# cold while the environment's zygote starts, warm after, from the same
# zygote for both.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/warm.sh"
"$RUNMYSCRIPT" check-sandbox 2>/dev/null | grep -q '^user namespaces: *yes' ||
    skip_all "warm starts need user namespaces, which this host cannot make"
export RUNMYSCRIPT_WARM_WAIT=60s # a slow machine must not make these runs cold
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
wait_until test -S "$RUNMYSCRIPT_STATE_DIR/.warm/pool.sock"
ok $? "the server's warm pool listens"

curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["warm"]["serving"]')" true "/healthz: the pool serves"

init
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
call() {
    post '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(6*7)"}}}' "${H[@]}"
}
call
is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["start"]')" '["ok", "cold"]' \
    "run_code: the first run of the environment starts cold"
wait_until warm_has 1
call
is "$(jb 'r["result"]["structuredContent"]["logs"], r["result"]["structuredContent"]["start"]')" '["42\n", "warm"]' \
    "run_code: then warm, with the same log"
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
curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["warm"]["envs"] >= 1, r["warm"]["runs"] >= 3')" '[true, true]' "/healthz: environments warm and runs served warm"
done_testing
