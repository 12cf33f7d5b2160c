#!/bin/bash
# MCP Streamable HTTP rule by rule, with curl, through a real nginx in front
# of `runmyscript serve`: status codes, headers, JSON-RPC error codes, 202s,
# sessions, Origin/Host, the bearer token, size limits, batches, SSE with
# progress and log notifications, cancellation from another worker, the
# tools and their results, artifacts, list_dir and preview_file.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"

TOKEN=s3cret-token
STACK_CONF="auth_token = $TOKEN\nrequest_bytes = 64K\nimage_inline_bytes = 4K"
STACK_MAX_BODY=1m
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
AUTH="Authorization: Bearer $TOKEN"
A=(-H "$ACCEPT_BOTH" -H "$AUTH")

# --- /healthz
curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["status"], r["version"], r["workers"]["total"], r["mode"]')" '["ok", "0.1.0", 4, "serve"]' \
    "/healthz: status, version, workers, mode"
like "$(jb 'r["python"]["version"]')" "3." "/healthz: the python version"

# --- lifecycle
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}"
is "$STATUS" 200 "initialize: 200"
like "$(header Content-Type)" "application/json" "initialize: a JSON body"
SID=$(header Mcp-Session-Id)
[[ "$SID" =~ ^[0-9a-f]{32}$ ]]
ok $? "initialize: Mcp-Session-Id is 128 random bits as visible ASCII ($SID)"
is "$(jb 'r["id"], r["result"]["protocolVersion"]')" '[1, "2025-11-25"]' "initialize: the client's revision"
is "$(jb 'sorted(r["result"]["capabilities"])')" '["completions", "logging", "prompts", "resources", "tools"]' "capabilities: tools, prompts, logging, resources and completions"
is "$(jb 'r["result"]["serverInfo"]["name"]')" runmyscript "serverInfo"
like "$(jb 'r["result"]["instructions"]')" "SCRIPT_OUTPUT" "instructions tell how to use the tools"
[ -f "$T/state/sessions/$SID/session.json" ]
ok $? "the session is on disk"
H=(-H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")

post '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${H[@]}"
is "$STATUS/$(wc -c <"$T/b")" "202/0" "notifications/initialized: 202, no body"
post '{"jsonrpc":"2.0","id":5,"result":{}}' "${H[@]}"
is "$STATUS" 202 "a response from the client: 202"
post '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nothing-in-flight"}}' "${H[@]}"
is "$STATUS" 202 "a cancel for no call in flight: 202"

for rev in 2025-03-26 2025-06-18; do
    post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$rev'","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}"
    is "$(jb 'r["result"]["protocolVersion"]')" "$rev" "initialize $rev: echoed"
done
OLD_SID=$(header Mcp-Session-Id)
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-01-01","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}"
is "$STATUS/$(jb 'r["result"]["protocolVersion"]')" "200/2025-11-25" "initialize with an unknown revision: our newest"
post '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' "${H[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "400/-32600" "initialize again on a live session: 400, -32600"

# A huge clientInfo does not grow session.json (MCP_CLIENT_FIELD_MAX).
post "$("$PYTHON3" -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"n" * 60000,"version":"1","extra":"e" * 1000}}}))')" "${A[@]}"
BIG_SID=$(header Mcp-Session-Id)
post '{"jsonrpc":"2.0","id":2,"method":"ping"}' -H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: $BIG_SID"
is "$STATUS" 200 "a 60 KB clientInfo: the session works"
[ "$(stat -c %s "$T/state/sessions/$BIG_SID/session.json")" -lt 1024 ]
ok $? "and session.json keeps 256 bytes of the name"

# --- requests
post '{"jsonrpc":"2.0","id":"p1","method":"ping"}' "${H[@]}"
is "$STATUS/$(jb 'r')" '200/{"jsonrpc": "2.0", "id": "p1", "result": {}}' "ping: {} with the id's type kept"
post '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}' "${H[@]}"
is "$(jb '[t["name"] for t in r["result"]["tools"]]')" '["run_code", "run_cell", "reset_kernel", "save_kernel", "run_my_script", "list_dir", "preview_file", "mount_file", "write_file", "persist_artifact"]' \
    "tools/list: the eight tools of serve, which has kernels (no test fixtures by default)"
