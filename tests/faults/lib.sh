# lib.sh: what every fault test checks after its fault. Source it after
# tests/lib/tap.sh and tests/e2e/lib.sh (stack_start, post, jb, init).
#
#   token_code TOKEN SECONDS   a script whose processes carry TOKEN in their
#                              command line (it re-executes itself with it,
#                              and starts a child with it), prints "go TOKEN"
#                              and sleeps SECONDS
#   call_bg SID JSONFILE OUT   a tools/call over SSE in the background ($CURL)
#   after_fault TOKEN...       the checks every case ends with: no process
#                              with a TOKEN, no temporary directory left in the
#                              state dir, every cached environment whole, and
#                              the service answering /healthz and a run_code

token_code() {
    local tok=$1 secs=$2
    # The body goes through a file: a token in curl's own argv would be found too.
    "$PYTHON3" - "$tok" "$secs" <<'PY'
import json, sys
tok, secs = sys.argv[1], sys.argv[2]
inner = (f"import subprocess, sys, time\n"
         f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep({secs}) # {tok}-child'])\n"
         f"print('go {tok}', flush=True)\n"
         f"time.sleep({secs})\n"
         f"print('end {tok}')\n")
print("import os, sys\nos.execv(sys.executable, [sys.executable, '-c', " + json.dumps(inner) + ", " + json.dumps(tok) + "])\n")
PY
}

# call_json ID CODE_FILE: a tools/call run_code request body.
call_json() {
    "$PYTHON3" -c 'import json, sys; print(json.dumps({"jsonrpc": "2.0", "id": int(sys.argv[1]), "method": "tools/call",
        "params": {"name": "run_code", "arguments": {"code": open(sys.argv[2]).read()}, "_meta": {"progressToken": 1}}}))' "$1" "$2"
}

call_bg() {
    local sid=$1 body=$2 out=$3
    curl -sS -N -o "$out" -X POST -H 'Content-Type: application/json' -H "$ACCEPT_BOTH" \
        -H "Mcp-Session-Id: $sid" --data-binary "@$body" "$BASE/mcp" 2>/dev/null &
    CURL=$!
}

# procs_with TOKEN: pids whose command line holds TOKEN (none: empty).
procs_with() {
    pgrep -f -- "$1" 2>/dev/null | tr '\n' ' '
}

# worker_of PID: the serve worker that PID descends from.
worker_of() {
    local p=$1 pp
    while [ -n "$p" ] && [ "$p" -gt 1 ]; do
        pp=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
        [ "$pp" = "$SERVE_PID" ] && { echo "$p"; return 0; }
        p=$pp
    done
    return 1
}

# worker_of_run DIR: the serve worker that holds DIR (a run directory) open:
# the one whose call it is, also where the run's processes are no children
# of it (a warm run is forked from its environment's zygote).
worker_of_run() {
    local w f
    for w in $(pgrep -P "$SERVE_PID"); do
        for f in /proc/$w/fd/*; do
            case $(readlink "$f" 2>/dev/null) in "$1" | "$1"/*) echo "$w"; return 0 ;; esac
        done
    done
    return 1
}

# run_of TOKEN: the run directory whose script holds TOKEN.
run_of() {
    grep -l -- "$1" "$T"/state/runs/*/script.py 2>/dev/null | head -1 | xargs -r dirname
}

after_fault() {
    local tok left
    for tok in "$@"; do
        wait_for bash -c "[ -z \"\$(pgrep -f -- '$tok')\" ]"
        left=$(procs_with "$tok")
        is "$left" "" "no process of $tok is left"
        [ -n "$left" ] && kill -KILL $left 2>/dev/null
    done
    # Temporary files and directories: environment builds (.tmp-*), atomic
    # writes (.NAME.HEX.tmp).
    local tmps
    tmps=$(find "$T/state" -xdev \( -name '.tmp-*' -o -name '.*.tmp' \) 2>/dev/null | sed "s|$T/state/||" | tr '\n' ' ')
    is "$tmps" "" "no temporary file or directory is left in the state dir"
    local broken="" e
    for e in "$T"/state/envs/*/; do
        [ -d "$e" ] || continue
        case $(basename "$e") in
        base-*) [ -f "$e/pyvenv.cfg" ] || broken="$broken $(basename "$e")" ;;
        *) { [ -f "$e/runmyscript-env.txt" ] && [ -f "$e/pyvenv.cfg" ]; } || broken="$broken $(basename "$e")" ;;
        esac
    done
    is "$broken" "" "every environment in the cache is whole"
    is "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200 "the service answers /healthz"
    local sid
    post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"faults","version":"1"}}}' \
        -H "$ACCEPT_BOTH"
    sid=$(header Mcp-Session-Id)
    post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(\"still here\")"}}}' \
        -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $sid"
    is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["logs"]')" '["ok", "still here\n"]' \
        "and runs a script"
}

# session: a fresh MCP session; sets SID.
session() {
    post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"faults","version":"1"}}}' \
        -H "$ACCEPT_BOTH"
    SID=$(header Mcp-Session-Id)
    post '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
}

# runs_are RUNNING QUEUED: /healthz counts that many (for wait_for).
runs_are() {
    curl -sf "$BASE/healthz" | "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin)["runs"]
sys.exit(0 if (r["running"], r["queued"]) == (int(sys.argv[1]), int(sys.argv[2])) else 1)' "$1" "$2"
}

# token NAME: a token unique to this test run.
token() {
    echo "rmsfault-$1-$$-$RANDOM$RANDOM"
}
