#!/bin/bash
# max_streams and max_streams_per_client under a burst, through nginx: in
# serve (the stream process admits the listens) and as a CGI program under
# fcgiwrap (each listen holds its process and a slot file): a burst of
# listens from one client (a peer address of its own: 127.0.0.X) ends at
# exactly its cap, the rest 429 with Retry-After; from another, at exactly
# max_streams, the rest 503 with Retry-After; calls still answer; the caps
# come free when the streams end.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
"$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0))' 2>/dev/null ||
    skip_all "no loopback address 127.0.0.2 to be another client from"

# burst N SOURCE: N listens at once from SOURCE (a hog of its own); the
# counts in $LINE. release SOURCE ends it.
burst() { hog_start "${2//./_}" "$1" "$2"; }
release() { hog_stop "${1//./_}"; }
# counts: ok/429/503/other and the Retry-After values of $LINE.
counts() {
    printf '%s' "$LINE" | "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin); print("%d/%d/%d/%d %s" % (r["ok"], r["429"], r["503"], r["other"], ",".join(r["retry_after"])))'
}
a_call() {
    init 2025-11-25
    post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(6 * 7)"}}}' \
        -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25" --max-time 60
    is "$(jb 'r["result"]["structuredContent"]["logs"]')" "42" "$1: a call answers beside them"
}

# --- serve: the stream process counts
STACK_WORKERS=3
STACK_CONF='timeout = 30m\ntask_after = 0\nmax_streams = 30\nmax_streams_per_client = 20\nretry_after = 3s'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
. "$top_srcdir/tests/lib/streams.sh"
long_task
burst 50 127.0.0.2
is "$(counts)" "20/30/0/0 3" "serve: a burst of 50 listens from one client: exactly 20 open, 30 get 429 with Retry-After: 3"
burst 50 127.0.0.3
is "$(counts)" "10/0/40/0 3" "serve: 50 more from another client: exactly 10 more (30 in all), 40 get 503 with Retry-After: 3"
is "$(health 'h["streams"]["listens"], h["streams"]["max"], h["streams"]["max_per_client"]')" "[30, 30, 20]" \
    "serve: /healthz: 30 listens open, the caps"
a_call serve
CAPS=$TASKS_CAP mpost subscriptions/listen '"notifications":{"taskIds":["'"$TID"'"]}' --max-time 10
is "$STATUS/$(jb 'r["error"]["code"]')" "503/-32000" "serve: one more, one at a time: 503 with a JSON-RPC error"
like "$(jb 'r["error"]["message"]')" "max_streams" "serve: which names the key"
release 127.0.0.2
release 127.0.0.3
wait_health 'h["streams"]["listens"] == 0'
ok $? "serve: the streams of hogs that went are gone"
burst 25 127.0.0.4
is "$(counts)" "20/5/0/0 3" "serve: the caps came free: 20 of 25 open from a new client"
release 127.0.0.4
CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$TID"'"' -H "Mcp-Name: $TID"
task_poll "$TID"
stack_stop

# --- CGI: every listen holds its process and a slot
STACK_CONF='timeout = 30m\ntask_after = 0\nmax_streams = 3\nmax_streams_per_client = 2\nretry_after = 3s'
stack_start cgi || { ok 1 "fcgiwrap and nginx start"; done_testing; exit 1; }
. "$top_srcdir/tests/lib/streams.sh"
long_task
burst 12 127.0.0.2
is "$(counts)" "2/10/0/0 3" "cgi: a burst of 12 listens from one client: exactly 2 open, 10 get 429 with Retry-After: 3"
burst 12 127.0.0.3
is "$(counts)" "1/0/11/0 3" "cgi: 12 more from another client: exactly 1 more (3 in all), 11 get 503"
is "$(health 'h["mode"], h["streams"]["process"], h["streams"]["held"]')" '["cgi", "none", 3]' \
    "cgi: /healthz: no stream process, 3 listens held"
a_call cgi
release 127.0.0.2
release 127.0.0.3
wait_health 'h["streams"]["held"] == 0'
ok $? "cgi: the slots come free when the clients go"
ls "$T/state/.streams/" >"$T/slots" 2>/dev/null
is "$(grep -c '^all\.\|^c-' "$T/slots")" 0 "cgi: and no slot file is left"
burst 2 127.0.0.4
is "$(counts)" "2/0/0/0 " "cgi: 2 open from a new client"
release 127.0.0.4
CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$TID"'"' -H "Mcp-Name: $TID"
task_poll "$TID"
done_testing
