#!/bin/bash
# Sixteen run_code calls at once across sixteen sessions, over SSE, through
# nginx and eight workers (so half of them queue): every call gets its own
# log, its own artifact and its own zip back, none mixed up.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_WORKERS=8
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
"$PYTHON3" - "$BASE" >"$T/verdicts" 2>"$T/py.err" <<'PY'
import io, json, sys, threading, urllib.request, zipfile
base = sys.argv[1]
N = 16

def post(body, sid=None):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if sid:
        h["Mcp-Session-Id"] = sid
    req = urllib.request.Request(base + "/mcp", json.dumps(body).encode(), h)
    with urllib.request.urlopen(req, timeout=300) as r:
        raw = r.read().decode()
        sid = r.headers.get("Mcp-Session-Id")
        if r.headers.get("Content-Type", "").startswith("text/event-stream"):
            msgs = [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:")]
        else:
            msgs = [json.loads(raw)] if raw else []
    return sid, msgs

results = [None] * N
def worker(i):
    try:
        sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": f"c{i}", "version": "1"}}})
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        token = f"token-{i:02d}-" + "x" * i
        code = ("import os, time\n"
                f"print({token!r})\n"
                "time.sleep(0.2)\n"
                f"open(os.path.join(os.environ['SCRIPT_OUTPUT'], 'same-name.txt'), 'w').write({token!r})\n"
                f"print('done', {i})\n")
        _, msgs = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "run_code", "arguments": {"code": code}, "_meta": {"progressToken": i}}}, sid)
        res = msgs[-1]["result"]
        sc = res["structuredContent"]
        logs = [m["params"]["data"] for m in msgs if m.get("method") == "notifications/message"]
        prog = [m["params"]["progressToken"] for m in msgs if m.get("method") == "notifications/progress"]
        url = [c["uri"] for c in res["content"] if c["type"] == "resource_link" and c["name"] == "same-name.txt"][0]
        body = urllib.request.urlopen(url, timeout=60).read().decode()
        z = zipfile.ZipFile(io.BytesIO(urllib.request.urlopen(sc["zip_url"], timeout=60).read()))
        # The run wrote into the session's workspace: list_dir sees it there.
        _, ls = post({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "list_dir", "arguments": {"dir_path": "output"}}}, sid)
        entries = [e["name"] for e in ls[-1]["result"]["structuredContent"]["entries"]]
        results[i] = dict(ok=sc["status"] == "ok", logs=sc["logs"] == f"{token}\ndone {i}\n",
                          notes=logs == [token, f"done {i}"], progress=set(prog) == {i},
                          artifact=body == token, zip=z.read("same-name.txt").decode() == token,
                          workspace=entries == ["same-name.txt"], run_id=sc["run_id"])
    except Exception as e:
        results[i] = dict(error=repr(e))

threads = [threading.Thread(target=worker, args=(i,)) for i in range(N)]
for t in threads: t.start()
for t in threads: t.join()
for i, r in enumerate(results):
    keys = ("ok", "logs", "notes", "progress", "artifact", "zip", "workspace")
    bad = [k for k in keys if r.get(k) is not True]
    print(("PASS" if not bad else "FAIL") + "\t" + f"call {i}: " + (", ".join(f"{k}={r.get(k)}" for k in bad) if bad else
          "its status, log, notifications, progress token, artifact and zip are its own"))
print(f"RUNS\t{len(set(r.get('run_id') for r in results if r.get('run_id')))}")
PY
ok $? "sixteen clients ran (see py.err otherwise)"
calls=0
while IFS=$'\t' read -r kind text; do
    case $kind in
    PASS) ok 0 "$text"; calls=$((calls + 1)) ;;
    FAIL) ok 1 "$text"; calls=$((calls + 1)) ;;
    RUNS) is "$text" 16 "sixteen distinct runs" ;;
    esac
done <"$T/verdicts"
is "$calls" 16 "sixteen answers"
done_testing