is "$(jb 'all(t["description"] and t["inputSchema"]["type"] == "object" and t["outputSchema"]["type"] == "object" for t in r["result"]["tools"])')" \
    true "every tool has a description, an object inputSchema and an outputSchema"
is "$(jb '[t for t in r["result"]["tools"] if t["name"] == "run_code"][0]["inputSchema"]["required"]')" '["code"]' \
    "run_code requires code"
post '{"jsonrpc":"2.0","id":4,"method":"no_such/method"}' "${H[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "200/-32601" "unknown method: -32601 inside a 200"
post '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" "-32602" "unknown tool: -32602"
post '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" "-32602" "tools/call without a name: -32602"
post '{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"loud"}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" "-32602" "logging/setLevel with a bad level: -32602"

# --- transport rules
post '{not json' "${H[@]}"
is "$STATUS/$(jb 'r["error"]["code"], r["id"]')" '400/[-32700, null]' "invalid JSON: 400, -32700, id null"
post '{"hello":"world"}' "${H[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "400/-32600" "not JSON-RPC: 400, -32600"
post "$("$PYTHON3" -c 'print("[" * 100 + "]" * 100)')" "${H[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "400/-32700" "nesting past MCP_JSON_DEPTH (64): 400, -32700"
post '{"jsonrpc":"2.0","id":9,"method":"ping"}' -H "$ACCEPT_BOTH" -H "$AUTH"
is "$STATUS" 400 "no Mcp-Session-Id: 400"
post '{"jsonrpc":"2.0","id":9,"method":"ping"}' -H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef"
is "$STATUS/$(jb 'r["error"]["code"]')" "404/-32001" "unknown session: 404"
post '{"jsonrpc":"2.0","id":9,"method":"ping"}' -H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: ../../etc"
is "$STATUS" 404 "a malformed session id: 404"
post '{"jsonrpc":"2.0","id":9,"method":"ping"}' -H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 1999-01-01"
is "$STATUS" 400 "unsupported MCP-Protocol-Version: 400"
post '{"jsonrpc":"2.0","id":9,"method":"ping"}' -H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-03-26"
is "$STATUS" 200 "another supported MCP-Protocol-Version than negotiated: accepted"
post '{"jsonrpc":"2.0","id":9,"method":"ping"}' -H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "no MCP-Protocol-Version: accepted"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: text/plain' "${H[@]}" --data-binary '{}' "$BASE/mcp")
is "$STATUS" 415 "Content-Type text/plain: 415"
post '{"jsonrpc":"2.0","id":9,"method":"ping"}' -H "Accept: text/html" -H "$AUTH" -H "Mcp-Session-Id: $SID"
is "$STATUS" 406 "Accept without JSON or SSE: 406"
STATUS=$(curl -sS -o "$T/b" -D "$T/h" -w '%{http_code}' -H "Accept: text/event-stream" -H "$AUTH" -H "Mcp-Session-Id: $SID" "$BASE/mcp")
is "$STATUS" 405 "GET /mcp: 405 (no server stream)"
like "$(header Allow)" "POST" "405 says Allow"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X PUT -H "$AUTH" "$BASE/mcp")
is "$STATUS" 405 "PUT /mcp: 405"

# --- Origin, Host, token
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' "${H[@]}" -H "Origin: http://evil.example.com"
is "$STATUS" 403 "a foreign Origin: 403"
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' "${H[@]}" -H "Origin: http://127.0.0.1:$PORT"
is "$STATUS" 200 "Origin of the server's own origin: allowed"
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' "${H[@]}" -H "Origin: http://localhost:$PORT" -H "Host: localhost:$PORT"
is "$STATUS" 200 "Origin http://localhost:PORT to Host localhost:PORT: allowed"
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' "${H[@]}" -H "Origin: null"
is "$STATUS" 403 "Origin null: 403"
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' "${H[@]}" -H "Host: evil.example.com"
is "$STATUS" 403 "a foreign Host (DNS rebinding): 403"
like "$(cat $T/b)" "Host evil.example.com is not allowed here (the server's allowed_hosts)" \
    "the refusal names the host and the key that would allow it"
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' "${H[@]}" -H "Host: [::1]:$PORT"
is "$STATUS" 200 "Host [::1]:PORT: allowed"
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
is "$STATUS" 401 "no bearer token: 401"
like "$(cat $T/b)" "Unauthorized: a bearer token is required" "no token: the answer says one is required"
like "$(header WWW-Authenticate)" 'Bearer realm="runmyscript"' "401 says WWW-Authenticate: Bearer"
post '{"jsonrpc":"2.0","id":10,"method":"ping"}' -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "Authorization: Bearer wrong"
is "$STATUS" 401 "a wrong token: 401"
like "$(cat $T/b)" "Unauthorized: the bearer token is wrong" "a wrong token: the answer says it is wrong, not missing"
like "$(header WWW-Authenticate)" 'invalid_token' "a wrong token: error=invalid_token"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{"code":"print(1)"}' "$BASE/api/run")
is "$STATUS" 401 "/api/run without the token: 401"

