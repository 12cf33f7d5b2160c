#!/bin/bash
# Two runmyscript nodes behind one nginx (nginx/cluster.conf.in, rendered
# by nginx/render-cluster), as if on two machines: each its own state_dir,
# node_id (b1, b2) and FastCGI port on loopback, accel_redirect off (the
# front nginx cannot read a node's files). Shows: sessions stick to the node
# their id names; runs and artifacts come from the node that holds them,
# byte for byte; /api/run spreads over both; run ids that are not ids are
# refused on every route; with b1 stopped, new sessions go to b2 and b1's
# old sessions and artifacts get a clean 404 (and, with the official SDK
# client, the 404 makes the client initialize again on b2).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/nginx.sh"
need "$NGINX" curl
N_SESSIONS=${N_SESSIONS:-16}

declare -A NODE_PID NODE_PORT
node_start() { # node_start NAME
    local name=$1 dir=$T/$1
    mkdir -p "$dir/state"
    printf 'state_dir = %s
node_id = %s
accel_redirect = off
log_level = info
task_after = 1s
' \
        "$dir/state" "$name" >"$dir/runmyscript.conf"
    NODE_PORT[$name]=$(free_port)
    # The environment would win over the file (tap.sh sets a state_dir):
    # --set wins over both.
    : >"$dir/serve.log" # (as tests/e2e/lib.sh: only this server's "serving on" counts)
    "$RUNMYSCRIPT" serve --listen "127.0.0.1:${NODE_PORT[$name]}" --config "$dir/runmyscript.conf" --workers 3 \
        --set "state_dir=$dir/state" >/dev/null 2>"$dir/serve.log" &
    NODE_PID[$name]=$!
    STACK_PIDS="$STACK_PIDS ${NODE_PID[$name]}"
    wait_for grep -q "serving on" "$dir/serve.log"
}
node_stop() { # node_stop NAME: SIGTERM, and wait until it is gone
    kill -TERM "${NODE_PID[$1]}" 2>/dev/null
    wait "${NODE_PID[$1]}" 2>/dev/null
}

node_start b1 && node_start b2 || { ok 1 "the nodes start"; cat "$T"/b*/serve.log | sed 's/^/# /'; done_testing; exit 1; }
# The front nginx: tests/lib/nginx.sh starts it on a free port (@PORT1@)
# around the rendered template.
CONFDIR=$T/nginx-conf
mkdir -p "$CONFDIR"
cp "$top_srcdir/nginx/fastcgi-params.conf" "$CONFDIR/"
"$top_srcdir/nginx/render-cluster" "$CONFDIR/cluster.conf" "b1=127.0.0.1:${NODE_PORT[b1]}" \
    "b2=127.0.0.1:${NODE_PORT[b2]}" -- "LISTEN=127.0.0.1:@PORT1@" "CONFDIR=$CONFDIR" "WWW=$top_srcdir/www"
ok $? "nginx/render-cluster renders the cluster template for b1 and b2"
# nginx.sh's exit trap (set by nginx_start) ends in cleanup_tmp, as
# lib.sh's does: let that stop the nodes first, whichever trap runs.
eval "tap_$(declare -f cleanup_tmp)"
cleanup_tmp() { stack_stop; tap_cleanup_tmp; }
nginx_start "$CONFDIR/cluster.conf"
BASE=http://127.0.0.1:$PORT1
wait_for curl -sf "$BASE/healthz"
ok $? "nginx answers /healthz through the cluster" || cat "$NGINX_PREFIX/logs/error.log" | sed 's/^/# /'

# mcp SID BODY: a request of session SID; status in $STATUS, body in $T/b.
mcp() {
    post "$2" -H 'Accept: application/json' -H "Mcp-Session-Id: $1" -H 'MCP-Protocol-Version: 2025-11-25'
}
call() { # call SID ID TOOL ARGS_JSON
    mcp "$1" '{"jsonrpc":"2.0","id":'"$2"',"method":"tools/call","params":{"name":"'"$3"'","arguments":'"$4"'}}'
}
node_of() { echo "${1%%-*}"; }
other() { [ "$1" = b1 ] && echo b2 || echo b1; }

# --- sessions stick to their node ----------------------------------------
SIDS=()
bad_init=0
for i in $(seq "$N_SESSIONS"); do
    init
    case $SID in b1-* | b2-*) SIDS+=("$SID") ;; *) bad_init=$((bad_init + 1)); diag "initialize: $STATUS $SID" ;; esac
