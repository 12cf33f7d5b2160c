#!/bin/bash
# A request-memory flood: ten /api/run bodies of 1.9 MB at once (each under
# request_bytes = 2M) against request_memory = 4M. Two fit and run; the
# other eight wait request_memory_wait (2 s) for room, get none (the two
# run for 4 s) and are answered 503 with Retry-After; an MCP call with a
# big body meanwhile too. The bodies in flight (/healthz) never pass the
# budget, two workers hold a body in memory, not ten, small
# requests are served throughout, and every place is given back after.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_WORKERS=14
STACK_CONF='request_bytes = 2M\nrequest_memory = 4M\nrequest_memory_wait = 2s\nretry_after = 3s\nmax_concurrent_runs = 10\nmax_queued_runs = 10\nqueue_wait = 60s'
STACK_MAX_BODY=2m
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
"$PYTHON3" - "$BASE" "$SERVE_PID" >"$T/verdicts" 2>"$T/py.err" <<'PY'
import http.client, json, os, sys, threading, time, urllib.parse, urllib.request
base, serve = sys.argv[1], int(sys.argv[2])
u = urllib.parse.urlparse(base)
N = 10
BIG = "x" * (1900 << 10)
CODE = "import sys, time\nd = sys.stdin.read()\ntime.sleep(4)\nprint(len(d))\n"

def rss_workers(each):
    for pid in os.listdir("/proc"):
        try:
            st = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            if int(st[1]) == serve:
                r = int(open(f"/proc/{pid}/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
                each[pid] = max(each.get(pid, 0), r)
        except (OSError, ValueError, IndexError):
            pass

def post(path, body, headers):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **headers})
    r = c.getresponse()
    return r.status, r.getheader("Retry-After"), r.read().decode()

peak = {"mem": 0, "max": 0, "healthz": 0}
stop = threading.Event()
def watch():
    while not stop.is_set():
        try:
            h = json.loads(urllib.request.urlopen(base + "/healthz", timeout=10).read())["requests"]
            peak["mem"] = max(peak["mem"], h["memory_bytes"])
            peak["max"] = h["memory_max"]
            peak["healthz"] += 1
        except Exception:
            pass
        rss_workers(EACH)
        time.sleep(0.05)

BASE_EACH = {}
rss_workers(BASE_EACH)
EACH = {}
w = threading.Thread(target=watch)
w.start()
out = [None] * N
go = threading.Barrier(N)
def one(i):
    go.wait()
    out[i] = post("/api/run", {"code": CODE, "input": BIG}, {"Accept": "application/json"})
ts = [threading.Thread(target=one, args=(i,)) for i in range(N)]
for t in ts:
    t.start()
time.sleep(0.8)
# Meanwhile: an MCP call with a big body, and a small /api/run.
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
mcp_big = post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "run_my_script", "arguments": {"code": "print(1)", "user_input": BIG}, "_meta": META}},
    {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/call", "Mcp-Name": "run_my_script"})
small = post("/api/run", {"code": "print('small')"}, {"Accept": "application/json"})
for t in ts:
    t.join()
stop.set()
w.join()
ok = sum(1 for st, ra, b in out if st == 200 and json.loads(b)["logs"] == f"{len(BIG)}\n")
busy = sum(1 for st, ra, b in out if st == 503 and ra == "3" and "request_memory" in b)
print("OK", ok)
print("BUSY", busy)
print("OTHER", json.dumps([(st, b[:200]) for st, ra, b in out if st not in (200, 503)]))
print("MCP", mcp_big[0], json.loads(mcp_big[2])["error"]["code"] if mcp_big[0] == 503 else mcp_big[2][:200])
print("SMALL", small[0], json.loads(small[2]).get("logs", "").strip())
print("PEAK", peak["mem"], peak["max"], int(peak["mem"] <= peak["max"]))
print("HEALTHZ", peak["healthz"])
# A worker that read a body of 1.9 MB grew by most of that more than one
# that only answered, which grew by the pages a first request touches
# (about 1.6 MB of the program's own): the median worker's growth.
grown = {p: EACH[p] - BASE_EACH.get(p, 0) for p in EACH}
typical = sorted(grown.values())[len(grown) // 2] if grown else 0
print("HELD", sum(1 for g in grown.values() if g >= typical + len(BIG) * 3 // 4))
print("EACH", json.dumps({p: g >> 10 for p, g in grown.items()}), file=sys.stderr)
print("AFTER", json.loads(urllib.request.urlopen(base + "/healthz", timeout=10).read())["requests"]["memory_bytes"])
PY
ok $? "the flood ran (see py.err otherwise)"
[ -s "$T/py.err" ] && sed 's/^/# /' "$T/py.err"
v() { grep "^$1 " "$T/verdicts" | cut -d' ' -f2-; }
is "$(v OK)" 2 "two bodies of 1.9 MB fit in request_memory = 4M: they run, each with its whole input"
is "$(v BUSY)" 8 "the other eight waited for room, found none: 503 with Retry-After, naming request_memory"
is "$(v OTHER)" "[]" "no other answer"
is "$(v MCP)" "503 -32000" "an MCP call with a big body meanwhile: 503 with a JSON-RPC error"
is "$(v SMALL)" "200 small" "a small request meanwhile is served (small bodies take no room)"
set -- $(v PEAK)
is "$3" 1 "the bodies in flight never passed the budget (peak $1 of $2 bytes)"
ok "$([ "$(v HEALTHZ)" -gt 5 ]; echo $?)" "/healthz answered throughout ($(v HEALTHZ) times)"
if ldd "$RUNMYSCRIPT" 2>/dev/null | grep -q libasan; then
    skip "under ASan a worker's memory is the sanitizer's (its quarantine, its shadow): the bodies held are not told apart"
else
    is "$(v HELD)" 2 "two workers held a body in memory, not ten"
fi
is "$(v AFTER)" 0 "every place is given back"
ls "$T/state/.mem" | grep -q . && ok 1 "no reservation file is left" || ok 0 "no reservation file is left"
done_testing