# --- sizes
big=$("$PYTHON3" -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":11,"method":"ping","params":{"pad":"x"*100000}}))')
post "$big" "${H[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "413/-32000" "a body over request_bytes (64K): 413 from runmyscript"
"$PYTHON3" -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":11,"method":"ping","params":{"pad":"x"*1200000}}))' >"$T/huge.json"
post @"$T/huge.json" "${H[@]}"
is "$STATUS" 413 "a body over client_max_body_size (1m): 413 from nginx"

# --- batches (2025-03-26 only)
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}"
SID03=$(header Mcp-Session-Id)
H03=(-H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: $SID03" -H "MCP-Protocol-Version: 2025-03-26")
post '[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b2","method":"tools/list"}]' "${H03[@]}"
is "$STATUS/$(jb '[m["id"] for m in r]')" '200/["b1", "b2"]' "2025-03-26 batch: one response per request"
is "$(jb '"outputSchema" in r[1]["result"]["tools"][0] or "title" in r[1]["result"]["tools"][0]')" false \
    "2025-03-26 tools/list: no title or outputSchema"
post '[{"jsonrpc":"2.0","method":"notifications/initialized"}]' "${H03[@]}"
is "$STATUS" 202 "a batch of notifications only: 202"
post '[]' "${H03[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "400/-32600" "an empty batch: 400, -32600"
post '[{"jsonrpc":"2.0","id":"b1","method":"ping"}]' "${H[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "400/-32600" "a batch on a 2025-11-25 session: 400, -32600"
post '[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]' "${A[@]}"
is "$STATUS" 400 "initialize inside a batch: 400"
post "$("$PYTHON3" -c 'import json; print(json.dumps([{"jsonrpc":"2.0","id":i,"method":"ping"} for i in range(65)]))')" "${H03[@]}"
is "$STATUS/$(jb 'r["error"]["code"]')" "413/-32600" "a batch past MCP_BATCH_MAX (64): refused"
post "$("$PYTHON3" -c 'import json; print(json.dumps([{"jsonrpc":"2.0","id":i,"method":"ping"} for i in range(64)]))')" "${H03[@]}"
is "$(jb 'len(r)')" 64 "a batch of 64: 64 answers"

# --- run_code over SSE, progress and logging
CODE='import os, sys\nprint(\"hello from stdout\")\nprint(\"careful\", file=sys.stderr)\nopen(os.path.join(os.environ[\"SCRIPT_OUTPUT\"], \"result.txt\"), \"w\").write(\"forty-two\")\nopen(\"kept.txt\", \"w\").write(\"for later calls\")'
post '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"'"$CODE"'"},"_meta":{"progressToken":"tok-20"}}}' "${H[@]}"
is "$STATUS" 200 "tools/call: 200"
like "$(header Content-Type)" "text/event-stream" "tools/call: an SSE stream when the client accepts it"
like "$(header Cache-Control)" no-cache "SSE: Cache-Control: no-cache"
! grep -q '^id:' "$T/b"
ok $? "SSE: no event ids (nothing to resume)"
is "$(jb '[m["params"]["message"] for m in msgs if m.get("method") == "notifications/progress"]')" \
    '["queued", "resolving the environment", "running", "collecting artifacts", "done: ok"]' "progress: the phases"
is "$(jb 'all(m["params"]["progressToken"] == "tok-20" for m in msgs if m.get("method") == "notifications/progress")')" true \
    "progress: the request's token"
is "$(jb '[m["params"]["progress"] for m in msgs if m.get("method") == "notifications/progress"] == sorted(set(m["params"]["progress"] for m in msgs if m.get("method") == "notifications/progress"))')" \
    true "progress: strictly increasing"
is "$(jb 'sorted((m["params"]["level"], m["params"]["logger"], m["params"]["data"]) for m in msgs if m.get("method") == "notifications/message")')" \
    '[["info", "stdout", "hello from stdout"], ["warning", "stderr", "careful"]]' "logging: stdout at info, stderr at warning"
is "$(jb 'msgs.index(r) == len(msgs) - 1 and r["id"] == 20')" true "the result comes last"
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]["status"]')" '[false, "ok"]' "run_code: ok"
RUN=$(jb 'r["result"]["structuredContent"]["run_id"]')
is "$(jb '[c["type"] for c in r["result"]["content"]]')" '["text", "resource_link", "resource_link"]' \
    "content: a text block and resource links (the file and the zip)"
