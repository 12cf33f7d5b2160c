#!/bin/bash
# No answer over MCP or /api/run carries a path of the server: every byte of
# every answer (SSE streams and their notifications included) of a mix of
# calls, legacy and 2026-07-28, a task, failures, an install, the workspace
# tools and /api/run in its three forms, is scanned for the state
# directory's path; structuredContent and /api/run's result have no
# workdir and no zip, and every URL in structuredContent is absolute, as
# in the text and the resource_links. (runmyscript run --json keeps the paths: the
# CLI's user is the server's.) paths-rlimits.sh runs it in the fallback,
# where a script's own paths are the host's.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_CONF='task_after = 0\nlog_level = debug'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
WH=0
[ -n "${WHEELHOUSE:-}" ] && ls "$WHEELHOUSE"/rms_alpha-1.0-*.whl >/dev/null 2>&1 && WH=1
"$PYTHON3" - "$BASE" "$T/state" "$WH" >"$T/verdicts" 2>"$T/py.err" <<'PY'
import http.client, json, os, sys, urllib.parse
base, state, wheelhouse = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
u = urllib.parse.urlparse(base)
answers = []  # (what, raw bytes of the whole answer)
results = []  # (what, a result object: structuredContent or /api/run's)

def request(what, path, body, headers, ctype="application/json"):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    h = {"Content-Type": ctype, **headers}
    c.request("POST", path, body if isinstance(body, (bytes, str)) else json.dumps(body), h)
    r = c.getresponse()
    raw = r.read()
    answers.append((what, raw + json.dumps(dict(r.getheaders())).encode()))
    return r, raw.decode("utf-8", "replace")

