#!/bin/bash
# Streams that cost no worker, through nginx, against a server with three
# workers: 1,000 subscriptions/listen streams open at once while /healthz,
# MCP calls and /api/run answer as usual, and all of them end with their
# task; a tools/call whose client does not read frees its worker when its
# run ends and is cut after stream_stall, or at once past
# stream_buffer_bytes (a legacy run goes on to its result, a 2026-07-28 one
# is cancelled: its stream was the call's); the stream process killed with
# SIGKILL is started again and new streams work; after SIGHUP a new one
# takes new streams while the old one carries its own to their end.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
HOGS=1000
# Each stream is a connection: nginx holds two, the test one.
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((HOGS * 3 + 200)) ] ||
    skip_all "the open-files limit is $(ulimit -n): $HOGS streams need $((HOGS * 3 + 200))"
STACK_WORKERS=3
STACK_NGINX_CONNECTIONS=4096
STACK_CONF='warm = off\ntimeout = 30m\ntask_after = 0\nstream_buffer_bytes = 16M\nstream_stall = 10s\nlog_bytes = 64M\nmax_streams_per_client = 2000'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
. "$top_srcdir/tests/lib/streams.sh"

is "$(health 'h["streams"]["process"]')" running "/healthz: the stream process runs"

# --- 1,000 listens on one long task, three workers
long_task
hog_start hogs $HOGS
is "$(hog_count ok)" $HOGS "$HOGS subscriptions/listen streams are open and acknowledged"
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
hog_stop hogs
is "$(hog_count closed) $(hog_count ended)" "$HOGS $HOGS" "each got the subscription's result, then its response ended"

# --- a client that does not read its tools/call stream
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
# stream_procs: the rms-streams processes holding the stream socket.
stream_procs() {
    local inode p
    inode=$(awk -v p="$T/state/.streams/sock" '$NF == p && $4 == "00010000" { print $7 }' /proc/net/unix | head -1)
    for p in $(pgrep -x rms-streams); do
        ls -l "/proc/$p/fd" 2>/dev/null | grep -q "socket:\[$inode\]" && echo "$p"
    done
}
long_task
hog_start killed 5
is "$(hog_count ok)" 5 "five listens on another long task"
spid=$(stream_procs | head -1)
[ -n "$spid" ] && kill -KILL "$spid"
ok $? "the stream process ($spid, rms-streams in ps) is killed with SIGKILL"
wait_health 'h["streams"]["process"] == "running" and h["streams"]["restarts"] == 1 and h["streams"]["open"] == 0'
ok $? "the server starts another at once (/healthz: running, 1 restart, the dead one's streams gone)"
hog_stop killed
is "$(hog_count closed)" 5 "the killed one's streams end for their clients"
hog_start after 5
is "$(hog_count ok)" 5 "new streams work"
CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$TID"'"' -H "Mcp-Name: $TID"
wait_health 'h["streams"]["open"] == 0'
hog_stop after
is "$(hog_count closed) $(hog_count ended)" "5 5" "and end with their task"

# --- SIGHUP: a new stream process takes new streams; the old one carries its own to their end
# (warm = off above: a run forked from the warm pool's zygote does not
# outlive the pool, which SIGHUP replaces, and the task must go on.)
long_task
hog_start before 3
is "$(hog_count ok)" 3 "three listens before SIGHUP"
old=$(stream_procs)
kill -HUP "$SERVE_PID"
new=""
for i in $(seq 100); do
    new=$(stream_procs | grep -vx "$old")
    [ -n "$new" ] && break
    sleep 0.2
done
ok "$([ -n "$new" ] && kill -0 "$old" 2>/dev/null; echo $?)" \
    "SIGHUP: a new stream process ($new) beside the old one ($old), which still carries its streams"
is "$(health 'h["streams"]["open"]')" 3 "and they are open"
hog_start hup 2
is "$(hog_count ok)" 2 "new listens go to the new one"
CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$TID"'"' -H "Mcp-Name: $TID"
wait_health 'h["streams"]["open"] == 0'
hog_stop before
is "$(hog_count closed) $(hog_count ended)" "3 3" "the old one's streams end with their task"
hog_stop hup
is "$(hog_count closed) $(hog_count ended)" "2 2" "and so do the new one's"
wait_for sh -c '! kill -0 "$1" 2>/dev/null || grep -q "^State:.*Z" "/proc/$1/status"' - "$old"
ok $? "the old stream process goes once it carries none"

post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(7)"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25" --max-time 60
is "$(jb 'r["result"]["structuredContent"]["logs"]')" "7" "a streamed call after the restart"
! grep -qi "alert\|crit\|emerg" "$PREFIX/error.log"
ok $? "nginx logged no critical error"
done_testing
