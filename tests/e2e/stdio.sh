#!/bin/bash
# `runmyscript mcp`: MCP over stdio. The official SDK's stdio client
# (stdio-client.mjs) as a desktop client starts it: initialize, tools/list,
# run_code with the seed example and its input, notifications, the session's
# workspace, its own warm pool, cancel, the end. Then the raw transport:
# the stateless revision 2026-07-28 (no headers to mirror: _meta alone),
# its cancel (the call's stream closes), a line that is not JSON, one past
# request_bytes, and a running server's warm pool used instead of its own.
# Files from the client: mount_file's file:// beneath mount_root (allowed;
# outside it, through a symlink or '..' refused) and write_file (text,
# base64, its cap write_bytes, its path guard).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
RUNAS=()
. "$top_srcdir/tests/lib/warm.sh"
MODULES=$top_srcdir/tests/node_modules
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=node
HAVE_PILLOW=0
ls "${WHEELHOUSE:-/nonexistent}"/pillow-*.whl >/dev/null 2>&1 && HAVE_PILLOW=1
WARM=0
"$RUNMYSCRIPT" check-sandbox 2>/dev/null | grep -q '^namespaces and mounts: *yes' && WARM=1

SDK_RAN=0 # the SDK client cancels a call of its own: one more cancelled run
if [ -d "$MODULES/@modelcontextprotocol/sdk" ] && command -v "$NODE" >/dev/null; then
    SDK_RAN=1
    RUNMYSCRIPT=$RUNMYSCRIPT STATE_DIR=$RUNMYSCRIPT_STATE_DIR TOP=$top_srcdir WARM=$WARM HAVE_PILLOW=$HAVE_PILLOW \
        "$NODE" "$top_srcdir/tests/e2e/stdio-client.mjs" >$T/sdk.tap 2>&1
    rc=$?
    tap_merge "SDK stdio client: " $T/sdk.tap
    ok $rc "the SDK's stdio client ran to its end"
else
    skip "the SDK's stdio client: the npm packages are not installed in tests/ (./quickstart test runs npm ci there)"
fi
! "$PYTHON3" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])' "$RUNMYSCRIPT_STATE_DIR/.warm/pool.sock" 2>/dev/null
ok $? "its warm pool ended with it (nothing listens for the state directory)"

