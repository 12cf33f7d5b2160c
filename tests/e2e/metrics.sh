#!/bin/bash
# GET /metrics through a real nginx in front of serve, read by a real
# Prometheus (Debian's prometheus package): promtool checks the exposition,
# and a Prometheus on loopback (its storage in the test's directory, stopped
# by pid) scrapes it; a query then gives the number of runs just made.
# Also: metrics_allow (a client outside it gets 403), the counts shared by
# every worker (the runs land on several), and log_format = json's line
# per request.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"

PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
PROMTOOL=${PROMTOOL:-/usr/bin/promtool}

STACK_CONF="log_format = json" stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

# --- the exposition, before any run
STATUS=$(curl -sS -o "$T/m0" -D "$T/h" -w '%{http_code}' "$BASE/metrics")
is "$STATUS" 200 "/metrics: 200 from loopback"
like "$(header Content-Type)" "text/plain; version=0.0.4" "the text exposition's content type"
like "$(cat "$T/m0")" "# TYPE runmyscript_runs_total counter" "runs_total is a counter"
like "$(cat "$T/m0")" 'runmyscript_info{version="' "the server's info"
like "$(cat "$T/m0")" "runmyscript_workers 4" "serve's workers"

# --- runs: three through /api/run (one fails), two through MCP
for code in 'print(1)' 'print(2)' 'raise SystemExit(3)'; do
    curl -sS -o /dev/null -X POST -H 'Content-Type: application/json' \
        -d "{\"code\":\"$code\"}" "$BASE/api/run"
done
init 2025-11-25
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID")
for i in 1 2; do
    post '{"jsonrpc":"2.0","id":'$((10 + i))',"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print('$i')"}}}' "${H[@]}"
done
is "$(jb 'r["result"]["structuredContent"]["status"]')" ok "an MCP run"

curl -sS -o "$T/m1" "$BASE/metrics"
sum() { # sum PATTERN: the sum of the samples whose line matches PATTERN
    grep -E "^$1" "$T/m1" | awk '{ s += $NF } END { print s + 0 }'
}
is "$(sum 'runmyscript_runs_total\{door="web"')" 3 "three runs through the web door, from whichever workers"
is "$(sum 'runmyscript_runs_total\{door="web",status="error"')" 1 "one of them failed"
is "$(sum 'runmyscript_runs_total\{door="mcp"')" 2 "two through MCP"
is "$(sum 'runmyscript_script_seconds_count')" 5 "the script-time histogram saw five"
is "$(sum 'runmyscript_queue_wait_seconds_count')" 5 "so did the queue-wait one"
is "$(sum 'runmyscript_requests_total\{route="/api/run",code="200"')" 3 "three requests of /api/run, 200"
ok "$([ "$(sum 'runmyscript_requests_total\{route="/mcp"')" -ge 4 ] && echo 0 || echo 1)" "the MCP requests"

# --- promtool
if [ -x "$PROMTOOL" ]; then
    OUT=$("$PROMTOOL" check metrics <"$T/m1" 2>&1)
    ok $? "promtool check metrics: the exposition is valid"
    is "$OUT" "" "and promtool has nothing to say of it"
else
    skip "promtool is not installed (the prometheus package; ./quickstart test installs it)"
fi

# --- metrics_allow: a client that is not in it (the peer nginx reports
# is what counts: nginx passes REMOTE_ADDR; here a request from another
# loopback address that the key leaves out)
stack_stop
STACK_CONF="metrics_allow = 127.0.0.2\nlog_format = json" stack_start serve ||
    { ok 1 "the server starts again"; done_testing; exit 1; }
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' "$BASE/metrics")
is "$STATUS" 403 "a client outside metrics_allow: 403"
like "$(cat "$T/b")" "metrics_allow" "which names the key"

# --- log_format = json: one line per request, with its run id
curl -sS -o "$T/b" -X POST -H 'Content-Type: application/json' -d '{"code":"print(7)"}' "$BASE/api/run"
RUN=$(jb 'r["run_id"]')
wait_for grep -q "\"run_id\":\"$RUN\"" "$T/serve.log"
ok $? "the request's line names its run"
LINE=$(grep "\"run_id\":\"$RUN\"" "$T/serve.log" | head -1)
is "$("$PYTHON3" -c 'import json, sys; o = json.loads(sys.argv[1]); print(o["method"], o["route"], o["status"], o["client"], type(o["duration_ms"]).__name__)' "$LINE")" \
    "POST /api/run 200 127.0.0.1 int" "method, route, status, client and duration"
BAD=$(grep -v '^{' "$T/serve.log" | head -3)
is "$BAD" "" "every line of the log is a JSON object"
"$PYTHON3" -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/serve.log"
ok $? "and each one parses"

# --- a real Prometheus scrapes it (a new state directory: the counts
# start from nothing)
stack_stop
rm -rf "$T/state"
stack_start serve || { ok 1 "the server starts a third time"; done_testing; exit 1; }
if [ ! -x "$PROMETHEUS" ]; then
    skip "prometheus is not installed (the prometheus package; ./quickstart test installs it)"
    done_testing
    exit 0
fi
for i in 1 2 3 4; do
    curl -sS -o /dev/null -X POST -H 'Content-Type: application/json' -d "{\"code\":\"print($i)\"}" "$BASE/api/run"
done
PPORT=$(free_port)
mkdir -p "$T/prom"
cat >"$T/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: runmyscript
    metrics_path: /metrics
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
"$PROMETHEUS" --config.file="$T/prom/prometheus.yml" --storage.tsdb.path="$T/prom/data" \
    --web.listen-address="127.0.0.1:$PPORT" >"$T/prom/log" 2>&1 &
PROM_PID=$!
STACK_PIDS="$STACK_PIDS $PROM_PID" # stopped by pid with the rest
query() {
    curl -sS --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
        "$PYTHON3" -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
WAIT_S=60 wait_for sh -c "[ \"\$(curl -sS --get 'http://127.0.0.1:$PPORT/api/v1/query' --data-urlencode 'query=up{job=\"runmyscript\"}' | grep -o '\"1\"')\" ]"
ok $? "Prometheus scrapes the server (up is 1)"
[ $? = 0 ] || sed 's/^/# /' "$T/prom/log" | tail -20
WAIT_S=30 wait_for sh -c "[ \"\$(curl -sS --get 'http://127.0.0.1:$PPORT/api/v1/query' --data-urlencode 'query=sum(runmyscript_runs_total)' | grep -o '\"4\"')\" ]"
is "$(query 'sum(runmyscript_runs_total)')" 4 "the query gives the four runs just made"
is "$(query 'runmyscript_run_slots_busy')" 0 "no run slot busy now"
stack_stop
done_testing