def events(raw):
    return [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:") and l[5:].strip()]

SID = None
def mcp(what, method, params=None, notify=False):
    global SID
    body = {"jsonrpc": "2.0", "method": method}
    if not notify:
        body["id"] = len(answers) + 1
    if params is not None:
        body["params"] = params
    h = {"Accept": "application/json, text/event-stream"}
    if SID:
        h["Mcp-Session-Id"] = SID
    r, raw = request(what, "/mcp", body, h)
    SID = SID or r.getheader("Mcp-Session-Id")
    msgs = events(raw) if r.getheader("Content-Type", "").startswith("text/event-stream") else ([json.loads(raw)] if raw else [])
    return msgs[-1] if msgs else None

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
def modern(what, method, params, name=None, caps=None, ws=None):
    meta = dict(META, **{"io.modelcontextprotocol/logLevel": "debug", "progressToken": "p"})
    if caps:
        meta["io.modelcontextprotocol/clientCapabilities"] = caps
    h = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name:
        h["Mcp-Name"] = name
    if ws:
        h["Mcp-Param-Workspace"] = ws
    r, raw = request(what, "/mcp", {"jsonrpc": "2.0", "id": len(answers) + 1, "method": method,
                                    "params": dict(params, _meta=meta)}, h)
    msgs = events(raw) if r.getheader("Content-Type", "").startswith("text/event-stream") else [json.loads(raw)]
    return msgs[-1]

def tool(what, name, args):
    m = mcp(what, "tools/call", {"name": name, "arguments": args, "_meta": {"progressToken": what}})
    res = m.get("result") or {}
    if "structuredContent" in res:
        results.append((what, res["structuredContent"]))
    if "error" in m and isinstance(m["error"].get("data"), dict):
        results.append((what, m["error"]["data"]))
    return res

mcp("initialize", "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "paths", "version": "1"}})
mcp("initialized", "notifications/initialized", notify=True)
mcp("setLevel", "logging/setLevel", {"level": "debug"})
ART = ("import os\nout = os.environ['SCRIPT_OUTPUT']\nopen(out + '/a.txt', 'w').write('a')\n"
       "os.makedirs(out + '/d', exist_ok=True)\nopen(out + '/d/b c.txt', 'w').write('b')\nprint('artifacts')\n")
res = tool("run_code artifacts", "run_code", {"code": ART})
links = [c["uri"] for c in res.get("content", []) if c.get("type") == "resource_link"]
print("LINKS", json.dumps(links))
tool("run_code raises", "run_code", {"code": "def f():\n    raise ValueError('boom')\nf()\n"})
tool("run_code times out", "run_code", {"code": "import time\nprint('t', flush=True)\ntime.sleep(30)", "timeout": 1})
tool("run_code imports a missing module", "run_code", {"code": "import no_such_module_here\n"})
tool("run_code stderr", "run_code", {"code": "import sys, os\nprint('cwd is', os.getcwd() == os.environ['SCRIPT_OUTPUT'][:-7], file=sys.stderr)\n"})
if wheelhouse:
    tool("run_code installs", "run_code", {"code": "import rms_alpha\nprint('alpha')", "requirements": ["rms_alpha==1.0"]})
    tool("run_code fails to install", "run_code", {"code": "print(1)", "requirements": ["no-such-package-x==9"]})
tool("list_dir", "list_dir", {"dir_path": "."})
tool("list_dir missing", "list_dir", {"dir_path": "no/such"})
tool("preview_file", "preview_file", {"relative_path": "output/a.txt"})
tool("preview_file missing", "preview_file", {"relative_path": "nope.txt"})
tool("run_my_script", "run_my_script", {"code": ART, "user_input": "in"})
tool("mount_file refused", "mount_file", {"url": "http://127.0.0.1:1/x", "mount_path": "x"})
tool("persist_artifact refused", "persist_artifact", {"relative_path": "a.txt", "url": "http://127.0.0.1:1/put"})
mcp("unknown tool", "tools/call", {"name": "no_such_tool", "arguments": {}})

m = modern("2026 run_code", "tools/call", {"name": "run_code", "arguments": {"code": ART}}, "run_code")
sc = m["result"]["structuredContent"]
results.append(("2026 run_code", sc))
ws = sc.get("workspace")
m = modern("2026 list_dir", "tools/call", {"name": "list_dir", "arguments": {"workspace": ws}}, "list_dir", ws=ws)
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
m = modern("2026 task", "tools/call", {"name": "run_my_script", "arguments": {"code": ART}}, "run_my_script", caps=TASKS)
tid = m["result"].get("taskId")
import time
for _ in range(100):
    m = modern("2026 tasks/get", "tasks/get", {"taskId": tid}, tid, caps=TASKS)
    if m["result"]["status"] != "working":
        break
    time.sleep(0.2)
if "result" in m["result"]:
    results.append(("2026 task result", m["result"]["result"]["structuredContent"]))
print("TASK", m["result"]["status"])

r, raw = request("/api/run json", "/api/run", {"code": ART}, {"Accept": "application/json"})
results.append(("/api/run json", json.loads(raw)))
r, raw = request("/api/run raises", "/api/run", {"code": "raise SystemExit(open('/nonexistent/x'))"}, {"Accept": "application/json"})
results.append(("/api/run raises", json.loads(raw)))
r, raw = request("/api/run sse", "/api/run", {"code": ART + "import sys\nprint('err', file=sys.stderr)\n"},
                 {"Accept": "text/event-stream"})
ev = [l for l in raw.splitlines() if l.startswith("data:")]
results.append(("/api/run sse", json.loads(ev[-1][5:])))
form = ("--XyZ\r\nContent-Disposition: form-data; name=\"code\"\r\n\r\n" + ART + "\r\n--XyZ--\r\n")
request("/api/run html", "/api/run", form, {"Accept": "text/html"}, "multipart/form-data; boundary=XyZ")

paths = {state, os.path.realpath(state), os.path.dirname(state)}
leaks = [(w, p) for w, raw in answers for p in paths if p.encode() in raw]
print("ANSWERS", len(answers))
print("LEAKS", json.dumps(leaks[:5]))
keys = [(w, k) for w, r in results for k in ("workdir", "zip") if k in r]
print("KEYS", json.dumps(keys))
rel = []
for w, r in results:
    urls = [a.get("url") for a in r.get("artifacts", [])] + ([r["zip_url"]] if r.get("zip_url") else [])
    # MCP: absolute on the server's base; /api/run: relative to the site, as the page uses them.
    want = "/artifacts/" if w.startswith("/api/run") else base + "/artifacts/"
    rel += [(w, x) for x in urls if x and not x.startswith(want)]
print("RELATIVE", json.dumps(rel[:5]))
print("RESULTS", len(results))
print("STATUS", json.dumps(sorted({r.get("status", "?") for w, r in results})))
PY
ok $? "the calls ran (see py.err otherwise)"
[ -s "$T/py.err" ] && sed 's/^/# /' "$T/py.err"
v() { grep "^$1 " "$T/verdicts" | cut -d' ' -f2-; }
ok "$([ "$(v ANSWERS)" -ge 25 ]; echo $?)" "$(v ANSWERS) answers scanned, $(v RESULTS) results"
is "$(v LEAKS)" "[]" "no answer holds the state directory's path (nor its parent's)"
is "$(v KEYS)" "[]" "no result has workdir or zip"
is "$(v RELATIVE)" "[]" "every artifact and zip URL in structuredContent is absolute on the server's base (/api/run's: relative to the site)"
like "$(v STATUS)" '"error"' "the results include failures"
like "$(v STATUS)" '"timeout"' "... and a timeout"
is "$(v TASK)" completed "the task completed, and its result was scanned too"
like "$(v LINKS)" "$BASE/artifacts/" "resource_links are absolute on the same base"
# What the server keeps for itself still has its paths: the CLI's --json.
printf 'print(1)\n' >"$T/one.py"
"$RUNMYSCRIPT" run --json "$T/one.py" >"$T/cli.json" 2>/dev/null
is "$(jb_cli() { "$PYTHON3" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["workdir"].startswith(sys.argv[2]))' "$T/cli.json" "$RUNMYSCRIPT_STATE_DIR"; }; jb_cli)" \
    True "runmyscript run --json keeps workdir (the CLI's user is the server's)"
done_testing