# The raw transport, one message a line (stdio_raw.py: send, wait for the
# answers each one must get, with a ceiling).
cat >$T/raw.py <<'PY'
import json, os, select, subprocess, sys, time
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
p = subprocess.Popen([os.environ["RUNMYSCRIPT"], "mcp", *sys.argv[1:]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=open(os.environ["T"] + "/raw.err", "wb"))
buf = b""
def send(obj):
    p.stdin.write((obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n")
    p.stdin.flush()
def until(pred, ceiling=120):
    """Messages until one satisfies pred (returned with those before it)."""
    global buf
    seen, end = [], time.time() + ceiling
    while time.time() < end:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            m = json.loads(line)
            seen.append(m)
            if pred(m):
                return m, seen
        r, _, _ = select.select([p.stdout], [], [], 0.5)
        if r:
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
    return None, seen
def say(k, v):
    print(k, json.dumps(v))
    sys.stdout.flush()
def call(i, name, args, token=None):
    meta = dict(META)
    if token:
        meta["progressToken"] = token
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args, "_meta": meta}})
mode = os.environ.get("MODE", "modern")
if mode == "modern":
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}})
    m, _ = until(lambda m: m.get("id") == 1)
    tools = m["result"]["tools"]
    say("list", [t["name"] for t in tools])
    say("ws-param", all("workspace" in t["inputSchema"].get("properties", {}) for t in tools if t["name"] == "run_code"))
    say("no-session", not any("session" in t["description"].replace("session_ttl", "") for t in tools))
    call(2, "run_code", {"code": "open('kept.txt', 'w').write('x')\nprint('in a workspace')"}, token="t2")
    m, seen = until(lambda m: m.get("id") == 2)
    r = m["result"]
    say("run", [r["structuredContent"]["status"], r["structuredContent"]["logs"], r.get("resultType")])
    say("progress", [x["params"]["message"] for x in seen if x.get("method") == "notifications/progress"])
    wid = r["structuredContent"]["workspace"]
    call(3, "list_dir", {"workspace": wid})
    m, _ = until(lambda m: m.get("id") == 3)
    say("ls", sorted(e["name"] for e in m["result"]["structuredContent"]["entries"]))
    # Its cancel: the call's stream closes (over stdio: notifications/cancelled).
    call(4, "run_code", {"code": "import time\nprint('long', flush=True)\ntime.sleep(120)", "workspace": wid}, token="t4")
    m, seen = until(lambda m: m.get("method") == "notifications/progress" and m["params"]["message"] == "running")
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4, "reason": "no longer"}})
    send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "run_code", "arguments": {"code": "print('next')", "workspace": wid}, "_meta": META}})
    m, seen = until(lambda m: m.get("id") == 5)
    say("after-cancel", [m["result"]["structuredContent"]["logs"], any(x.get("id") == 4 for x in seen)])
    # Bad lines: not JSON, and (below) one past request_bytes.
    send(b"{not json")
    m, _ = until(lambda m: "error" in m)
    say("parse", [m["error"]["code"], m["id"]])
    send(b'{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"pad": "' + b"x" * 9000 + b'"}}')
    m, _ = until(lambda m: "error" in m)
    say("big", [m["error"]["code"], m["error"]["message"]])
    send({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": META}})
    m, _ = until(lambda m: m.get("id") == 7)
    say("after-big", "tools" in m.get("result", {}))
    # Links over stdio: the files themselves on this machine.
    call(8, "run_my_script", {"code": "import os\nopen(os.environ['SCRIPT_OUTPUT'] + '/a b.txt', 'w').write('hi')"})
    m, _ = until(lambda m: m.get("id") == 8)
    r = m["result"]
    sc = r["structuredContent"]
    from urllib.parse import unquote
    def local(url):
        return url.startswith("file:///") and os.path.isfile(unquote(url[len("file://"):]))
    art = sc["artifacts"][0]
    links = [c["uri"] for c in r["content"] if c["type"] == "resource_link"]
    text = r["content"][0]["text"]
    say("local", [art["path"], local(art["url"]), open(unquote(art["url"][7:])).read(), local(sc["zip_url"] or ""),
                  os.path.isfile(sc.get("zip") or ""), os.path.isdir(sc.get("workdir") or ""),
                  len(links), all(local(u) for u in links),
                  os.path.join(sc["workdir"], "output", "a b.txt") in text, sc["zip"] in text])
p.stdin.close()
try:
    say("exit", p.wait(60))
except subprocess.TimeoutExpired:
    p.kill()
    say("exit", "hung")
PY
raw() { T=$T RUNMYSCRIPT=$RUNMYSCRIPT "$PYTHON3" $T/raw.py "$@" >$T/raw.out 2>&1; }
got() { sed -n "s/^$1 //p" $T/raw.out; }
raw --set request_bytes=8K
is "$(got list)" '["run_code", "run_my_script", "list_dir", "preview_file", "mount_file", "write_file", "persist_artifact", "delete_workspace"]' \
    "2026-07-28 over stdio: tools/list with _meta alone (no headers to mirror it)"
is "$(got ws-param)" true "run_code takes a workspace handle"
is "$(got no-session)" true "and no description speaks of a session"
is "$(got run)" '["ok", "in a workspace\n", "complete"]' "run_code: a complete result"
is "$(got progress)" '["queued", "resolving the environment", "running", "collecting artifacts", "done: ok"]' \
    "with its progress notifications"
like "$(got ls)" '"kept.txt"' "list_dir with the handle sees what the call wrote"
is "$(got after-cancel)" '["next\n", false]' "notifications/cancelled ends a 2026-07-28 call (no answer for it), and the next one runs"
is "$(got parse)" '[-32700, null]' "a line that is not JSON: -32700 with id null"
like "$(got big)" '[-32000, "Content Too Large: the request body is larger than request_bytes (8.0 KiB)"]' \
    "a line past request_bytes: refused with its value"
is "$(got after-big)" true "and the next line is served"
is "$(got local)" '["a b.txt", true, "hi", true, true, true, 2, true, true, true]' \
    "over stdio the links are the files: file:// URLs in the result and its resource links, the paths (the zip's, the run's) in its text"
is "$(got exit)" 0 "the end of stdin ends it: exit 0"
is "$(grep -l '"status":"cancelled"' $RUNMYSCRIPT_STATE_DIR/runs/*/result.json 2>/dev/null | wc -l)" $((1 + SDK_RAN)) \
    "the cancelled call's run is status cancelled$([ $SDK_RAN = 1 ] && echo " (as the SDK client's was)")"

# Files from the client, over stdio: file:// beneath mount_root, write_file.
mkdir -p $T/root/sub
printf 'a,b\n1,2\n' >$T/root/sub/data.csv
echo secret >$T/outside.txt
ln -s $T/outside.txt $T/root/link.txt
cat >$T/files.py <<'PY'
import json, os, subprocess, sys
T = os.environ["T"]
p = subprocess.Popen([os.environ["RUNMYSCRIPT"], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                     env=dict(os.environ, RUNMYSCRIPT_MOUNT_ROOT=T + "/root", RUNMYSCRIPT_WRITE_BYTES="1K"))
def send(o):
    p.stdin.write(json.dumps(o) + "\n")
    p.stdin.flush()
def recv(i):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "files", "version": "1"}}})
recv(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
n = 1
def call(tag, name, args):
    global n
    n += 1
    send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}})
    r = recv(n)["result"]
    print(tag, json.dumps([bool(r.get("isError")), r["content"][0]["text"]]))
