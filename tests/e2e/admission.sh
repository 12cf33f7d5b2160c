#!/bin/bash
# Admission control through nginx: 2 run slots and 3 queue places. Five
# MCP calls fill them (2 run, 3 wait and say so in a progress notification);
# then ten more calls (MCP and /api/run) are all turned away at once (503
# with Retry-After, an SSE error event, or an MCP tool error that says busy
# and when to retry);
# the five finish with their own logs; nothing is left of the ten on disk.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_WORKERS=16
STACK_CONF='max_concurrent_runs = 2\nmax_queued_runs = 3\nretry_after = 3s\nqueue_wait = 120s'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
"$PYTHON3" - "$BASE" >"$T/verdicts" 2>"$T/py.err" <<'PY'
import json, sys, threading, time, urllib.error, urllib.request
base = sys.argv[1]

def post(path, body, sid=None, sse=True):
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream" if sse else "application/json"}
    if sid:
        h["Mcp-Session-Id"] = sid
    req = urllib.request.Request(base + path, json.dumps(body).encode(), h)
    try:
        r = urllib.request.urlopen(req, timeout=300)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode(), None
    raw = r.read().decode()
    msgs = None
    if r.headers.get("Content-Type", "").startswith("text/event-stream"):
        msgs = [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:")]
    return r.status, dict(r.headers), raw, msgs

def session():
    _, h, _, _ = post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "adm", "version": "1"}}})
    sid = h.get("Mcp-Session-Id")
    post("/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    return sid

def code(token, sleep):
    return f"import time\nprint({token!r})\ntime.sleep({sleep})\nprint('end', {token!r})\n"

def mcp_call(sid, token, sleep):
    st, h, raw, msgs = post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_code", "arguments": {"code": code(token, sleep)}, "_meta": {"progressToken": token}}}, sid)
    res = msgs[-1]["result"]
    prog = [m["params"].get("message", "") for m in msgs if m.get("method") == "notifications/progress"]
    return st, res, prog

def runs():
    return json.loads(urllib.request.urlopen(base + "/healthz", timeout=30).read())["runs"]

out = {}
def holder(i):
    tok = f"hold-{i}"
    try:
        out[tok] = mcp_call(sessions[i], tok, 6)
    except Exception as e:
        out[tok] = repr(e)

sessions = [session() for _ in range(10)]
threads = [threading.Thread(target=holder, args=(i,)) for i in range(5)]
for t in threads:
    t.start()
full = False
for _ in range(600):
    r = runs()
    if r["running"] == 2 and r["queued"] == 3:
        full = True
        break
    time.sleep(0.05)
print(f"FULL\t{full}\t{r}")

busy = {}
def extra(i):
    tok = f"extra-{i}"
    try:
        if i == 9:
            # The page's way: over SSE the stream has begun, so an error event.
            h = {"Content-Type": "application/json", "Accept": "text/event-stream"}
            req = urllib.request.Request(base + "/api/run", json.dumps({"code": code(tok, 0)}).encode(), h)
            r = urllib.request.urlopen(req, timeout=300)
            raw = r.read().decode()
            busy[tok] = ("sse", r.status, raw)
        elif i % 2:
            st, h, raw, _ = post("/api/run", {"code": code(tok, 0)}, sse=False)
            busy[tok] = ("api", st, h.get("Retry-After"), raw)
        else:
            st, res, _ = mcp_call(sessions[5 + i // 2], tok, 0)
            busy[tok] = ("mcp", st, res.get("isError"), res["content"][0]["text"])
    except Exception as e:
        busy[tok] = ("exc", repr(e))
more = [threading.Thread(target=extra, args=(i,)) for i in range(10)]
for t in more:
    t.start()
for t in more:
    t.join()
for t in threads:
    t.join()
for tok, b in sorted(busy.items()):
    if b[0] == "api":
        good = b[1] == 503 and b[2] == "3" and "busy" in b[3] and "try again in 3 s" in b[3]
        print(f"{'PASS' if good else 'FAIL'}\t{tok}: /api/run got 503, Retry-After 3 and says busy ({b[1:3]}, {b[3][:160]!r})")
    elif b[0] == "sse":
        ev = [l for l in b[2].splitlines() if l.startswith(("event:", "data:"))]
        err = [json.loads(ev[k + 1][5:]) for k, l in enumerate(ev) if l == "event: error" and k + 1 < len(ev)]
        good = b[1] == 200 and len(err) == 1 and err[0]["status"] == 503 and err[0]["retry_after"] == 3 \
            and "busy" in err[0]["error"] and "event: result" not in b[2]
        print(f"{'PASS' if good else 'FAIL'}\t{tok}: /api/run over SSE got an error event: 503, retry after 3 s ({err})")
    elif b[0] == "mcp":
        good = b[1] == 200 and b[2] is True and "busy" in b[3] and "try again in 3 s" in b[3]
        print(f"{'PASS' if good else 'FAIL'}\t{tok}: MCP got a tool error that says busy and when to retry ({b[3][:160]!r})")
    else:
        print(f"FAIL\t{tok}: {b}")
queued = 0
for tok, v in sorted(out.items()):
    if isinstance(v, str):
        print(f"FAIL\t{tok}: {v}")
        continue
    st, res, prog = v
    sc = res.get("structuredContent", {})
    good = st == 200 and sc.get("status") == "ok" and sc.get("logs") == f"{tok}\nend {tok}\n"
    queued += any("waiting for one of the 2 run slots" in m for m in prog)
    print(f"{'PASS' if good else 'FAIL'}\t{tok}: ran, and its log is its own ({sc.get('status')}, {sc.get('logs')!r})")
print(f"QUEUED\t{queued}")
print(f"AFTER\t{json.dumps(runs())}")
PY
ok $? "the clients ran (see py.err otherwise)"
n=0
while IFS=$'\t' read -r kind a b; do
    case $kind in
    FULL) is "$a" True "five calls fill 2 run slots and 3 queue places ($b)" ;;
    PASS) ok 0 "$a"; n=$((n + 1)) ;;
    FAIL) ok 1 "$a"; n=$((n + 1)) ;;
    QUEUED) is "$a" 3 "three calls were told they wait for a run slot (progress notification)" ;;
    AFTER) is "$a" '{"running": 0, "queued": 0, "max_running": 2, "max_queued": 3}' "afterwards every slot is free" ;;
    esac
done <"$T/verdicts"
is "$n" 15 "fifteen answers"
is "$(ls "$T/state/runs" | grep -c '^[0-9a-f]\{32\}$')" 5 "only the five runs that ran left a run directory"
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' -H "$ACCEPT_BOTH"
is "$STATUS" 200 "the service still answers"
done_testing