done
is "$bad_init" 0 "$N_SESSIONS sessions: each id names its node (b1- or b2-)"
on_b1=0 on_b2=0 misplaced=0
for s in "${SIDS[@]}"; do
    n=$(node_of "$s")
    if [ "$n" = b1 ]; then on_b1=$((on_b1 + 1)); else on_b2=$((on_b2 + 1)); fi
    [ -f "$T/$n/state/sessions/$s/session.json" ] && [ ! -e "$T/$(other "$n")/state/sessions/$s" ] ||
        misplaced=$((misplaced + 1))
done
is "$misplaced" 0 "each session lives in its node's state_dir only"
ok "$([ $on_b1 -gt 0 ] && [ $on_b2 -gt 0 ]; echo $?)" "new sessions spread over both nodes ($on_b1 on b1, $on_b2 on b2)"

# Each session: a run that writes a file naming the session, then list_dir
# and preview_file, which only its own node can answer.
wrong=0 runs_misplaced=0 art_bad=0 zip_bad=0 hdr_bad=0
declare -A RUN_OF
for s in "${SIDS[@]}"; do
    n=$(node_of "$s")
    code='import os\nopen(os.path.join(os.environ[\"SCRIPT_OUTPUT\"], \"who.txt\"), \"w\").write(\"'"$s"'\\n\" * 100)\nprint(\"hi\")'
    call "$s" 2 run_code '{"code":"'"$code"'"}'
    run=$(jb 'r["result"]["structuredContent"]["run_id"]' 2>/dev/null)
    st=$(jb 'r["result"]["structuredContent"]["status"]' 2>/dev/null)
    if [ "$STATUS" != 200 ] || [ "$st" != ok ] || [ "$(node_of "$run")" != "$n" ]; then
        wrong=$((wrong + 1))
        diag "run_code in $s: $STATUS $st run $run $(head -c 300 "$T/b")"
        continue
    fi
    RUN_OF[$s]=$run
    [ -f "$T/$n/state/runs/$run/result.json" ] && [ ! -e "$T/$(other "$n")/state/runs/$run" ] ||
        runs_misplaced=$((runs_misplaced + 1))
    call "$s" 3 list_dir '{"dir_path":"output"}'
    grep -q 'who.txt' "$T/b" || { wrong=$((wrong + 1)); diag "list_dir in $s: $(head -c 300 "$T/b")"; }
    call "$s" 4 preview_file '{"relative_path":"output/who.txt"}'
    grep -q "$s" "$T/b" || { wrong=$((wrong + 1)); diag "preview_file in $s: $(head -c 300 "$T/b")"; }
    # The artifact through the front nginx, against the file on its node.
    curl -sS -o "$T/art" "$BASE/artifacts/$run/who.txt"
    cmp -s "$T/art" "$T/$n/state/runs/$run/output/who.txt" && [ "$(head -1 "$T/art")" = "$s" ] ||
        art_bad=$((art_bad + 1))
    curl -sS -o "$T/zip" "$BASE/artifacts/$run.zip"
    cmp -s "$T/zip" "$T/$n/state/runs/$run/artifacts.zip" || zip_bad=$((zip_bad + 1))
    # PRIMS's form: /artifacts/PATH, the node named by the session header.
    curl -sS -o "$T/art" -H "Mcp-Session-Id: $s" "$BASE/artifacts/who.txt"
    [ "$(head -1 "$T/art")" = "$s" ] || { hdr_bad=$((hdr_bad + 1)); diag "/artifacts/who.txt of $s: $(head -c 200 "$T/art")"; }
done
is "$wrong" 0 "each session's run_code, list_dir and preview_file land on its node (run ids name it)"
is "$runs_misplaced" 0 "each run's directory is on its session's node only"
is "$art_bad" 0 "each run's artifact downloads from the node that holds it, byte for byte"
is "$zip_bad" 0 "and its zip"
is "$hdr_bad" 0 "/artifacts/PATH with Mcp-Session-Id comes from the session's node"

