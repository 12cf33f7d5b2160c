#!/bin/bash
# Ordinary concurrency with the defaults: serve with no admission key set
# (workers, max_concurrent_runs, max_queued_runs and queue_wait as they
# ship) behind nginx, and 48 MCP sessions, each on a kept-alive connection
# of its own, calling run_code at once. Every call gets its own result and
# none is told the server is busy: the calls past the run slots wait in the
# queue. Counts only: how long they waited is bench/load's business.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_WORKERS=0 # the default: as many as the run slots and the queue need
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
N=48
"$PYTHON3" - "$BASE" $N >"$T/verdicts" 2>"$T/py.err" <<'PY'
import http.client, json, sys, threading, time, urllib.parse, urllib.request
base, n = sys.argv[1], int(sys.argv[2])
u = urllib.parse.urlparse(base)

class Client:
    """One MCP session on one kept-alive connection."""
    def __init__(self):
        self.c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        self.sid = None
    def post(self, body):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        self.c.request("POST", "/mcp", json.dumps(body), h)
        r = self.c.getresponse()
        raw = r.read().decode()
        self.sid = self.sid or r.getheader("Mcp-Session-Id")
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            return r.status, [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:")]
        return r.status, [json.loads(raw)] if raw else []

clients = []
for _ in range(n):
    c = Client()
    c.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "queue", "version": "1"}}})
    c.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    clients.append(c)

out = {}
go = threading.Barrier(n)
def call(i):
    tok = f"call-{i}"
    try:
        go.wait()
        st, msgs = clients[i].post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_code", "arguments": {"code": f"import time\ntime.sleep(0.5)\nprint({tok!r})\n"}}})
        out[tok] = (st, msgs[-1].get("result", {}))
    except Exception as e:
        out[tok] = (0, {"error": repr(e)})

peak = {"queued": 0}
stop = threading.Event()
def watch():
    while not stop.is_set():
        try:
            r = json.loads(urllib.request.urlopen(base + "/healthz", timeout=30).read())["runs"]
            peak["queued"] = max(peak["queued"], r["queued"])
            peak["max_queued"] = r["max_queued"]
        except Exception:
            pass
        time.sleep(0.05)

w = threading.Thread(target=watch)
w.start()
threads = [threading.Thread(target=call, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
stop.set()
w.join()

results = busy = own = 0
for tok, (st, res) in out.items():
    sc = res.get("structuredContent") or {}
    text = "".join(b.get("text", "") for b in res.get("content", []) if b.get("type") == "text")
    if st == 200 and "result" not in res:
        results += 1
    if "busy" in text:
        busy += 1
    if sc.get("status") == "ok" and sc.get("logs", "").strip() == tok:
        own += 1
    else:
        print(f"DIAG\t{tok}: {st} {text[:200]!r}")
print(f"RESULTS\t{results}")
print(f"BUSY\t{busy}")
print(f"OWN\t{own}")
print(f"QUEUED\t{peak['queued']}\t{peak.get('max_queued')}")
PY
[ -s "$T/py.err" ] && sed 's/^/# /' "$T/py.err" | head -20
v() { awk -F'\t' -v k="$1" '$1 == k {print $2}' "$T/verdicts"; }
is "$(v RESULTS)" $N "$N concurrent run_code calls with the defaults: $N results"
is "$(v BUSY)" 0 "none of them told the server is busy"
is "$(v OWN)" $N "each with status ok and its own log"
q=$(v QUEUED)
[ -n "$q" ] && [ "$q" -gt 16 ]
ok $? "the queue held more than the old default's 16 at once ($q of $(awk -F'\t' '$1 == "QUEUED" {print $3}' "$T/verdicts"))"
grep '^DIAG' "$T/verdicts" | head -5 | sed 's/^/# /'
done_testing
