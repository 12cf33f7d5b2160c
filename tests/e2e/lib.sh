# lib.sh: the end-to-end tests' server: `runmyscript serve` (or fcgiwrap
# running runmyscript as CGI) behind a real nginx on a free 127.0.0.1 port,
# both started here and stopped by pid when the test exits. Source it after
# tap.sh.
#
#   stack_start serve|tcp|cgi|stdin  then $BASE is http://127.0.0.1:PORT
#                              (tcp: serve --listen 127.0.0.1:PORT)
#   STACK_CONF="key = value\n..."  extra configuration lines (set before)
#   STACK_WORKERS=N            workers of serve (default 4)
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

free_port() {
    "$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for CMD...: retries CMD for up to 20 s.
wait_for() {
    local i
    for i in $(seq 200); do
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
    is "$(jb 'len(r["result"]["tools"])')" 6 "$label: tools/list (six tools)"
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
