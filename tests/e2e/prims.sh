#!/bin/bash
# What a client written for PRIMS finds here, through nginx: the prompts
# (prompts/list, prompts/get of python_programmer and analyze_file, in both
# revisions); its flow unchanged (run_code with files=[{url, mountPath}]
# from a fixture server on loopback, GET /artifacts/PATH with its session
# header, list_dir, preview_file); that route with a 2026-07-28 workspace
# handle, and every refusal and guard of it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/nginx.sh"
. "$top_srcdir/tests/lib/fixture-server.sh"
need "$NGINX" curl
NGINX_PREFIX=$T/fixtures
NGINX_ON_EXIT=stack_exit
fixture_server_start
U=http://127.0.0.1:$PORT1
STACK_CONF="fetch_allow = 127.0.0.1:$PORT1"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

# ---------------------------------------------------------------- prompts
init 2025-11-25
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' \
    -H "$ACCEPT_BOTH"
is "$(jb '"prompts" in r["result"]["capabilities"]')" true "initialize declares prompts"
post '{"jsonrpc":"2.0","id":2,"method":"prompts/list"}' "${H[@]}"
is "$(jb '[p["name"] for p in r["result"]["prompts"]]')" '["python_programmer", "analyze_file"]' \
    "prompts/list: python_programmer and analyze_file (no fixture prompts in the installed program)"
is "$(jb '[(a["name"], a["required"]) for a in r["result"]["prompts"][0]["arguments"]]')" \
    '[["task", true], ["mounted_files", false], ["requirements", false]]' "python_programmer(task, mounted_files?, requirements?)"
post '{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"python_programmer","arguments":{"task":"plot sin(x)"}}}' "${H[@]}"
text=$(jb 'r["result"]["messages"][0]["content"]["text"]')
like "$text" "Task: plot sin(x)" "prompts/get python_programmer: the task is in it"
like "$text" "SCRIPT_OUTPUT" "it says where results go"
like "$text" "SCRIPT_INPUT" "and where input comes from"
like "$text" "requirements" "and requirements"
like "$text" "run_cell" "and run_cell for work in steps"
like "$text" "of this session" "in a legacy revision, the session keeps the workspace"
! grep -q "already in the workspace" <<<"$text"
ok $? "without mounted_files, no word of mounted files"
post '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"python_programmer","arguments":{"task":"t","mounted_files":"mounts/sales.csv"}}}' "${H[@]}"
like "$(jb 'r["result"]["messages"][0]["content"]["text"]')" "already in the workspace (mounted earlier); read them by these paths, relative to the working directory, without fetching them again: mounts/sales.csv" \
    "with mounted_files, they are named as already there"
post '{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"python_programmer","arguments":{}}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" -32602 "without its required task: -32602"
post '{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"python_programmer","arguments":{"task":"t","bogus":"x"}}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" -32602 "with an argument it does not have: -32602"
post '{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"nope"}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" -32602 "an unknown prompt: -32602"
big=$("$PYTHON3" -c 'print("x" * 70000)')
printf '{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"python_programmer","arguments":{"task":"%s"}}}' "$big" >"$T/big.json"
post "@$T/big.json" "${H[@]}"
is "$(jb 'r["error"]["code"]')" -32602 "an argument over TOOLS_PROMPT_ARG_MAX: -32602"
post '{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"analyze_file","arguments":{"url":"https://example.com/d.csv","question":"which month sold most?"}}}' "${H[@]}"
text=$(jb 'r["result"]["messages"][0]["content"]["text"]')
like "$text" 'files=[{"url": "https://example.com/d.csv"' "analyze_file mounts the URL"
like "$text" 'answer: which month sold most?' "and asks the question"

mpost server/discover ""
is "$(jb '"prompts" in r["result"]["capabilities"]')" true "2026-07-28: server/discover declares prompts"
mpost prompts/list ""
is "$(jb 'len(r["result"]["prompts"]), r["result"]["cacheScope"], r["result"]["ttlMs"] >= 0')" '[2, "public", true]' \
    "2026-07-28: prompts/list, with its caching hints"
mpost prompts/get '"name":"python_programmer","arguments":{"task":"count words"}' -H "Mcp-Name: python_programmer"
like "$(jb 'r["result"]["messages"][0]["content"]["text"]')" "workspace handle" \
    "2026-07-28: prompts/get says to pass the workspace handle"
mpost prompts/get '"name":"python_programmer","arguments":{"task":"x"}' -H "Mcp-Name: other"
is "$(jb 'r["error"]["code"]')" -32020 "2026-07-28: Mcp-Name must mirror the prompt's name"