# A session id moved to the other node's prefix is unknown there: the id,
# not luck, routes.
s=${SIDS[0]}
forged=$(other "$(node_of "$s")")-${s#*-}
mcp "$forged" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
is "$STATUS" 404 "a session id moved to the other node's prefix: 404 (that node has no such session)"

# --- /api/run: least connections over both -------------------------------
api_nodes="" api_bad=0
for i in 1 2 3 4; do
    st=$(curl -sS -o "$T/api" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary '{"code":"import os\nopen(os.path.join(os.environ[\"SCRIPT_OUTPUT\"], \"n.txt\"), \"w\").write(\"'"$i"'\")"}' \
        "$BASE/api/run")
    run=$("$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$T/api" 2>/dev/null)
    [ "$st" = 200 ] || api_bad=$((api_bad + 1))
    api_nodes="$api_nodes $(node_of "$run")"
    [ "$(curl -sS "$BASE/artifacts/$run/n.txt")" = "$i" ] || api_bad=$((api_bad + 1))
done
is "$api_bad" 0 "/api/run: 4 runs, each artifact from the node that ran it"
like "$api_nodes" b1 "/api/run reaches b1 ($api_nodes)"
like "$api_nodes" b2 "/api/run reaches b2"

# --- the page's Stop reaches the node that runs the run --------------------
# While a run holds a connection to its node, least_conn would send any other
# /api/ request to the other node: the cancel must be routed by its run id.
curl -sS -N -o "$T/sse" -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
    --data-binary '{"code":"import time\nprint(\"started\", flush=True)\ntime.sleep(60)"}' "$BASE/api/run" &
SSE=$!
wait_for grep -q '"text":"started' "$T/sse"
run=$(sed -n 's/^data: {"run_id":"\([^"]*\)".*/\1/p' "$T/sse" | head -1)
like "$run" "-" "a slow /api/run over SSE names its run ($run)"
st=$(curl -sS -o "$T/cancel" -w '%{http_code}' -X POST "$BASE/api/run/$run/cancel")
is "$st" 202 "its cancel, sent while the run holds a connection to $(node_of "$run"), reaches that node"
wait "$SSE"
like "$(grep -A1 '^event: result' "$T/sse")" '"status":"cancelled"' "and the run ends cancelled"

# --- ids that are not ids ---------------------------------------------------
run=${RUN_OF[${SIDS[0]}]:-b1-00000000000000000000000000000000}
hex=${run#*-}
refused=0
for p in "b1-../$hex/who.txt" "B1-$hex/who.txt" "b1--$hex/who.txt" "-$hex/who.txt" \
    "0123456789abcdefg-$hex/who.txt" "b1-${hex}0/who.txt" "$run/../result.json" "$run/%2e%2e/result.json" \
    "b1/$hex/who.txt" "$run/../../$run/who.txt" "$run.zip/x" "$run/"; do
    st=$(curl -sS -o /dev/null -w '%{http_code}' --path-as-is "$BASE/artifacts/$p")
    case $st in 400 | 404) ;; *) refused=$((refused + 1)); diag "/artifacts/$p: $st" ;; esac
done
is "$refused" 0 "12 malformed or hostile run ids and paths: 400 or 404 through the cluster"
mcp "b1-../../etc" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
is "$STATUS" 404 "a session id with a path in it: 404"

# --- 2026-07-28: workspaces and tasks find their node by their handle -------
# No session: run_code makes a workspace on whichever node the hash picks;
# later calls name it in Mcp-Param-Workspace, tasks/get names its task in
# Mcp-Name, and nginx routes on those headers alone.
# 16, as many as the sessions above: each node is picked by a hash of a
# random id, so 8 all fell on one node about once in a hundred runs.
N_WS=16
ws_b1=0 ws_b2=0 wrong=0
for i in $(seq $N_WS); do
    mpost tools/call '"name":"run_code","arguments":{"code":"open(\"n.txt\", \"w\").write(\"'"$i"'\")"}' -H "Mcp-Name: run_code"
    wid=$(jb 'r["result"]["structuredContent"]["workspace"]')
    case $wid in b1-*) ws_b1=$((ws_b1 + 1)) ;; b2-*) ws_b2=$((ws_b2 + 1)) ;; *) wrong=$((wrong + 1)); continue ;; esac
    [ -d "$T/$(node_of "$wid")/state/workspaces/$wid" ] || wrong=$((wrong + 1))
    mpost tools/call '"name":"preview_file","arguments":{"relative_path":"n.txt","workspace":"'"$wid"'"}' \
        -H "Mcp-Name: preview_file" -H "Mcp-Param-Workspace: $wid"
    [ "$(jb 'r["result"]["structuredContent"]["text"]')" = "$i" ] || wrong=$((wrong + 1))
done
is "$wrong" 0 "2026-07-28: $N_WS workspaces, each named by its node and reached there by Mcp-Param-Workspace"
[ "$ws_b1" -gt 0 ] && [ "$ws_b2" -gt 0 ]
ok $? "2026-07-28: new workspaces spread over both nodes (b1: $ws_b1, b2: $ws_b2)"
# A workspace's kernel lives on its node: the handle's next cell finds it.
kept=0
for i in 1 2 3 4; do
    mpost tools/call '"name":"run_cell","arguments":{"code":"x = '"$i"'"}' -H "Mcp-Name: run_cell"
    wid=$(jb 'r["result"]["structuredContent"]["workspace"]')
    mpost tools/call '"name":"run_cell","arguments":{"code":"x * 10","workspace":"'"$wid"'"}' \
        -H "Mcp-Name: run_cell" -H "Mcp-Param-Workspace: $wid"
    [ "$(jb 'r["result"]["structuredContent"]["value"], r["result"]["structuredContent"]["kernel"]["state"]')" = \
        '["'"$i"'0", "kept"]' ] && kept=$((kept + 1)) || diag "$wid: $(head -c 300 "$T/b")"