is "$(jb 'r["result"]["content"][1]["uri"]')" "$BASE/artifacts/$RUN/result.txt" "resource_link: the file's absolute URL"
like "$(jb 'r["result"]["content"][0]["text"]')" "hello from stdout" "the text block has the log"
"$PYTHON3" - "$T/b" "$T/state/runs/$RUN/result.json" "$BASE" <<'PY'
import json, sys
raw = open(sys.argv[1]).read()
msgs = [json.loads(l[5:]) for l in raw.splitlines() if l.startswith("data:")]
want = json.load(open(sys.argv[2]))
# What a client sees: no workdir, no zip, no advice (the operator's),
# absolute URLs.
del want["workdir"], want["zip"], want["advice"]
for a in want["artifacts"]:
    a["url"] = sys.argv[3] + a["url"]
want["zip_url"] = want["zip_url"] and sys.argv[3] + want["zip_url"]
# And the hint: this run printed, but left kept.txt outside SCRIPT_OUTPUT
# for the next call (tests/e2e/prims.sh has the others).
sc = dict(msgs[-1]["result"]["structuredContent"])
assert sc.pop("feedback").startswith("The script wrote 1 file outside SCRIPT_OUTPUT (kept.txt)")
assert sc == want
PY
ok $? "structuredContent is the result JSON (result.json) as a client sees it: no server paths, absolute URLs, the hint of a file kept outside SCRIPT_OUTPUT"
is "$(curl -sS "$BASE/artifacts/$RUN/result.txt")" "forty-two" "the artifact downloads through its URL"
curl -sS -o "$T/z.zip" "$BASE/artifacts/$RUN.zip"
is "$(unzip -p "$T/z.zip" result.txt)" "forty-two" "the zip downloads and holds the file"

post '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(open(\"kept.txt\").read())"}}}' "${H[@]}"
like "$(jb 'r["result"]["structuredContent"]["logs"]')" "for later calls" "the session's workspace persists between calls"

post '{"jsonrpc":"2.0","id":22,"method":"logging/setLevel","params":{"level":"warning"}}' "${H[@]}"
is "$(jb 'r["result"]')" "{}" "logging/setLevel: {}"
post '{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"'"$CODE"'"}}}' "${H[@]}"
is "$(jb '[m["params"]["level"] for m in msgs if m.get("method") == "notifications/message"]')" '["warning"]' \
    "after setLevel warning: only warnings and above"
is "$(jb 'len([m for m in msgs if m.get("method") == "notifications/progress"])')" 0 "no progressToken: no progress"

post '{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)"}}}' \
    -H "Accept: application/json" -H "$AUTH" -H "Mcp-Session-Id: $SID"
is "$(header Content-Type)/$(jb 'r["result"]["structuredContent"]["logs"]')" "application/json/1" \
    "Accept: application/json alone: one JSON body"

# --- failures are results
post '{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"raise SystemExit(\"boom\")"}}}' "${H[@]}"
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["exit_code"]')" \
    '[true, "error", 1]' "a failing script: isError with the structured result, not a JSON-RPC error"
post '{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import time\ntime.sleep(30)","timeout":1}}}' "${H[@]}"
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]["status"]')" '[true, "timeout"]' "timeout: 1 s honoured"
post '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)","timeout":100000}}}' "${H[@]}"
like "$(jb 'r["result"]["isError"], r["result"]["content"][0]["text"]')" "at most 60" "timeout above the server's: isError saying the maximum"
# (tests/e2e/files.sh fetches; these are refused before any traffic.)
post '{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)","files":[{"url":"ftp://127.0.0.1/y","mountPath":"y"}]}}}' "${H[@]}"
is "$(jb 'r["result"]["isError"], r["result"]["content"][0]["text"]')" \
    '[true, "run_code: files[0]: ftp://127.0.0.1/y: only http:// and https:// URLs can be fetched; nothing was run"]' \
    "files: a URL that is not http or https is an isError"