# ----------------------------------------------- a PRIMS client, unchanged
init 2025-11-25
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
cat >"$T/prims.py" <<'PY'
import csv, os
rows = list(csv.reader(open("mounts/data/table.csv")))
os.makedirs(os.environ["SCRIPT_OUTPUT"] + "/plots", exist_ok=True)
open(os.environ["SCRIPT_OUTPUT"] + "/plots/rows.txt", "w").write(str(len(rows)))
print(len(rows))
PY
"$PYTHON3" - "$T/prims.py" "$U" >"$T/call.json" <<'PY'
import json, sys
print(json.dumps({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "run_code", "arguments": {
    "code": open(sys.argv[1]).read(),
    "files": [{"url": sys.argv[2] + "/data/table.csv", "mountPath": "data/table.csv"}]}}}))
PY
post "@$T/call.json" "${H[@]}"
is "$(jb 'r["result"]["structuredContent"]["status"]')" ok "PRIMS flow: run_code with files=[{url, mountPath}]"
rows=$(jb 'r["result"]["structuredContent"]["logs"].strip()')
art() { # art PATH [CURL ARGS...]: GET /artifacts/PATH; the status in $STATUS, the body in $T/a, headers in $T/ah
    local path=$1
    shift
    STATUS=$(curl -sS --path-as-is -o "$T/a" -D "$T/ah" -w '%{http_code}' "$@" "$BASE/artifacts/$path")
}
art plots/rows.txt -H "mcp-session-id: $SID"
is "$STATUS:$(cat "$T/a")" "200:$rows" "PRIMS flow: GET /artifacts/plots/rows.txt with mcp-session-id"
like "$(grep -i '^X-Content-Type-Options' "$T/ah")" nosniff "with nosniff"
like "$(grep -i '^Content-Security-Policy' "$T/ah")" "sandbox" "and the sandboxing CSP"
post '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"list_dir","arguments":{"dir_path":"output/plots"}}}' "${H[@]}"
is "$(jb '[e["name"] for e in r["result"]["structuredContent"]["entries"]]')" '["rows.txt"]' "PRIMS flow: list_dir"
post '{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"preview_file","arguments":{"relative_path":"mounts/data/table.csv"}}}' "${H[@]}"
like "$(jb 'r["result"]["structuredContent"]["text"]')" "$(head -c 20 "$F/data/table.csv")" "PRIMS flow: preview_file of the mounted CSV"

# ------------------------------------------- /artifacts/PATH: its guards
OUT=$T/state/sessions/$SID/workspace/output
printf '<script>alert(1)</script>' >"$OUT/page.html"
art page.html -H "mcp-session-id: $SID"
like "$(grep -i '^Content-Disposition' "$T/ah")" "attachment" "HTML from a script downloads as an attachment"
art plots/rows.txt
is "$STATUS" 400 "without the header: 400"
art ./plots/rows.txt -H "mcp-session-id: $SID"
is "$STATUS" 400 "with a . part: 400"
# nginx itself resolves a leading .. (the URI leaves /artifacts/): never the file.
art %2e%2e/session.json -H "mcp-session-id: $SID"
[ "$STATUS" != 200 ] && ! grep -q log_level "$T/a"
ok $? "%2e%2e/session.json does not reach the session's files ($STATUS)"
art plots/../plots/rows.txt -H "mcp-session-id: $SID"
is "$STATUS" 400 "with .. inside: 400"
art /etc/passwd -H "mcp-session-id: $SID"
is "$STATUS" 400 "an absolute path: 400"
art nope.txt -H "mcp-session-id: $SID"
is "$STATUS" 404 "a missing file: 404"
art plots/rows.txt -H "mcp-session-id: 0123456789abcdef0123456789abcdef"
is "$STATUS" 404 "an unknown session: 404"
art plots/rows.txt -H "mcp-session-id: ../../etc"
is "$STATUS" 404 "a session id that is none: 404"
ln -s /etc/passwd "$OUT/link"
art link -H "mcp-session-id: $SID"
is "$STATUS" 403 "a symlink out of output/: 403"
ln -s .. "$OUT/up"
art up/session.json -H "mcp-session-id: $SID"
is "$STATUS" 403 "a symlinked folder on the way: 403"
printf 'secret' >"$T/state/sessions/$SID/workspace/secret.txt"
ln "$T/state/sessions/$SID/workspace/secret.txt" "$OUT/hard.txt"
art hard.txt -H "mcp-session-id: $SID"
is "$STATUS" 403 "a hard link to a file outside output/: 403"
art plots/rows.txt -H "mcp-session-id: $SID" -H "Host: evil.example.com"
is "$STATUS" 403 "a Host not in allowed_hosts: 403"
art plots/rows.txt -H "mcp-session-id: $SID" -X POST
is "$STATUS" 405 "POST: 405"

