# lib.sh: the end-to-end tests' server: `runmyscript serve` (or fcgiwrap
# running runmyscript as CGI) behind a real nginx on a free 127.0.0.1 port,
# both started here and stopped by pid when the test exits. Source it after
# tap.sh.
#
#   stack_start serve|tcp|cgi|stdin  then $BASE is http://127.0.0.1:PORT
#                              (tcp: serve --listen 127.0.0.1:PORT)
#   STACK_CONF="key = value\n..."  extra configuration lines (set before)
#   STACK_WORKERS=N            workers of serve (default 4)
#   STACK_NGINX_CONNECTIONS=N  nginx's worker_connections (default the template's 1024)
NGINX=${NGINX:-/usr/sbin/nginx}
FCGIWRAP=${FCGIWRAP:-/usr/sbin/fcgiwrap}
STACK_PIDS=""
T=$TEST_TMP

stack_stop() {
    local p kids
    for p in $STACK_PIDS; do
        # fcgiwrap's children do not follow their parent: stop them by pid.
        kids=""
        [ "$(ps -o comm= -p "$p" 2>/dev/null)" = fcgiwrap ] && kids=$(pgrep -P "$p" 2>/dev/null | tr '\n' ' ')
        kill -TERM "$p" $kids 2>/dev/null
    done
    for p in $STACK_PIDS; do
        # wait only works for our own children, which these are.
        wait "$p" 2>/dev/null
    done
    STACK_PIDS=""
}
stack_exit() {
    stack_stop
    cleanup_tmp
}
trap stack_exit EXIT

# need PROGRAM...: skip_all when one is missing.
need() {
    local p
    for p in "$@"; do
        [ -x "$p" ] || command -v "$p" >/dev/null 2>&1 || skip_all "$p is not installed (./quickstart test installs it)"
    done
}

# need_sdk: the npm packages of tests/ (the official SDK) and a node to run
# them; sets MODULES and NODE, or skip_all.
need_sdk() {
    MODULES=$top_srcdir/tests/node_modules
    [ -d "$MODULES/@modelcontextprotocol/sdk" ] ||
        skip_all "the npm packages are not installed in tests/ (./quickstart test runs npm ci there)"
    NODE=$MODULES/.bin/node
    [ -x "$NODE" ] || NODE=node
    need "$NODE"
}

# have_pillow: HAVE_PILLOW=1 when the test wheelhouse has pillow (the seed
# script imports PIL), else 0.
have_pillow() {
    HAVE_PILLOW=0
    if [ -n "${WHEELHOUSE:-}" ] && ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1; then
        HAVE_PILLOW=1
    fi
}