post '{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"run_code","arguments":{"cod":"print(1)"}}}' "${H[@]}"
like "$(jb 'r["result"]["isError"], r["result"]["content"][0]["text"]')" "unknown argument 'cod'" "a misspelt argument: isError naming it"
if [ -n "${WHEELHOUSE:-}" ] && ls "$WHEELHOUSE"/rms_alpha-1.0-*.whl >/dev/null 2>&1; then
    post '{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import rms_alpha\nprint(2)","requirements":["rms_alpha==1.0"]},"_meta":{"progressToken":35}}}' "${H[@]}"
    is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["requirements"]')" '["ok", ["rms-alpha==1.0"]]' \
        "requirements are installed (from the test wheelhouse)"
    like "$(jb '[m["params"]["message"] for m in msgs if m.get("method") == "notifications/progress"]')" "installing requirements" \
        "progress: the installing phase"
else
    skip "no test wheelhouse (make check builds it): the install case"
    skip "no test wheelhouse: the installing phase"
fi
post '{"jsonrpc":"2.0","id":36,"method":"tools/call","params":{"name":"run_code","arguments":{"code":""}}}' "${H[@]}"
like "$(jb 'r["result"]["isError"], r["result"]["content"][0]["text"]')" "empty" "an empty script: isError"
post "$("$PYTHON3" -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)","requirements":["pkg%d" % i for i in range(65)]}}}))')" "${H[@]}"
like "$(jb 'r["result"]["isError"], r["result"]["content"][0]["text"]')" "at most 64 requirements" "65 requirements (past TOOLS_MAX_REQUIREMENTS): isError"
post "$("$PYTHON3" -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":38,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)","requirements":["x" * 513]}}}))')" "${H[@]}"
like "$(jb 'r["result"]["isError"], r["result"]["content"][0]["text"]')" "requirements[0]" "a requirement of 513 bytes (past TOOLS_REQUIREMENT_MAX): isError"
post '{"jsonrpc":"2.0","id":39,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)","requirements":["--index-url=http://evil/"]}}}' "${H[@]}"
like "$(jb 'r["result"]["isError"], r["result"]["content"][0]["text"]')" "nothing was run" "an installer option as a requirement: refused before anything runs"
post "$("$PYTHON3" -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":39,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)","requirements":["no-such-package-%d" % i for i in range(64)]}}}))')" "${H[@]}"
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]["status"]')" '[true, "install_failed"]' \
    "64 requirements pass the checks; none is in the wheelhouse: install_failed, a result with isError"
is "$(jb 'r["result"]["structuredContent"]["duration_ms"], "the script did not run" in r["result"]["content"][0]["text"], " 0 ms" in r["result"]["content"][0]["text"]')" \
    '[null, true, false]' "a failed install has no time: duration_ms null, and the text says the script did not run (no 0 ms)"
# A script that fails: its error is the exception's line, in the text and the result.
post '{"jsonrpc":"2.0","id":391,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)\nundefined_name + 1"}}}' "${H[@]}"
is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["error"], "error: NameError: name '"'undefined_name'"' is not defined" in r["result"]["content"][0]["text"]')" \
    "[\"error\", \"NameError: name 'undefined_name' is not defined\", true]" \
    "a NameError: the result's error and the text say the exception's type and message"

# --- images: inline under image_inline_bytes (4K here), a link above
IMG='import base64, os, zlib, struct\ndef png(w, h):\n    raw = b\"\".join(b\"\\x00\" + os.urandom(w * 3) for _ in range(h))\n    c = lambda t, d: struct.pack(\">I\", len(d)) + t + d + struct.pack(\">I\", zlib.crc32(t + d))\n    return b\"\\x89PNG\\r\\n\\x1a\\n\" + c(b\"IHDR\", struct.pack(\">IIBBBBB\", w, h, 8, 2, 0, 0, 0)) + c(b\"IDAT\", zlib.compress(raw)) + c(b\"IEND\", b\"\")\nd = os.environ[\"SCRIPT_OUTPUT\"]\nopen(d + \"/small.png\", \"wb\").write(png(4, 4))\nopen(d + \"/big.png\", \"wb\").write(png(64, 64))'
post '{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"'"$IMG"'"}}}' "${H[@]}"
is "$(jb '[c.get("mimeType") for c in r["result"]["content"] if c["type"] == "image"]')" '["image/png"]' \
    "one image inline (the small one); the big one over image_inline_bytes is not"