# ... and with a 2026-07-28 workspace handle
mpost tools/call '"name":"run_code","arguments":{"code":"import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/w.txt\", \"w\").write(\"ws\")"}' -H "Mcp-Name: run_code"
wid=$(jb 'r["result"]["structuredContent"]["workspace"]')
art w.txt -H "Mcp-Param-Workspace: $wid"
is "$STATUS:$(cat "$T/a")" "200:ws" "GET /artifacts/PATH with Mcp-Param-Workspace"
art w.txt -H "Mcp-Param-Workspace: $wid" -H "mcp-session-id: $SID"
is "$STATUS" 400 "with both headers: 400"
art w.txt -H "mcp-session-id: $wid"
is "$STATUS" 404 "a workspace handle is no session id: 404"

# ------------------------------------------------------------------ hints
hint_of() { # hint_of CODE [EXTRA ARGS JSON]: run_code; the feedback, and the text's hint line into $T/hint
    "$PYTHON3" - "$1" "${2:-{\}}" >"$T/call.json" <<'PY'
import json, sys
args = {"code": sys.argv[1]}
args.update(json.loads(sys.argv[2]))
print(json.dumps({"jsonrpc": "2.0", "id": 30, "method": "tools/call", "params": {"name": "run_code", "arguments": args}}))
PY
    post "@$T/call.json" "${H[@]}"
    jb '[c["text"] for c in r["result"]["content"] if c["type"] == "text"][0]' | grep '^hint: ' >"$T/hint"
    jb 'r["result"]["structuredContent"]["feedback"]'
}
init 2025-11-25
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
like "$(hint_of 'x = 1')" "printed nothing and wrote no file" "a run that printed nothing and wrote no file: a hint"
like "$(cat "$T/hint")" "hint: The script printed nothing" "in the text too"
is "$(hint_of 'print(1)')" null "a run that printed: no hint"
[ ! -s "$T/hint" ]
ok $? "and no hint line in the text"
is "$(hint_of 'import os; open(os.environ["SCRIPT_OUTPUT"] + "/f", "w").write("x")')" null "a run that wrote a file: no hint"
like "$(hint_of 'import importlib; importlib.import_module("nosuchmodxyz.sub")')" "Module 'nosuchmodxyz' is not installed, and the import map does not know which package provides it: pass requirements" \
    "a ModuleNotFoundError for a name the import map does not know: pass requirements, and the name is not known"
like "$(hint_of 'import importlib; importlib.import_module("sklearn.linear_model")')" "Module 'sklearn' is not installed: pass requirements=['scikit-learn']" \
    "a ModuleNotFoundError for sklearn: the import map's scikit-learn"
like "$(hint_of 'import time; time.sleep(30)' '{"timeout": 1}')" "stopped at the wall_time limit (server key timeout). Pass a larger timeout" \
    "a run stopped at a limit: which key, how to ask for more"
like "$(cat "$T/hint")" "hint: The run was stopped" "in the text, after the status"

# Files written outside SCRIPT_OUTPUT: in a session they stay in the
# workspace; a run without one loses them.
like "$(hint_of 'import os; os.makedirs("sub/__pycache__", exist_ok=True); open("stray.txt", "w").write("x"); open("sub/b.txt", "w").write("y"); open("sub/__pycache__/m.pyc", "w").write("z"); print("done")')" \
    "The script wrote 2 files outside SCRIPT_OUTPUT (stray.txt, sub/b.txt), which stay in the workspace for the next call but are not returned as artifacts" \
    "a session's run that wrote files outside output/: a hint naming them (not __pycache__)"
like "$(cat "$T/hint")" "hint: The script wrote 2 files outside SCRIPT_OUTPUT" "in the text too"
is "$(hint_of 'print(open("stray.txt").read())')" null "the next call, which wrote nothing: no hint for the files before it"
like "$(hint_of 'import os; [open(f"f{i}.txt", "w").write("x") for i in range(7)]; print(1)')" \
    "wrote 7 files outside SCRIPT_OUTPUT (f0.txt, f1.txt, f2.txt, f3.txt, f4.txt, ...)" "seven files: the count and the first five"
"$PYTHON3" - >"$T/call.json" <<'PY'
import json
code = 'import os\nopen("result.txt", "w").write("x")\nprint("done")'
print(json.dumps({"jsonrpc": "2.0", "id": 31, "method": "tools/call", "params": {"name": "run_my_script", "arguments": {"code": code}}}))
PY
post "@$T/call.json" "${H[@]}"
like "$(jb 'r["result"]["structuredContent"]["feedback"]')" \
    "The script wrote 1 file outside SCRIPT_OUTPUT (result.txt), which are not returned and are removed with the run" \
    "a run without a workspace that wrote a file in its directory: a hint"

done_testing