call("in", "mount_file", {"url": "file://" + T + "/root/sub/data.csv", "mount_path": "d.csv"})
call("out", "mount_file", {"url": "file://" + T + "/outside.txt", "mount_path": "o.txt"})
call("link", "mount_file", {"url": "file://" + T + "/root/link.txt", "mount_path": "l.txt"})
call("dots", "mount_file", {"url": "file://" + T + "/root/../outside.txt", "mount_path": "l.txt"})
call("text", "write_file", {"path": "w.txt", "content": "hello"})
call("b64", "write_file", {"path": "sub/b.bin", "content": "aGk=", "encoding": "base64"})
call("up", "write_file", {"path": "../x", "content": "x"})
call("abs", "write_file", {"path": "/tmp/x", "content": "x"})
call("big", "write_file", {"path": "big", "content": "x" * 1025})
call("fit", "write_file", {"path": "fit", "content": "x" * 1024})
call("read", "run_code", {"code": "print(open('mounts/d.csv').read() + open('mounts/w.txt').read() + open('mounts/sub/b.bin').read())"})
call("cell", "run_cell", {"code": "x = 1"})
p.stdin.close()
p.wait()
PY
T=$T RUNMYSCRIPT=$RUNMYSCRIPT "$PYTHON3" $T/files.py >$T/files.out 2>$T/files.err
fgot() { sed -n "s/^$1 //p" $T/files.out; }
like "$(fgot in)" "[false, \"mounted file://$T/root/sub/data.csv as mounts/d.csv (8 B, text/csv" \
    "over stdio mount_file takes a file:// URL beneath mount_root"
like "$(fgot out)" "[true, \"mount_file: mount file://$T/outside.txt: not beneath mount_root" "and refuses one outside it"
like "$(fgot link)" '/root/link.txt: a symlink on the way (none is followed beneath mount_root)' "or through a symlink beneath it (no escape)"
like "$(fgot dots)" '/root/../outside.txt: not beneath mount_root' "or with '..'"
like "$(fgot text)" '[false, "wrote mounts/w.txt (5 B, text/plain' "write_file writes text into mounts/"
like "$(fgot b64)" '[false, "wrote mounts/sub/b.bin (2 B' "and base64, decoded"
is "$(fgot up)" "[true, \"write_file: the path '../x' is not inside mounts/: give a relative path such as 'data/sales.csv', with no '..' or '.' parts, no empty parts and no leading '/'; nothing was written\"]" \
    "a path with '..' is refused, in a sentence that says what to change"
like "$(fgot abs)" "write_file: the path '/tmp/x' is not inside mounts/: give a relative path" "and an absolute one"
is "$(fgot big)" '[true, "write_file: the file is 1025 bytes, more than write_bytes (1.0 KiB); nothing was written"]' \
    "a file past write_bytes is refused, naming the key"
like "$(fgot fit)" '[false, "wrote mounts/fit (1.0 KiB' "one of exactly write_bytes is written"
like "$(fgot read)" 'a,b\n1,2\nhellohi' "a script reads the files the client sent"
like "$(fgot cell)" '[true, "run_cell: runmyscript mcp runs no kernels. They live beside the workers of a served instance' \
    "run_cell over stdio: says runmyscript mcp runs no kernels and where they are"
case "$(fgot cell)" in *CGI*|*"command line"*) ok 1 "and does not call itself CGI or the command line" ;;
*) ok 0 "and does not call itself CGI or the command line" ;; esac

# A running server's warm pool serves the stdio server's runs.
if [ "$WARM" = 1 ]; then
    warm_serve || { ok 1 "a server's pool starts"; done_testing; exit 1; }
    MODE=none raw --set log_level=info
    like "$(cat $T/raw.err)" "warm pool: a server's" "with a server on the same state directory, it uses that server's pool"
    [ -n "$(warm_pool_pid)" ]
    ok $? "whose pool is still there after it ended"
    warm_stop
else
    skip "a server's warm pool: this host cannot make user namespaces"
fi
done_testing
