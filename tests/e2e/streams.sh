#!/bin/bash
# Streams that cost no worker, through nginx, against a server with three
# workers: 1,000 subscriptions/listen streams open at once while /healthz,
# MCP calls and /api/run answer as usual, and all of them end with their
# task; a tools/call whose client does not read frees its worker when its
# run ends and is cut after stream_stall, or at once past
# stream_buffer_bytes (a legacy run goes on to its result, a 2026-07-28 one
# is cancelled: its stream was the call's); the stream process killed with
# SIGKILL is started again and new streams work.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
HOGS=1000
# Each stream is a connection: nginx holds two, the test one.
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((HOGS * 3 + 200)) ] ||
    skip_all "the open-files limit is $(ulimit -n): $HOGS streams need $((HOGS * 3 + 200))"
STACK_WORKERS=3
STACK_NGINX_CONNECTIONS=4096
STACK_CONF='task_after = 0\nstream_buffer_bytes = 16M\nstream_stall = 5s\nlog_bytes = 64M\nmax_streams_per_client = 2000'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
HOG="$top_srcdir/tests/lib/stream_hog.py"

# health EXPR: a Python expression on /healthz's JSON (h), or "down" when
# it does not answer within 10 s.
health() {
    curl -sS --max-time 10 -o "$T/hz" "$BASE/healthz" 2>/dev/null || { echo down; return; }
    "$PYTHON3" -c 'import json, sys; h = json.load(open(sys.argv[1])); v = eval(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v))' \
        "$T/hz" "$1"
}
# wait_health EXPR: until EXPR is true (at most 30 s).
wait_health() {
    local i
    for i in $(seq 150); do
        [ "$(health "$1")" = true ] && return 0
        sleep 0.2
    done
    return 1
}
# long_task: a task that runs until it is cancelled; its id in $TID.
long_task() {
    CAPS=$TASKS_CAP mpost tools/call '"name":"run_my_script","arguments":{"code":"import time\ntime.sleep(300)"}' \
        -H "Mcp-Name: run_my_script"
    TID=$(jb 'r["result"]["taskId"]')
}

is "$(health 'h["streams"]["process"]')" running "/healthz: the stream process runs"

# --- 1,000 listens on one long task, three workers
long_task
coproc HOGP { exec "$PYTHON3" "$HOG" --port "$PORT" --task "$TID" --n $HOGS; }
read -r -t 180 line <&"${HOGP[0]}"
is "$(printf '%s' "$line" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["ok"])')" $HOGS \
    "$HOGS subscriptions/listen streams are open and acknowledged"
is "$(health 'h["status"], h["streams"]["listens"], h["workers"]["busy"]')" "[\"ok\", $HOGS, 1]" \
    "/healthz answers meanwhile: $HOGS listens open, no worker held but the one answering"
init 2025-11-25
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(6 * 7)"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25" --max-time 60
is "$(jb 'r["result"]["structuredContent"]["logs"]')" "42" "an MCP tools/call answers meanwhile"
STATUS=$(curl -sS --max-time 60 -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"code":"print(\"web\")"}' "$BASE/api/run")
is "$STATUS/$(jb 'r["logs"]')" "200/web" "/api/run answers meanwhile"
CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$TID"'"' -H "Mcp-Name: $TID"
wait_health 'h["streams"]["open"] == 0'
ok $? "the task's end ends every listen (the stream process writes each one's end)"
exec {HOGP[1]}>&-
read -r -t 60 line <&"${HOGP[0]}"
is "$(printf '%s' "$line" | "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin); print(r["closed"], r["ended"])')" \
    "$HOGS $HOGS" "each got the subscription's result, then its response ended"
wait "${HOGP_PID:-}" 2>/dev/null

# --- a client that does not read its tools/call stream
cat >"$T/slow.py" <<'PY'
import json, socket, sys
port, sid, rev, kb, sleep = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
code = f"import time\nline = 'x' * 1000\nfor i in range({kb}):\n    print(line)\ntime.sleep({sleep})\n"
if rev == "2026-07-28":
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "run_code", "arguments": {"code": code},
            "_meta": {"io.modelcontextprotocol/protocolVersion": rev, "io.modelcontextprotocol/clientCapabilities": {},
                      "io.modelcontextprotocol/logLevel": "info"}}}
    extra = "Mcp-Method: tools/call\r\nMcp-Name: run_code\r\n"
else:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "run_code", "arguments": {"code": code}}}
    extra = f"Mcp-Session-Id: {sid}\r\n"