is "$(jb 'sorted(c["name"] for c in r["result"]["content"] if c["type"] == "resource_link")')" \
    '["artifacts.zip", "big.png", "small.png"]' \
    "every artifact of this call has a link (result.txt, an earlier call's, is not this one's: list_dir shows it)"

# --- artifacts route
is "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/artifacts/0123456789abcdef0123456789abcdef/x")" 404 "an unknown run: 404"
is "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/artifacts/$RUN/nope.txt")" 404 "an unknown file: 404"
is "$(curl -sS -o /dev/null -w '%{http_code}' --path-as-is "$BASE/artifacts/$RUN/%2e%2e/result.json")" 404 "%2e%2e: 404"
is "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/_runmyscript/runs/$RUN/output/result.txt")" 404 \
    "the internal location is not reachable from outside"
is "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/artifacts/$RUN/$("$PYTHON3" -c 'print("a/" * 1100)')x")" 400 \
    "a request path past HTTP_PATH_MAX (2 KiB): 400"
post '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import os\nos.symlink(\"/etc/passwd\", os.environ[\"SCRIPT_OUTPUT\"] + \"/pw\")\nos.symlink(\"/etc/passwd\", \"escape\")\nopen(\"big.txt\", \"w\").write(\"line\\n\" * 5000)\nopen(\"bin.dat\", \"wb\").write(bytes(range(256)))"}}}' "${H[@]}"
RUN2=$(jb 'r["result"]["structuredContent"]["run_id"]')
is "$(jb '"pw" in [a["path"] for a in r["result"]["structuredContent"]["artifacts"]]')" false "a symlink in output/ is no artifact"
is "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/artifacts/$RUN2/pw")" 404 "and its URL is 404"

# --- list_dir and preview_file
post '{"jsonrpc":"2.0","id":49,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import os\nos.makedirs(\"many\")\nfor i in range(1005): open(\"many/f%04d\" % i, \"w\").close()"}}}' "${H[@]}"
post '{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"list_dir","arguments":{"dir_path":"many"}}}' "${H[@]}"
is "$(jb 'len(r["result"]["structuredContent"]["entries"]), r["result"]["structuredContent"]["truncated"]')" '[1000, true]' \
    "list_dir of 1005 files: TOOLS_LIST_DIR_MAX (1000) and truncated"
post '{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"list_dir","arguments":{"dir_path":"output"}}}' "${H[@]}"
is "$(jb '[e["name"] for e in r["result"]["structuredContent"]["entries"]]')" '["big.png", "pw", "result.txt", "small.png"]' \
    "list_dir output: the files"
is "$(jb '[e["type"] for e in r["result"]["structuredContent"]["entries"] if e["name"] == "pw"]')" '["symlink"]' \
    "list_dir shows a symlink as one"
post '{"jsonrpc":"2.0","id":51,"method":"tools/call","params":{"name":"list_dir","arguments":{}}}' "${H[@]}"
like "$(jb '[e["name"] for e in r["result"]["structuredContent"]["entries"]]')" '"kept.txt"' "list_dir with no path: the workspace"
for bad in .. /etc output/../.. ; do
    post '{"jsonrpc":"2.0","id":52,"method":"tools/call","params":{"name":"list_dir","arguments":{"dir_path":"'$bad'"}}}' "${H[@]}"
    is "$(jb 'r["result"]["isError"]')" true "list_dir $bad: refused"
done
post '{"jsonrpc":"2.0","id":53,"method":"tools/call","params":{"name":"preview_file","arguments":{"relative_path":"output/result.txt"}}}' "${H[@]}"
is "$(jb 'r["result"]["structuredContent"]["text"], r["result"]["structuredContent"]["truncated"]')" '["forty-two", false]' \
    "preview_file: the text"
post '{"jsonrpc":"2.0","id":54,"method":"tools/call","params":{"name":"preview_file","arguments":{"relative_path":"big.txt"}}}' "${H[@]}"
is "$(jb 'r["result"]["structuredContent"]["truncated"], len(r["result"]["structuredContent"]["text"])')" '[true, 8192]' \
    "preview_file of 25 KB: the first preview_bytes (8 KiB), truncated"
