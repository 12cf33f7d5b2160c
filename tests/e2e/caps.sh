#!/bin/bash
# The counted caps hold under a race: against a server with a worker for
# every client, 100 clients let go at once each try to make one more of a
# thing that is capped at 20 (max_sessions, the workspaces of 2026-07-28
# under the same key, max_tasks); exactly 20 are made, the other 80 get
# the cap's own answer (503 for initialize, a tool error naming the key),
# and the state directory holds exactly 20. (The queued runs' cap, the
# queue places, is raced by tests/unit/test-admit.)
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_WORKERS=104
STACK_CONF='max_sessions = 20\nmax_tasks = 20\ntask_after = 0\nsession_ttl = 1h\ntask_ttl = 1h\nqueue_wait = 120s'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

# race KIND: 100 clients at once; prints "made refused other" and the
# answers that were neither in $T/other.KIND.
race() {
    "$PYTHON3" - "$BASE" "$1" 100 2>"$T/py.$1.err" <<'PY'
import http.client, json, sys, threading, urllib.parse
base, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
u = urllib.parse.urlparse(base)
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}

def body(i):
    if kind == "sessions":
        return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "caps", "version": "1"}}}, {}
    meta = dict(META)
    if kind == "tasks":
        meta["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    tool = "run_my_script" if kind == "tasks" else "run_code"  # run_my_script makes no workspace
    return ({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": tool, "arguments": {"code": f"print('caps-{i}')"}, "_meta": meta}},
        {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool})

conns = [http.client.HTTPConnection(u.hostname, u.port, timeout=300) for _ in range(n)]
for c in conns:
    c.connect()
go = threading.Barrier(n)
out = [None] * n
def one(i):
    b, extra = body(i)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **extra}
    try:
        go.wait()
        conns[i].request("POST", "/mcp", json.dumps(b), h)
        r = conns[i].getresponse()
        raw = r.read().decode()
        msgs = [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:")] \
            if r.getheader("Content-Type", "").startswith("text/event-stream") else [json.loads(raw)]
        out[i] = (r.status, r.getheader("Mcp-Session-Id"), msgs[-1])
    except Exception as e:
        out[i] = (0, None, {"exception": repr(e)})
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
made = refused = 0
other = []
for st, sid, m in out:
    res = m.get("result") or {}
    text = "".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")
    if kind == "sessions":
        if st == 200 and sid and "protocolVersion" in res:
            made += 1
        elif st == 503 and "max_sessions" in m.get("error", {}).get("message", ""):
            refused += 1
        else:
            other.append((st, m))
    elif kind == "workspaces":
        if res.get("structuredContent", {}).get("status") == "ok" and res["structuredContent"].get("workspace"):
            made += 1
        elif res.get("isError") and "max_sessions" in text:
            refused += 1
        else:
            other.append((st, m))
    else:
        if res.get("resultType") == "task" or (res.get("structuredContent", {}).get("status") == "ok"):
            made += 1
        elif res.get("isError") and "max_tasks" in text:
            refused += 1
        else:
            other.append((st, m))
print(made, refused, len(other))
for o in other[:3]:
    print("#", json.dumps(o)[:400], file=sys.stderr)
PY
}
count() { find "$T/state/$1" -mindepth 1 -maxdepth 1 -type d -regextype egrep -regex '.*/[0-9a-f]{32}' | wc -l; }

# Five rounds (a race a check-then-create loses now and then is lost in
# one of them): each starts from no session at all.
for round in 1 2 3 4 5; do
    find "$T/state/sessions" -mindepth 1 -maxdepth 1 -type d -regextype egrep -regex '.*/[0-9a-f]{32}' -exec rm -rf {} +
    got=$(race sessions)
    n=$(count sessions)
    [ "$got/$n" = "20 80 0/20" ] || break
done
is "$got" "20 80 0" "sessions: 100 initialize at once against max_sessions = 20, five times: 20 made, 80 refused with 503"
is "$n" 20 "sessions: exactly 20 on disk each time"
[ -s "$T/py.sessions.err" ] && sed 's/^/# /' "$T/py.sessions.err"

got=$(race workspaces)
is "$got" "20 80 0" "workspaces: 100 calls at once that each make one, against max_sessions = 20: 20 run, 80 refused"
is "$(count workspaces)" 20 "workspaces: exactly 20 on disk"
[ -s "$T/py.workspaces.err" ] && sed 's/^/# /' "$T/py.workspaces.err"

got=$(race tasks)
is "$got" "20 80 0" "tasks: 100 calls at once that each become a task, against max_tasks = 20: 20 tasks, 80 refused"
is "$(count tasks)" 20 "tasks: exactly 20 on disk"
[ -s "$T/py.tasks.err" ] && sed 's/^/# /' "$T/py.tasks.err"
done_testing