done
is "$kept" 4 "2026-07-28: a workspace's kernel lives on its node, and its handle's next cell is routed to it (kept)"
tasks_ok=0
for i in 1 2 3 4; do
    CAPS=$TASKS_CAP mpost tools/call '"name":"run_my_script","arguments":{"code":"import time\ntime.sleep(2)\nprint(\"t'"$i"'\")"}' \
        -H "Mcp-Name: run_my_script"
    tid=$(jb 'r["result"]["taskId"]')
    case $tid in b1-* | b2-*) ;; *) diag "not a task: $(head -c 300 "$T/b")"; continue ;; esac
    task_poll "$tid"
    [ "$(jb 'r["result"]["status"], r["result"]["result"]["structuredContent"]["logs"]')" = '["completed", "t'"$i"'\n"]' ] &&
        tasks_ok=$((tasks_ok + 1))
done
is "$tasks_ok" 4 "2026-07-28: tasks/get reaches each task's node by its Mcp-Name"

# --- a node stops -------------------------------------------------------------
SDK_PID=
MODULES=$top_srcdir/tests/node_modules
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=$(command -v node || true)
if [ -d "$MODULES/@modelcontextprotocol/sdk" ] && [ -n "$NODE" ]; then
    MCP_URL=$BASE/mcp READY_FILE=$T/sdk-ready GO_FILE=$T/sdk-go TAP_FROM=1000 \
        "$NODE" "$top_srcdir/tests/e2e/cluster-client.mjs" >"$T/sdk.tap" 2>&1 &
    SDK_PID=$!
    wait_for test -s "$T/sdk-ready" || diag "the SDK client did not get ready: $(cat "$T/sdk.tap")"
fi

node_stop b1
ok $? "b1 stopped (SIGTERM)"
stale=0 stale_art=0 alive_bad=0
for s in "${SIDS[@]}"; do
    if [ "$(node_of "$s")" = b1 ]; then
        mcp "$s" '{"jsonrpc":"2.0","id":9,"method":"tools/list"}'
        code=$(jb 'r["error"]["code"]' 2>/dev/null)
        [ "$STATUS" = 404 ] && [ "$code" = -32001 ] || { stale=$((stale + 1)); diag "$s: $STATUS $(head -c 200 "$T/b")"; }
        st=$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/artifacts/${RUN_OF[$s]:-none}/who.txt")
        [ "$st" = 404 ] || { stale_art=$((stale_art + 1)); diag "artifact of ${RUN_OF[$s]:-none}: $st"; }
    else
        mcp "$s" '{"jsonrpc":"2.0","id":9,"method":"tools/list"}'
        [ "$STATUS" = 200 ] || alive_bad=$((alive_bad + 1))
    fi
done
is "$stale" 0 "b1's $on_b1 sessions: HTTP 404 with JSON-RPC -32001 'Session not found' (the client's cue to initialize again)"
is "$stale_art" 0 "b1's artifacts: a clean 404, not a 502"
is "$alive_bad" 0 "b2's $on_b2 sessions go on"
moved=0
for i in 1 2 3 4 5 6; do
    init
    case $SID in b2-*) ;; *) moved=$((moved + 1)); diag "initialize with b1 down: $STATUS '$SID'" ;; esac
done
is "$moved" 0 "6 new sessions with b1 down: all on b2"
call "$SID" 2 run_code '{"code":"print(6 * 7)"}'
is "$(jb 'repr(r["result"]["structuredContent"]["logs"])' 2>/dev/null)" "'42\\n'" "and they run scripts"
st=$(curl -sS -o "$T/api" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary '{"code":"print(1)"}' \
    "$BASE/api/run")
is "$st" 200 "/api/run with b1 down goes to b2"

if [ -n "$SDK_PID" ]; then
    touch "$T/sdk-go"
    wait "$SDK_PID"
    sdk_rc=$?
    # The client's own TAP lines, renumbered into ours.
    while IFS= read -r line; do
        case $line in
        "ok "*" - "*) ok 0 "${line#* - }" ;;
        "not ok "*" - "*) ok 1 "${line#* - }" ;;
        *) diag "$line" ;;
        esac
    done <"$T/sdk.tap"
    is "$sdk_rc" 0 "the SDK client exits 0"
else
    diag "skipped the SDK client's part: tests/node_modules has no @modelcontextprotocol/sdk (./quickstart test runs npm ci)"
fi
done_testing