like "$(jb 'r["result"]["content"][0]["text"]')" "[truncated: this shows the first 8.0 KiB of 24.4 KiB" "with a note saying so"
post '{"jsonrpc":"2.0","id":55,"method":"tools/call","params":{"name":"preview_file","arguments":{"relative_path":"bin.dat"}}}' "${H[@]}"
is "$(jb 'r["result"]["structuredContent"]["binary"], r["result"]["structuredContent"]["text"]')" '[true, null]' "a binary file: not shown"
for bad in escape output/pw ../../../etc/passwd /etc/passwd; do
    post '{"jsonrpc":"2.0","id":56,"method":"tools/call","params":{"name":"preview_file","arguments":{"relative_path":"'$bad'"}}}' "${H[@]}"
    is "$(jb 'r["result"]["isError"], "root:" in r["result"]["content"][0]["text"]')" '[true, false]' "preview_file $bad: refused"
done

# --- run_my_script: the seed, stdlib variant (PIL arrives with the deps work)
seed_call 60 "$top_srcdir/tests/fixtures/scripts/seed-stdlib.py" >"$T/seed.json"
post "$(cat "$T/seed.json")" "${H[@]}"
is "$(jb 'r["result"]["structuredContent"]["status"], [a["path"] for a in r["result"]["structuredContent"]["artifacts"]][0]')" \
    '["ok", "flipped.png"]' "run_my_script with the seed input: flipped.png"
SEED_RUN=$(jb 'r["result"]["structuredContent"]["run_id"]')
[ -f "$T/state/runs/$SEED_RUN/output/flipped.png" ] && [ ! -e "$T/state/sessions/$SID/workspace/output/flipped.png" ]
ok $? "run_my_script runs in a fresh run directory, not the session"

