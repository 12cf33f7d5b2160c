#!/bin/bash
# The other two ways to run the same program: CGI (nginx + fcgiwrap start
# runmyscript once per request) and FastCGI on stdin (spawn-fcgi hands it
# the socket). The MCP and /api/run cases again: sessions live on disk, so
# one-shot processes serve them just the same.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"

if [ -x "${FCGIWRAP:-/usr/sbin/fcgiwrap}" ]; then
    STACK_CONF="task_after = 1s" stack_start cgi || { ok 1 "the CGI server starts"; done_testing; exit 1; }
    mcp_cases cgi
    modern_cases cgi

    # Cancel: the call's CGI process and the cancel's are two processes.
    init 2025-11-25
    H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID")
    post '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import time\ntime.sleep(60)"},"_meta":{"progressToken":7}}}' "${H[@]}" &
    CURL=$!
    # fcgiwrap holds the stream in its buffer: wait until the call has its
    # run on disk (calls/.KEY.RUNID names it, and it is in the session's
    # runs/) rather than for a message.
    wait_for sh -c 'for c in "$1"/calls/.[0-9a-f]*.?*; do [ -e "$1/runs/${c##*.}" ] && exit 0; done; exit 1' \
        - "$T/state/sessions/$SID"
    ok $? "cgi: the call is running"
    STATUS=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' "${H[@]}" \
        --data-binary '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}' "$BASE/mcp")
    is "$STATUS" 202 "cgi: notifications/cancelled from another process"
    wait $CURL
    is "$(jb '[m for m in msgs if m.get("id") == 7]')" "[]" "cgi: no result for the cancelled call"
    stack_stop
else
    skip "fcgiwrap is not installed (./quickstart test installs it): no CGI cases"
fi

if command -v spawn-fcgi >/dev/null 2>&1; then
    stack_start stdin || { ok 1 "the FastCGI-on-stdin server starts"; done_testing; exit 1; }
    mcp_cases fastcgi
    stack_stop
else
    skip "spawn-fcgi is not installed (./quickstart test installs it): no FastCGI-on-stdin cases"
fi

# serve on a TCP socket instead of a Unix one.
stack_start tcp || { ok 1 "serve --listen 127.0.0.1:PORT starts"; done_testing; exit 1; }
init 2025-11-25
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(6 * 7)"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
is "$(jb 'r["result"]["structuredContent"]["logs"]')" "42" "serve --listen 127.0.0.1:PORT: a run through nginx"
stack_stop

# CGI straight from the shell, no web server: the one-shot mode's own rules.
cgi() { # cgi BODY VAR=VALUE...: one CGI request; the response in $T/cgi.out
    local body=$1
    shift
    printf '%s' "$body" | env -i PATH=/usr/bin:/bin RUNMYSCRIPT_STATE_DIR="$T/state2" GATEWAY_INTERFACE=CGI/1.1 \
        REQUEST_METHOD=POST REQUEST_URI=/mcp CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} \
        HTTP_HOST=localhost "HTTP_ACCEPT=application/json" "$@" "$RUNMYSCRIPT" >"$T/cgi.out" 2>"$T/cgi.err"
}
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}'
cgi "$INIT" RUNMYSCRIPT_MAX_SESSIONS=2
head -1 "$T/cgi.out" | grep -q '^Status: 200 OK'
ok $? "direct CGI: initialize"
cgi "$INIT" RUNMYSCRIPT_MAX_SESSIONS=2
cgi "$INIT" RUNMYSCRIPT_MAX_SESSIONS=2
like "$(head -1 "$T/cgi.out")" "Status: 503" "past max_sessions: 503"
cgi "$INIT" RUNMYSCRIPT_TIMEOUT=nonsense
like "$(head -1 "$T/cgi.out")" "Status: 500" "a bad configuration: an HTTP 500, not a crash"
like "$(cat "$T/cgi.err")" "timeout" "and the reason on stderr (the web server's error log)"
cgi "$INIT" REQUEST_URI=/nowhere
like "$(head -1 "$T/cgi.out")" "Status: 404" "an unknown route: 404"