body = json.dumps(body)
req = (f"POST /mcp HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
       f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {rev}\r\n{extra}"
       f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a client that reads slowly, or not at all
s.connect(("127.0.0.1", port))
s.sendall(req)
print("sent", flush=True)
sys.stdin.readline()  # reads only when told
data = b""
s.settimeout(30)
try:
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        data += d
except OSError:
    pass
def answer(line):
    try:
        m = json.loads(line[5:])
    except ValueError:
        return False
    return m.get("id") == 7 and ("result" in m or "error" in m)
complete = any(answer(l) for l in data.split(b"\n") if l.startswith(b"data:"))
print(json.dumps({"bytes": len(data), "complete": complete}), flush=True)
PY
# slow_start REV KB SLEEP: a call printing KB lines of 1000 bytes, then
# sleeping SLEEP s, from a client that reads nothing; its run in $RUN.
slow_start() {
    coproc SLOWP { exec "$PYTHON3" "$T/slow.py" "$PORT" "${SID:-}" "$@"; }
    read -r -t 30 _ <&"${SLOWP[0]}"
}
# newest_run: the run directory made last.
newest_run() { ls -t "$T/state/runs" | head -1; }
slow_end() {
    echo go >&"${SLOWP[1]}"
    read -r -t 60 line <&"${SLOWP[0]}"
    exec {SLOWP[1]}>&-
    wait "${SLOWP_PID:-}" 2>/dev/null
}

cuts=$(health 'h["streams"]["cut"]')
slow_start 2025-11-25 2000 0
wait_for sh -c 'test -e "$1/runs/$(ls -t "$1/runs" | head -1)/result.json"' - "$T/state"
wait_health 'h["workers"]["busy"] == 1 and h["streams"]["open"] == 1 and h["streams"]["buffered_bytes"] > 0'
ok $? "its run is over: no worker is held (the stream process holds what the client has not taken)"
wait_health "h[\"streams\"][\"open\"] == 0 and h[\"streams\"][\"cut\"] == $cuts + 1"
ok $? "the stream is cut after stream_stall"
grep -q "stream closed: the client took nothing for stream_stall" "$T/serve.log"
ok $? "and the server log says why"
slow_end
is "$(printf '%s' "$line" | "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin); print(r["bytes"] > 0, r["complete"])')" \
    "True False" "the client gets what was sent before the cut, and no result"

slow_start 2025-11-25 20000 0
wait_for grep -q "stream closed: more than stream_buffer_bytes wait for the client" "$T/serve.log"
ok $? "a client with more than stream_buffer_bytes waiting is cut at once"
run=$(newest_run)
wait_for grep -q '"status":"ok"' "$T/state/runs/$run/result.json"
ok $? "a legacy call's run goes on without its client, and its result is kept"
slow_end

SID="" slow_start 2026-07-28 20000 60
wait_for sh -c '[ "$(grep -c "more than stream_buffer_bytes" "$1")" -ge 2 ]' - "$T/serve.log"
run=$(newest_run)
wait_for grep -q '"status":"cancelled"' "$T/state/runs/$run/result.json"
ok $? "a 2026-07-28 call whose stream is cut is cancelled (its stream was the call's)"
slow_end

# --- the stream process killed with SIGKILL
long_task
coproc HOG2 { exec "$PYTHON3" "$HOG" --port "$PORT" --task "$TID" --n 5; }
read -r -t 60 line <&"${HOG2[0]}"
like "$line" '"ok": 5' "five listens on another long task"
inode=$(awk -v p="$T/state/.streams/sock" '$NF == p { print $7 }' /proc/net/unix | head -1)
spid=""
for p in $(pgrep -x rms-streams); do
    ls -l "/proc/$p/fd" 2>/dev/null | grep -q "socket:\[$inode\]" && spid=$p
done
[ -n "$spid" ] && kill -KILL "$spid"
ok $? "the stream process ($spid, rms-streams in ps) is killed with SIGKILL"
wait_health 'h["streams"]["process"] == "running" and h["streams"]["restarts"] == 1'
ok $? "the server starts another at once (/healthz: running, 1 restart)"
exec {HOG2[1]}>&-
read -r -t 60 line <&"${HOG2[0]}"
like "$line" '"closed": 5' "the killed one's streams end for their clients"
wait "${HOG2_PID:-}" 2>/dev/null
coproc HOG3 { exec "$PYTHON3" "$HOG" --port "$PORT" --task "$TID" --n 5; }
read -r -t 60 line <&"${HOG3[0]}"
like "$line" '"ok": 5' "new streams work"
CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$TID"'"' -H "Mcp-Name: $TID"
wait_health 'h["streams"]["open"] == 0'
exec {HOG3[1]}>&-
read -r -t 60 line <&"${HOG3[0]}"
like "$line" '"closed": 5, "ended": 5' "and end with their task"
post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(7)"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25" --max-time 60
is "$(jb 'r["result"]["structuredContent"]["logs"]')" "7" "a streamed call after the restart"
! grep -qi "alert\|crit\|emerg" "$PREFIX/error.log"
ok $? "nginx logged no critical error"
done_testing
