#!/bin/bash
# nginx restarted under load (slow: make check-slow). Six clients call
# run_code in a loop (each script prints a token of its own and sleeps a
# little) while nginx is stopped and started again on the same port. Calls
# cut by the restart fail (a connection error, or a stream without a
# result); every answer that does come back is the caller's own; after the
# restart every call works again; runs whose client vanished still finish
# and are recorded; nothing is left behind.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/faults/lib.sh"
STACK_WORKERS=10
STACK_CONF='max_queued_runs = 8'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
NGINX_PID=${STACK_PIDS##* }
PREFIX_TAG=rmsfault-ngx-$$
"$PYTHON3" - "$BASE" "$PREFIX_TAG" "$T/phase" >"$T/verdicts" 2>"$T/py.err" <<'PY' &
import json, os, sys, threading, time, urllib.request
base, tag, phase_file = sys.argv[1:4]
def phase():
    try:
        return open(phase_file).read().strip()
    except OSError:
        return "before"
def post(body, sid=None):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if sid:
        h["Mcp-Session-Id"] = sid
    req = urllib.request.Request(base + "/mcp", json.dumps(body).encode(), h)
    with urllib.request.urlopen(req, timeout=120) as r:
        raw = r.read().decode()
        return r.headers.get("Mcp-Session-Id"), [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:")] or ([json.loads(raw)] if raw.strip().startswith("{") else [])
stats = {"ok": 0, "failed": 0, "mixed": 0, "ok_after": 0, "failed_after": 0}
lock = threading.Lock()
def client(i):
    sid = None
    n = 0
    while True:
        ph = phase()
        if ph == "stop":
            return
        n += 1
        tok = f"{tag}-{i}-{n}"
        try:
            if sid is None:
                sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                               "capabilities": {}, "clientInfo": {"name": f"c{i}", "version": "1"}}})
                post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
            code = f"import time\nprint({tok!r})\ntime.sleep(0.2)\n"
            _, msgs = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run_code", "arguments": {"code": code}}}, sid)
            sc = msgs[-1]["result"]["structuredContent"]
            good = sc["status"] == "ok" and sc["logs"] == tok + "\n"
            with lock:
                stats["ok" if good else "mixed"] += 1
                if good and ph == "after":
                    stats["ok_after"] += 1
        except Exception:
            with lock:
                stats["failed"] += 1
                if ph == "after":
                    stats["failed_after"] += 1
            sid = None
            time.sleep(0.1)
threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(stats))
PY
LOAD=$!
wait_for bash -c "[ \$(ls '$T/state/runs' | wc -l) -ge 12 ]"
ok $? "the load runs (a dozen runs done)"
kill -TERM "$NGINX_PID"
wait "$NGINX_PID" 2>/dev/null
STACK_PIDS=${STACK_PIDS/ $NGINX_PID/}
sleep 1
"$NGINX" -p "$PREFIX" -c "$PREFIX/nginx.conf" -g 'daemon off;' >/dev/null 2>>"$T/nginx.log" &
NGINX_PID=$!
STACK_PIDS="$STACK_PIDS $NGINX_PID"
wait_for curl -sf "$BASE/healthz"
ok $? "nginx is back on the same port"
echo during >"$T/phase"
sleep 2 # calls started before the restart have ended by now: they can take 0.2 s and their queue
echo after >"$T/phase"
n0=$(ls "$T/state/runs" | wc -l)
wait_for bash -c "[ \$(ls '$T/state/runs' | wc -l) -ge $((n0 + 24)) ]"
ok $? "two dozen more runs after the restart"
echo stop >"$T/phase"
wait "$LOAD"
ok $? "the clients ran (see py.err otherwise)"
V=$(cat "$T/verdicts")
diag "outcomes: $V"
is "$("$PYTHON3" -c 'import json,sys; s=json.loads(sys.argv[1]); print(s["mixed"], s["failed_after"], s["ok_after"] >= 24)' "$V")" \
    "0 0 True" "no answer was anyone else's, and after the restart no call failed"
# Every run has its result on disk, also those whose client was cut off.
wait_for bash -c "for d in '$T'/state/runs/*/; do [ -f \"\$d/result.json\" ] || exit 1; done"
ok $? "every run is recorded (result.json), those whose client was cut off too"
after_fault "$PREFIX_TAG"
done_testing