# A session run in the fallback (as root: a uid of its own, which must reach
# the session's workspace).
cgi "$INIT" RUNMYSCRIPT_ISOLATION=rlimits RUNMYSCRIPT_REQUIRE_ISOLATION=off
SID=$(grep -i '^Mcp-Session-Id:' "$T/cgi.out" | cut -d' ' -f2 | tr -d '\r')
cgi '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"open(\"here.txt\", \"w\").write(\"x\")\nprint(\"fallback\")"}}}' \
    "HTTP_MCP_SESSION_ID=$SID" RUNMYSCRIPT_ISOLATION=rlimits RUNMYSCRIPT_REQUIRE_ISOLATION=off
# The fallback's name says what it had here: check-sandbox predicts it, and
# /healthz says it with the Landlock ABI check-sandbox reports.
CS=$("$RUNMYSCRIPT" check-sandbox --set isolation=rlimits --set require_isolation=off 2>&1)
FB=$(sed -n 's/^runs get: *isolation \([^ ]*\) (the fallback.*/\1/p' <<<"$CS")
ABI=$(sed -n 's/^landlock: *ABI \([0-9]*\)$/\1/p' <<<"$CS")
is "$(sed '1,/^\r$/d' "$T/cgi.out" | "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin)["result"]["structuredContent"]; print(r["status"], r["isolation"], r["logs"].strip())')" \
    "ok $FB fallback" "a session run in the rlimits fallback ($FB)"
cgi "" REQUEST_METHOD=GET REQUEST_URI=/healthz CONTENT_LENGTH=0 RUNMYSCRIPT_ISOLATION=rlimits RUNMYSCRIPT_REQUIRE_ISOLATION=off
is "$(sed '1,/^\r$/d' "$T/cgi.out" | "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin); print(r["isolation"], r["landlock_abi"])')" \
    "$FB ${ABI:-0}" "/healthz names the fallback's isolation and the Landlock ABI"

# Artifacts: the bytes themselves by default in CGI mode (no nginx in front
# of a CGI program, as a rule), X-Accel-Redirect with accel_redirect = on.
cgi "$INIT"
SID=$(grep -i '^Mcp-Session-Id:' "$T/cgi.out" | cut -d' ' -f2 | tr -d '\r')
cgi '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/out.txt\", \"w\").write(\"direct bytes\")"}}}' \
    "HTTP_MCP_SESSION_ID=$SID"
RUN=$(sed '1,/^\r$/d' "$T/cgi.out" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["result"]["structuredContent"]["run_id"])')
cgi '' REQUEST_METHOD=GET "REQUEST_URI=/artifacts/$RUN/out.txt" RUNMYSCRIPT_ACCEL_REDIRECT=on
like "$(cat "$T/cgi.out")" "X-Accel-Redirect: /_runmyscript/runs/$RUN/output/out.txt" "accel_redirect on: X-Accel-Redirect"
is "$(sed '1,/^\r$/d' "$T/cgi.out")" "" "and no body"
cgi '' REQUEST_METHOD=GET "REQUEST_URI=/artifacts/$RUN/out.txt"
is "$(sed '1,/^\r$/d' "$T/cgi.out")" "direct bytes" "accel_redirect auto in CGI mode: the bytes from runmyscript"
like "$(cat "$T/cgi.out")" "Content-Length: 12" "with their length"
! grep -qi "X-Accel-Redirect" "$T/cgi.out"
ok $? "and no X-Accel-Redirect"
cgi '' REQUEST_METHOD=GET "REQUEST_URI=/artifacts/$RUN.zip" RUNMYSCRIPT_ACCEL_REDIRECT=off
sed '1,/^\r$/d' "$T/cgi.out" >"$T/direct.zip"
is "$(unzip -p "$T/direct.zip" out.txt)" "direct bytes" "and the zip"
done_testing