free_port() {
    "$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for CMD...: retries CMD for up to 20 s (WAIT_S: as many seconds).
wait_for() {
    local i
    for i in $(seq $((${WAIT_S:-20} * 10))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

stack_start() {
    local mode=$1 extra="" fcgi
    need "$NGINX" curl
    PREFIX=$T/nginx
    mkdir -p "$PREFIX/tmp" "$T/state"
    CONF=$T/runmyscript.conf
    printf 'state_dir = %s\nlog_level = info\n%b\n' "$T/state" "${STACK_CONF:-}" >"$CONF"
    if [ "$mode" = stdin ]; then
        # FastCGI on stdin: spawn-fcgi binds the socket and starts the
        # program with it as fd 0 (-n: in the foreground, so its pid is ours).
        need spawn-fcgi
        fcgi=$T/spawn.sock
        RUNMYSCRIPT_CONFIG=$CONF spawn-fcgi -n -s "$fcgi" -- "$RUNMYSCRIPT" >/dev/null 2>"$T/serve.log" &
        STACK_PIDS="$STACK_PIDS $!"
    elif [ "$mode" = cgi ]; then
        need "$FCGIWRAP"
        fcgi=$T/fcgiwrap.sock
        "$FCGIWRAP" -c 4 -s "unix:$fcgi" >/dev/null 2>"$T/fcgiwrap.log" &
        STACK_PIDS="$STACK_PIDS $!"
        # fcgiwrap hands the CGI program exactly the FastCGI parameters.
        extra="fastcgi_param SCRIPT_FILENAME $RUNMYSCRIPT; fastcgi_param RUNMYSCRIPT_CONFIG $CONF;"
    else
        local listen
        if [ "$mode" = tcp ]; then
            fcgi=127.0.0.1:$(free_port)
            listen=$fcgi
        else
            fcgi=$T/fcgi.sock
            listen=unix:$fcgi
        fi
        # The log is emptied here, before the server starts: the wait for
        # "serving on" below must not read the line of a server this test
        # ran before (a TERM sent on that would reach the new one before
        # the program had its handlers, while bash's child had its own,
        # and be lost).
        : >"$T/serve.log"
        "$RUNMYSCRIPT" serve --listen "$listen" --config "$CONF" --workers "${STACK_WORKERS:-4}" \
            >/dev/null 2>"$T/serve.log" &
        SERVE_PID=$!
        STACK_PIDS="$STACK_PIDS $SERVE_PID"
    fi
    if [ "$mode" = tcp ]; then
        wait_for grep -q "serving on" "$T/serve.log" || { diag "serve did not start"; return 1; }
    else
        wait_for test -S "$fcgi" || { diag "the FastCGI socket did not appear"; return 1; }
        fcgi=unix:$fcgi
    fi
    PORT=$(free_port)
    local user_line=""
    [ "$(id -u)" = 0 ] && user_line="user root;"
    "$top_srcdir/nginx/render" "$top_srcdir/nginx/dev.conf.in" "$PREFIX/nginx.conf" \
        "PREFIX=$PREFIX" "LISTEN=127.0.0.1:$PORT" "WWW=$top_srcdir/www" "FASTCGI=$fcgi" \
        "STATE=$T/state" "MAX_BODY=${STACK_MAX_BODY:-96m}" "USER_LINE=$user_line" "CONFDIR=$PREFIX" \
        "EXTRA_PARAMS=$extra"
    cp "$top_srcdir/nginx/fastcgi-params.conf" "$PREFIX/"
    if [ -n "${STACK_NGINX_CONNECTIONS:-}" ]; then
        sed -i "s/worker_connections 1024;/worker_connections $STACK_NGINX_CONNECTIONS;/" "$PREFIX/nginx.conf"
        sed -i "s/^worker_processes 1;/worker_processes 1;\nworker_rlimit_nofile $((STACK_NGINX_CONNECTIONS * 2 + 64));/" \
            "$PREFIX/nginx.conf"
    fi
    "$NGINX" -p "$PREFIX" -c "$PREFIX/nginx.conf" -g 'daemon off;' >/dev/null 2>"$T/nginx.log" &
    STACK_PIDS="$STACK_PIDS $!"
    BASE=http://127.0.0.1:$PORT
    wait_for curl -sf "$BASE/healthz" || {
        diag "the server did not answer /healthz"
        cat "$T/nginx.log" "$PREFIX/error.log" "$T/serve.log" 2>/dev/null | sed 's/^/# /'
        return 1
    }
}

ACCEPT_BOTH='Accept: application/json, text/event-stream'

# post BODY [CURL ARGS...]: POSTs BODY to /mcp; the status in $STATUS, the
# headers in $T/h, the body in $T/b.
post() {
    local body=$1
    shift
    # -N: write what arrives at once (the streaming tests read $T/b while
    # the call runs); a body starting with @ is read from that file.
    STATUS=$(curl -sS -N -o "$T/b" -D "$T/h" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        "$@" --data-binary "$body" "$BASE/mcp")
}
# header NAME: a response header of the last request (case-insensitive).
header() {
    grep -i "^$1:" "$T/h" | head -1 | cut -d: -f2- | tr -d '\r' | sed 's/^ *//'
}
# jb EXPR: a Python expression on the JSON body (r), or on the last SSE
# message event's data (for text/event-stream).
jb() {
    "$PYTHON3" - "$T/b" "$1" <<'PY'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
if raw.startswith("event:") or raw.startswith("data:") or raw.startswith(":"):
    msgs = [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:") and l[5:].strip()]
    r = msgs[-1] if msgs else None
else:
    msgs = None
    r = json.loads(raw) if raw.strip() else None
v = eval(sys.argv[2], {"r": r, "msgs": msgs})
print(v if isinstance(v, str) else json.dumps(v))
PY
}
# seed_call ID CODE_FILE: the JSON-RPC tools/call of run_my_script with
# CODE_FILE's script and the seed's input (tests/fixtures/seeds/).
seed_call() {
    "$PYTHON3" - "$1" "$2" "$top_srcdir/tests/fixtures/seeds/run_my_script_test_input.json" <<'PY'
import json, sys
code = open(sys.argv[2]).read()
inp = open(sys.argv[3]).read()
print(json.dumps({"jsonrpc": "2.0", "id": int(sys.argv[1]), "method": "tools/call",
                  "params": {"name": "run_my_script", "arguments": {"code": code, "user_input": inp}}}))
PY
}
# init [REVISION]: initialize and notifications/initialized; sets $SID.
init() {
    local rev=${1:-2025-11-25}
    post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'"$rev"'","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' \
        -H "$ACCEPT_BOTH"
    SID=$(header Mcp-Session-Id)
    post '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" \
        -H "MCP-Protocol-Version: $rev"
}

# abs URL: a URL of a result (/artifacts/RUN/...) made absolute on $BASE's
# scheme and host.
abs() {
    case "$1" in
    /*) printf '%s%s' "$(printf '%s' "$BASE" | sed -E 's|^(https?://[^/]*).*|\1|')" "$1" ;;
    *) printf '%s' "$1" ;;
    esac
}

# mcp_cases MODE [LABEL]: the MCP and /api/run cases every way of serving
# passes (cgi.sh, apache.sh); MODE is what /healthz must say.
mcp_cases() {
    local mode=$1 label=${2:-$1}
    curl -sS -o "$T/b" "$BASE/healthz"
    is "$(jb 'r["mode"]')" "$mode" "$label: /healthz says the mode"
    init 2025-11-25
    is "$STATUS" 202 "$label: initialize, initialized"
    [[ "$SID" =~ ^[0-9a-f]{32}$ ]]
    ok $? "$label: a session id"
    local H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
    post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${H[@]}"
    is "$(jb 'len(r["result"]["tools"])')" 7 "$label: tools/list (seven tools)"
    post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import os, sys\nprint(\"out\")\nprint(\"err\", file=sys.stderr)\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/f.txt\", \"w\").write(\"via '$mode'\")"},"_meta":{"progressToken":3}}}' "${H[@]}"
    like "$(header Content-Type)" text/event-stream "$label: tools/call streams"
    is "$(jb 'sorted(m["params"]["data"] for m in msgs if m.get("method") == "notifications/message")')" '["err", "out"]' \
        "$label: log notifications"
    is "$(jb 'len([m for m in msgs if m.get("method") == "notifications/progress"])')" 5 "$label: progress notifications"
    is "$(jb 'r["result"]["structuredContent"]["status"]')" ok "$label: the result"
    local url
    url=$(jb '[c["uri"] for c in r["result"]["content"] if c["type"] == "resource_link"][0]')
    is "$(curl -sS "$url")" "via $mode" "$label: the artifact downloads"
    url=$(abs "$(jb 'r["result"]["structuredContent"]["zip_url"]')")
    curl -sS -o "$T/a.zip" -D "$T/zh" "$url"
    is "$(unzip -p "$T/a.zip" f.txt)" "via $mode" "$label: the zip downloads and holds the file"
    like "$(grep -i '^Content-Type:' "$T/zh")" "application/zip" "$label: as application/zip"
    post '{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"list_dir","arguments":{"dir_path":"output"}}}' "${H[@]}"
    is "$(jb '[e["name"] for e in r["result"]["structuredContent"]["entries"]]')" '["f.txt"]' "$label: list_dir"
    post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"preview_file","arguments":{"relative_path":"output/f.txt"}}}' "${H[@]}"
    is "$(jb 'r["result"]["structuredContent"]["text"]')" "via $mode" "$label: preview_file in the session's workspace"
    post '{"jsonrpc":"2.0","id":5,"method":"ping"}' "${H[@]}" -H "Origin: http://evil.example.com"
    is "$STATUS" 403 "$label: a foreign Origin is 403"
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X DELETE "${H[@]}" "$BASE/mcp")
    is "$STATUS" 200 "$label: DELETE"
    post '{"jsonrpc":"2.0","id":6,"method":"ping"}' "${H[@]}"
    is "$STATUS" 404 "$label: then 404"
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        -d '{"code":"import sys\nprint(sys.stdin.read()[::-1])","input":"olleh"}' "$BASE/api/run")
    is "$STATUS/$(jb 'r["status"], r["logs"]')" '200/["ok", "hello\n"]' "$label: /api/run"
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{"code":""}' "$BASE/api/run")
    is "$STATUS" 400 "$label: /api/run with an empty script: 400"
}

# The 2026-07-28 revision: mpost METHOD PARAMS [CURL ARGS...] POSTs a
# request of METHOD whose params are {PARAMS, _meta} (the revision, the
# capabilities $CAPS, and $META_EXTRA), with the headers that mirror it
# (MCP-Protocol-Version $PV and Mcp-Method $MM when set instead); the args
# add headers. The id is $MID (default 1).
META_EXTRA=""
mpost() {
    local m=$1 p=$2 meta
    shift 2
    meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{'"${CAPS:-}"'}'"$META_EXTRA"'}'
    post "{\"jsonrpc\":\"2.0\",\"id\":${MID:-1},\"method\":\"$m\",\"params\":{${p:+$p,}$meta}}" -H "$ACCEPT_BOTH" \
        -H "MCP-Protocol-Version: ${PV:-2026-07-28}" -H "Mcp-Method: ${MM:-$m}" "$@"
}
TASKS_CAP='"extensions":{"io.modelcontextprotocol/tasks":{}}'
# task_poll TID: tasks/get (with the extension) until the task is no longer
# working (at most 20 s); the last answer is in $T/b.
task_poll() {
    local i
    for i in $(seq 100); do
        CAPS=$TASKS_CAP mpost tasks/get '"taskId":"'"$1"'"' -H "Mcp-Name: $1"
        [ "$(jb 'r["result"]["status"]')" = working ] || break
        sleep 0.2
    done
}

# modern_cases LABEL: the transport rules of 2026-07-28 and a legacy
# session beside them, the workspace handles and a task (cgi.sh, apache.sh,
# modern.sh; the server's task_after must be at most 1 s). MODERN_STATE is
# the server's state_dir ($T/state); MODERN_DIRECT=1 when no nginx is in
# front (nginx takes X-Accel-Buffering for itself).
modern_cases() {
    local label=$1 wid tid run i state=${MODERN_STATE:-$T/state}
    mpost server/discover ""
    is "$STATUS/$(jb 'r["result"]["supportedVersions"][0], r["result"]["resultType"], r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]')" \
        '200/["2026-07-28", "complete", "runmyscript"]' "$label: server/discover"
    is "$(jb '"io.modelcontextprotocol/tasks" in r["result"]["capabilities"]["extensions"] and "2025-11-25" in r["result"]["supportedVersions"]')" \
        true "$label: it offers the tasks extension and the legacy revisions"
    [ -z "$(header Mcp-Session-Id)" ]
    ok $? "$label: no session is minted"
    MID=7 PV=2025-11-25 mpost server/discover ""
    is "$STATUS/$(jb 'r["error"]["code"], r["id"]')" '400/[-32020, 7]' "$label: MCP-Protocol-Version unlike _meta's: 400 HeaderMismatch, with the id"
    post '{"jsonrpc":"2.0","id":8,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' \
        -H "$ACCEPT_BOTH" -H "MCP-Protocol-Version: 2099-01-01" -H "Mcp-Method: server/discover"
    is "$STATUS/$(jb 'r["error"]["code"], r["error"]["data"]["requested"], "2026-07-28" in r["error"]["data"]["supported"]')" \
        '400/[-32022, "2099-01-01", true]' "$label: an unknown revision: 400 UnsupportedProtocolVersion listing ours"
    post '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
        -H "$ACCEPT_BOTH" -H "MCP-Protocol-Version: 2026-07-28"
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32020' "$label: no Mcp-Method: 400 HeaderMismatch"
    MM=prompts/list mpost tools/list ""
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32020' "$label: Mcp-Method unlike the body's: 400 HeaderMismatch"
    post '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}' -H "$ACCEPT_BOTH" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/list"
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32602' "$label: no _meta: 400 Invalid params"
    mpost tools/call '"name":"run_my_script","arguments":{"code":"print(1)"}'
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32020' "$label: tools/call without Mcp-Name: 400 HeaderMismatch"
    mpost tools/call '"name":"run_my_script","arguments":{"code":"print(1)"}' -H "Mcp-Name: =?base64?cnVuX215X3NjcmlwdA==?="
    is "$STATUS/$(jb 'r["result"]["structuredContent"]["status"], r["result"]["resultType"]')" '200/["ok", "complete"]' \
        "$label: Mcp-Name in the Base64 form is decoded"
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -H "$ACCEPT_BOTH" \
        -H "MCP-Protocol-Version: 2026-07-28" --data-binary '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' "$BASE/mcp")
    is "$STATUS/$(wc -c <"$T/b")" "202/0" "$label: a notification: 202, no body"
    for m in ping logging/setLevel initialize no/such; do
        mpost "$m" ""
        is "$STATUS/$(jb 'r["error"]["code"]')" '404/-32601' "$label: $m: 404 Method not found"
    done
    mpost tools/list ""
    local list1
    list1=$(jb '[t["name"] for t in r["result"]["tools"]]')
    is "$(jb 'r["result"]["ttlMs"] > 0, r["result"]["cacheScope"], r["result"]["resultType"]')" '[true, "public", "complete"]' \
        "$label: tools/list has ttlMs and cacheScope"
    mpost tools/list ""
    is "$(jb '[t["name"] for t in r["result"]["tools"]]')" "$list1" "$label: tools/list in the same order again"
    like "$list1" '"delete_workspace"' "$label: with delete_workspace"

    # Log notifications only at the level _meta asks for.
    local code='"code":"import sys\nprint(\"out\")\nprint(\"err\", file=sys.stderr)"'
    mpost tools/call "\"name\":\"run_my_script\",\"arguments\":{$code}" -H "Mcp-Name: run_my_script"
    is "$(jb '[m["params"]["data"] for m in msgs if m.get("method") == "notifications/message"]')" '[]' \
        "$label: no logLevel: no log notifications"
    META_EXTRA=',"io.modelcontextprotocol/logLevel":"warning","progressToken":"p1"' \
        mpost tools/call "\"name\":\"run_my_script\",\"arguments\":{$code}" -H "Mcp-Name: run_my_script"
    is "$(jb '[m["params"]["data"] for m in msgs if m.get("method") == "notifications/message"]')" '["err"]' \
        "$label: logLevel warning: stderr's line only"
    is "$(jb 'len([m for m in msgs if m.get("method") == "notifications/progress"]) >= 3')" true "$label: progress on the call's stream"
    if [ "${MODERN_DIRECT:-}" = 1 ]; then
        is "$(header X-Accel-Buffering)" no "$label: X-Accel-Buffering: no on the stream"
    fi

    # Workspaces: made by run_code, named by the handle, routed by Mcp-Param-Workspace.
    mpost tools/call '"name":"run_code","arguments":{"code":"open(\"w.txt\", \"w\").write(\"kept\")"}' -H "Mcp-Name: run_code"
    wid=$(jb 'r["result"]["structuredContent"]["workspace"]')
    [[ "$wid" =~ ^([A-Za-z0-9-]+-)?[0-9a-f]{32}$ ]]
    ok $? "$label: run_code made a workspace ($wid)"
    mpost tools/call '"name":"preview_file","arguments":{"relative_path":"w.txt","workspace":"'"$wid"'"}' \
        -H "Mcp-Name: preview_file" -H "Mcp-Param-Workspace: $wid"
    is "$(jb 'r["result"]["structuredContent"]["text"]')" kept "$label: preview_file in it by its handle"
    mpost tools/call '"name":"preview_file","arguments":{"relative_path":"w.txt","workspace":"'"$wid"'"}' -H "Mcp-Name: preview_file"
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32020' "$label: the workspace without Mcp-Param-Workspace: 400 HeaderMismatch"
    local before
    before=$(ls "$state/workspaces" | wc -l)
    mpost tools/call '"name":"run_code","arguments":{"code":42}' -H "Mcp-Name: run_code"
    is "$(jb 'r["result"]["isError"], "structuredContent" in r["result"]')/$(ls "$state/workspaces" | wc -l)" \
        "[true, false]/$before" "$label: run_code refusing its arguments keeps no new workspace"
    mpost tools/call '"name":"list_dir","arguments":{"workspace":"0123456789abcdef0123456789abcdef"}' \
        -H "Mcp-Name: list_dir" -H "Mcp-Param-Workspace: 0123456789abcdef0123456789abcdef"
    is "$(jb 'r["result"]["isError"]')" true "$label: an unknown workspace is a tool error"

    # Both eras side by side: a legacy session on the same endpoint.
    init 2025-11-25
    post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
    # Under serve run_cell, reset_kernel and save_kernel too (kernels), elsewhere not.
    local want=7
    [ "$label" = serve ] && want=10
    is "$(jb 'len(r["result"]["tools"])')" $want "$label: a legacy session beside them ($want tools, no workspace argument)"
    mpost tools/list "" -H "Mcp-Session-Id: $SID"
    is "$STATUS/$(header Mcp-Session-Id)" "200/" "$label: a modern request ignores Mcp-Session-Id"

    # Closing the stream cancels the run, whatever cancel_on_disconnect says.
    mpost tools/call '"name":"run_my_script","arguments":{"code":"import time\ntime.sleep(60)"}' -H "Mcp-Name: run_my_script" \
        --max-time 3 2>/dev/null
    run=""
    for i in $(seq 100); do
        run=$(grep -l '"status":"cancelled"' "$state"/runs/*/result.json 2>/dev/null | head -1)
        [ -n "$run" ] && break
        sleep 0.2
    done
    ok "$([ -n "$run" ]; echo $?)" "$label: a closed stream cancels its run"
    if [ -n "$run" ]; then
        flock -n "$(dirname "$run")" true 2>/dev/null
        ok $? "$label: and nothing of it is left running (its directory's lock is free)"
    else
        ok 1 "$label: and nothing of it is left running (there is no cancelled run to look at)"
    fi

    # A task: the run goes on without the stream; tasks/get polls it.
    CAPS=$TASKS_CAP mpost tools/call '"name":"run_code","arguments":{"code":"import time\ntime.sleep(3)\nprint(\"late\")"}' -H "Mcp-Name: run_code"
    tid=$(jb 'r["result"]["taskId"]')
    is "$(jb 'r["result"]["resultType"], r["result"]["status"]')" '["task", "working"]' "$label: a long run with the tasks extension becomes a task"
    CAPS=$TASKS_CAP mpost tasks/get '"taskId":"'"$tid"'"' -H "Mcp-Name: wrong"
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32020' "$label: tasks/get with Mcp-Name unlike its taskId: 400"
    mpost tasks/get '"taskId":"'"$tid"'"' -H "Mcp-Name: $tid"
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32021' "$label: tasks/get without the extension: 400 MissingRequiredClientCapability"
    task_poll "$tid"
    is "$(jb 'r["result"]["status"], r["result"]["result"]["structuredContent"]["logs"]')" '["completed", "late\n"]' \
        "$label: tasks/get polls it to its end, with the result"
    # Status notifications: subscriptions/listen follows the task to its end.
    CAPS=$TASKS_CAP mpost tools/call '"name":"run_code","arguments":{"code":"import time\ntime.sleep(2)"}' -H "Mcp-Name: run_code"
    tid=$(jb 'r["result"]["taskId"]')
    MID=41 CAPS=$TASKS_CAP mpost subscriptions/listen '"notifications":{"taskIds":["'"$tid"'","0123456789abcdef0123456789abcdef"]}' \
        --max-time 30
    is "$(jb 'msgs[0]["method"], msgs[0]["params"]["notifications"], msgs[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]')" \
        '["notifications/subscriptions/acknowledged", {"taskIds": ["'"$tid"'"]}, 41]' \
        "$label: subscriptions/listen acknowledges the task it can follow, first"
    is "$(jb '[m["params"]["status"] for m in msgs if m.get("method") == "notifications/tasks"][-1], all(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 41 for m in msgs if "method" in m)')" \
        '["completed", true]' "$label: notifications/tasks to the task's end, each tagged with the subscription"
    is "$(jb 'r["id"], r["result"]["resultType"]')" '[41, "complete"]' "$label: then the subscription ends with its result"
    mpost subscriptions/listen '"notifications":{"taskIds":["'"$tid"'"]}'
    is "$STATUS/$(jb 'r["error"]["code"]')" '400/-32021' "$label: task notifications without the extension: 400"
    mpost subscriptions/listen '"notifications":{"toolsListChanged":true}' --max-time 10
    is "$(jb 'msgs[0]["params"]["notifications"], r["result"]["resultType"]')" '[{}, "complete"]' \
        "$label: tools/list_changed is never agreed to (the list never changes): an empty acknowledgement, then the end"

    CAPS=$TASKS_CAP mpost tools/call '"name":"run_my_script","arguments":{"code":"import time\ntime.sleep(60)"}' -H "Mcp-Name: run_my_script"
    tid=$(jb 'r["result"]["taskId"]')
    CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$tid"'"' -H "Mcp-Name: $tid"
    is "$STATUS/$(jb 'sorted(r["result"]), r["result"]["resultType"]')" '200/[["_meta", "resultType"], "complete"]' \
        "$label: tasks/cancel: an empty acknowledgement"
    task_poll "$tid"
    is "$(jb 'r["result"]["status"]')" cancelled "$label: the task is cancelled"
    CAPS=$TASKS_CAP mpost tasks/get '"taskId":"0123456789abcdef0123456789abcdef"' -H "Mcp-Name: 0123456789abcdef0123456789abcdef"
    is "$(jb 'r["error"]["code"]')" -32602 "$label: an unknown task: Invalid params"
}