# --- cancellation from another worker
post '{"jsonrpc":"2.0","id":70,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import time\nprint(\"started\", flush=True)\ntime.sleep(50)"},"_meta":{"progressToken":70}}}' "${H[@]}" &
CURL=$!
wait_for grep -q '"message":"running"' "$T/b"  # (this session logs warnings only)
ok $? "the long call is running"
KEY_FILES=$(ls "$T/state/sessions/$SID/calls" | wc -l)
is "$KEY_FILES" 1 "the call is recorded in the session (calls/)"
# ... with calls/.KEY.RUNID beside it naming its run, all of them (and the
# session's runs/RUNID) names of calls/.flight: a call makes and frees no
# inode of its own, and the run's start leaves no file either.
KEY_FILE=$(ls -d "$T/state/sessions/$SID/calls"/*)
KEY=$(basename "$KEY_FILE")
LRUN=$(ls -A "$T/state/sessions/$SID/calls" | sed -n "s/^\.$KEY\.//p")
echo "$LRUN" | grep -qxE '[0-9a-f]{32}'
ok $? "calls/.KEY.RUNID names the call's run"
[ -e "$T/state/sessions/$SID/runs/$LRUN" ] && [ -d "$T/state/runs/$LRUN" ]
ok $? "... which is the session's runs/RUNID and has its run directory"
FLIGHT="$T/state/sessions/$SID/calls/.flight"
[ "$KEY_FILE" -ef "$FLIGHT" ] && [ "$T/state/sessions/$SID/calls/.$KEY.$LRUN" -ef "$FLIGHT" ] &&
    [ "$T/state/sessions/$SID/runs/$LRUN" -ef "$FLIGHT" ] && [ ! -s "$FLIGHT" ]
ok $? "... all three names of calls/.flight (empty): no inode of the call's own"
is "$(ls -A "$T/state/runs/$LRUN" | grep -c started)" 0 "the run directory holds no start marker"
STATUS=$(curl -sS -o "$T/b2" -w '%{http_code}' -X POST -H 'Content-Type: application/json' "${H[@]}" \
    --data-binary '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":70,"reason":"test"}}' "$BASE/mcp")
is "$STATUS" 202 "notifications/cancelled: 202"
wait $CURL
ok $? "the cancelled call's stream ends"
is "$(jb '[m for m in msgs if m.get("id") == 70]')" "[]" "no result is sent for a cancelled call"
CRUN=$(ls -t "$T/state/runs" | grep -E '^[0-9a-f]{32}$' | head -1)
is "$(jget "$T/state/runs/$CRUN/result.json" 'r["status"]')" cancelled "the run was stopped (status cancelled)"
is "$(ls -A "$T/state/sessions/$SID/calls")" ".flight" "the call is no longer recorded (calls/KEY and its run's name gone)"
is "$CRUN" "$LRUN" "the run calls/.KEY.RUNID named is the one cancelled"
[ -e "$T/state/sessions/$SID/runs/$CRUN" ]
ok $? "its runs/RUNID stays"

# --- DELETE, and idle reaping
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X DELETE "${H[@]}" "$BASE/mcp")
is "$STATUS" 200 "DELETE: 200"
post '{"jsonrpc":"2.0","id":80,"method":"ping"}' "${H[@]}"
is "$STATUS" 404 "after DELETE: 404"
[ ! -e "$T/state/sessions/$SID" ]
ok $? "the session and its workspace are removed"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X DELETE "${H[@]}" "$BASE/mcp")
is "$STATUS" 404 "DELETE again: 404"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X DELETE -H "$AUTH" "$BASE/mcp")
is "$STATUS" 400 "DELETE without a session id: 400"

# An idle session (its clock set back past session_ttl, 1 h) goes with its runs.
post '{"jsonrpc":"2.0","id":81,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(3)"}}}' "${H03[@]}"
RUN03=$(jb 'r["result"]["structuredContent"]["run_id"]')
touch -d '2 hours ago' "$T/state/sessions/$SID03/session.json"
rm -f "$T/state/sessions/.reaped"
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}"
post '{"jsonrpc":"2.0","id":82,"method":"ping"}' "${H03[@]}"
is "$STATUS" 404 "a session idle past session_ttl is reaped: 404"
[ ! -e "$T/state/runs/$RUN03" ]
ok $? "and its runs are removed"

# --- /api/run (minimal JSON form)
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H "$AUTH" -H 'Content-Type: application/json' \
    -d '{"code":"import sys\nprint(sys.stdin.read())","input":"from input"}' "$BASE/api/run")
is "$STATUS/$(jb 'r["status"], r["logs"]')" '200/["ok", "from input\n"]' "/api/run: the result JSON"

# --- the server survives a worker's death
WPID=$(pgrep -P "$SERVE_PID" | head -1)
kill -KILL "$WPID"
wait_for bash -c "[ \$(pgrep -P $SERVE_PID | wc -l) -eq 4 ] && ! kill -0 $WPID 2>/dev/null"
ok $? "a killed worker is replaced"
is "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200 "and the server still answers"
! grep -qi "alert\|crit\|emerg" "$PREFIX/error.log"
ok $? "nginx logged no critical error"

# --- SIGHUP re-reads the configuration and replaces the workers
OLD_WORKERS=$(pgrep -P "$SERVE_PID" | sort | tr '\n' ' ')
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}" -H "Host: reloaded.test"
is "$STATUS" 403 "before SIGHUP: Host reloaded.test is not allowed"
printf 'allowed_hosts = localhost,127.0.0.1,[::1],reloaded.test\n' >>"$CONF"
kill -HUP "$SERVE_PID"
wait_for bash -c "[ \"\$(pgrep -P $SERVE_PID | sort | tr '\n' ' ')\" != '$OLD_WORKERS' ] && [ \$(pgrep -P $SERVE_PID | wc -l) -eq 4 ]"
ok $? "SIGHUP: the workers are replaced"
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}" -H "Host: reloaded.test"
is "$STATUS" 200 "after SIGHUP: the new allowed_hosts holds"

# --- SIGTERM drains: a call in flight finishes and is answered
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' "${A[@]}"
SID4=$(header Mcp-Session-Id)
post '{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import time\nprint(\"go\", flush=True)\ntime.sleep(2)\nprint(\"finished\")"}}}' \
    -H "$ACCEPT_BOTH" -H "$AUTH" -H "Mcp-Session-Id: $SID4" &
CURL=$!
wait_for grep -q '"data":"go"' "$T/b"
kill -TERM "$SERVE_PID"
wait $CURL
is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["logs"]')" '["ok", "go\nfinished\n"]' \
    "SIGTERM: the call in flight finishes and gets its result"
wait "$SERVE_PID"
is "$?" 0 "and serve exits 0"
STACK_PIDS=${STACK_PIDS/ $SERVE_PID/}
done_testing
