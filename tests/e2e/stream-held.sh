#!/bin/bash
# Streams held by the process that took them (no stream process: a CGI
# program under fcgiwrap, and FastCGI on stdin under spawn-fcgi, one
# process for every request), through nginx: a tools/call whose client
# reads nothing is given up once it has taken nothing for stream_stall, as
# the stream process does in serve; a legacy call's run goes on to its
# result, a 2026-07-28 call's is cancelled (its stream was the call's); and
# the process is free for the next call.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# wait_long CMD...: until CMD succeeds, at most 90 s (a 20 MB run, a stall).
wait_long() { WAIT_S=90 wait_for "$@"; }
# result_is STATUS: the newest run's result.json says STATUS.
result_is() { grep -q "\"status\":\"$1\"" "$T/state/runs/$(newest_run)/result.json"; }
# stalled N: the server's log says it gave up N streams for stream_stall
# (the web server's own send_timeout, 60 s, would end them too, later; a
# CGI program's log comes through fcgiwrap, which may pass it on later).
stalled() { [ "$(grep -c "stream closed: the client took nothing for stream_stall" "$LOG")" = "$1" ]; }

for mode in cgi stdin; do
    STACK_CONF='warm = off\ntimeout = 5m\nstream_stall = 3s\nlog_bytes = 64M'
    stack_start "$mode" || { ok 1 "$mode: the server starts"; continue; }
    . "$top_srcdir/tests/lib/streams.sh"
    LOG=$T/serve.log
    [ "$mode" = cgi ] && LOG=$T/fcgiwrap.log
    init 2025-11-25
    slow_start 2025-11-25 20000 0
    wait_long result_is ok
    ok $? "$mode: a legacy call whose client reads nothing: its run goes on to its result"
    slow_end
    wait_long stalled 1
    ok $? "$mode: its stream was given up after stream_stall (the log says so)"
    is "$(printf '%s' "$line" | "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin); print(r["bytes"] > 0, r["complete"])')" \
        "True False" "$mode: the client gets what was sent before, and no answer"
    SID="" slow_start 2026-07-28 20000 60
    wait_long result_is cancelled
    ok $? "$mode: a 2026-07-28 call whose client reads nothing is cancelled"
    slow_end
    wait_long stalled 2
    ok $? "$mode: after stream_stall"
    post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(6 * 7)"}}}' \
        -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25" --max-time 60
    is "$(jb 'r["result"]["structuredContent"]["logs"]')" "42" "$mode: the next call is answered"
    stack_stop
done
done_testing
