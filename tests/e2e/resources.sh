#!/bin/bash
# A workspace's files as MCP resources through a real nginx in front of
# serve, in both revisions: resources/list, resources/read (text, and an
# image as a base64 blob), resources/templates/list, the guards (a symbolic
# link, a file with two links, a path out of the workspace, another
# session's workspace: -32602 with data.uri), completion/complete of a path,
# and resources/subscribe: a run that changes a followed file tells it on
# its stream (notifications/resources/updated), one that does not says
# nothing, and after resources/unsubscribe nothing either.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"

stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

# --- the legacy revision: a session's own workspace
post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' -H "$ACCEPT_BOTH"
is "$(jb '[r["result"]["capabilities"]["resources"]["subscribe"], "completions" in r["result"]["capabilities"]]')" \
    '[true, true]' "initialize offers resources (with subscribe) and completions"
SID=$(header Mcp-Session-Id)
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
PNG=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==
code="import base64, os\\nout = os.environ['SCRIPT_OUTPUT']\\nopen(out + '/a.txt', 'w').write('hello')\\nopen(out + '/dot.png', 'wb').write(base64.b64decode('$PNG'))\\nopen(out + '/b.txt', 'w').write('two links')\\nos.link(out + '/b.txt', out + '/b2.txt')\\nos.symlink('/etc/passwd', out + '/link')"
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"'"$code"'"}}}' "${H[@]}"
is "$(jb 'r["result"]["structuredContent"]["status"]')" ok "a run leaves files in the workspace"

post '{"jsonrpc":"2.0","id":3,"method":"resources/list"}' "${H[@]}"
is "$(jb 'sorted(x["uri"] for x in r["result"]["resources"] if x["uri"].startswith("workspace://"))')" \
    "[\"workspace://$SID/output/a.txt\", \"workspace://$SID/output/dot.png\"]" \
    "resources/list: the workspace's files, without the symbolic link or the files with two links"
is "$(jb 'sorted([x["name"], x["mimeType"]] for x in r["result"]["resources"] if x["uri"].startswith("workspace://"))')" \
    '[["output/a.txt", "text/plain"], ["output/dot.png", "image/png"]]' "each with its name and type"

post '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"workspace://'"$SID"'/output/a.txt"}}' "${H[@]}"
is "$(jb '[r["result"]["contents"][0][k] for k in ("uri", "mimeType", "text")]')" \
    "[\"workspace://$SID/output/a.txt\", \"text/plain\", \"hello\"]" "resources/read: a text file"
post '{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"workspace://'"$SID"'/output/dot.png"}}' "${H[@]}"
is "$(jb '[r["result"]["contents"][0]["mimeType"], r["result"]["contents"][0]["blob"], "text" in r["result"]["contents"][0]]')" \
    "[\"image/png\", \"$PNG\", false]" "resources/read: an image as a base64 blob"

for rel in output/link output/b.txt output/../../etc/passwd output/none.txt; do
    post '{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"workspace://'"$SID"'/'"$rel"'"}}' "${H[@]}"
    is "$(jb '[r["error"]["code"], r["error"]["data"]["uri"]]')" "[-32602, \"workspace://$SID/$rel\"]" \
        "resources/read of $rel: -32602, not found, with data.uri"
done
OTHER=0123456789abcdef0123456789abcdef
post '{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"workspace://'"$OTHER"'/output/a.txt"}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" -32602 "resources/read of another session's workspace: -32602"

post '{"jsonrpc":"2.0","id":8,"method":"resources/templates/list"}' "${H[@]}"
is "$(jb '[t["uriTemplate"] for t in r["result"]["resourceTemplates"]]')" '["workspace://{workspace}/{+path}"]' \
    "resources/templates/list: the workspace's template"
post '{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"workspace://{workspace}/{+path}"},"argument":{"name":"path","value":"output/d"}}}' "${H[@]}"
is "$(jb 'r["result"]["completion"]["values"], r["result"]["completion"]["hasMore"]')" '[["output/dot.png"], false]' \
    "completion/complete: a path of the workspace"
post '{"jsonrpc":"2.0","id":10,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"workspace://{workspace}/{+path}"},"argument":{"name":"workspace","value":""}}}' "${H[@]}"
is "$(jb 'r["result"]["completion"]["values"]')" "[\"$SID\"]" "completion/complete: the session's own workspace"

post '{"jsonrpc":"2.0","id":16,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"python_programmer"},"argument":{"name":"requirements","value":"sk"}}}' "${H[@]}"
is "$(jb '[v for v in r["result"]["completion"]["values"] if v.startswith("scikit-")][:3]')" \
    '["scikit-bio", "scikit-image", "scikit-learn"]' "completion/complete: a package the import map knows (by its import name too)"
post '{"jsonrpc":"2.0","id":17,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"file:///x"},"argument":{"name":"path","value":""}}}' "${H[@]}"
is "$(jb 'r["error"]["code"]')" -32602 "completion/complete of an unknown template: -32602"

# --- subscriptions: told on the stream of the run that changed the file
post '{"jsonrpc":"2.0","id":11,"method":"resources/subscribe","params":{"uri":"workspace://'"$SID"'/output/a.txt"}}' "${H[@]}"
is "$(jb 'r["result"]')" '{}' "resources/subscribe"
post '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)"}}}' "${H[@]}"
is "$(jb '[m for m in msgs if m.get("method") == "notifications/resources/updated"]')" '[]' \
    "a run that leaves the file alone: no update"
post '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/a.txt\", \"w\").write(\"changed\")"}}}' "${H[@]}"
is "$(jb '[m["params"]["uri"] for m in msgs if m.get("method") == "notifications/resources/updated"]')" \
    "[\"workspace://$SID/output/a.txt\"]" "a run that rewrites it: notifications/resources/updated"
is "$(jb 'msgs[-1]["result"]["structuredContent"]["status"]')" ok "... before the call's result"
post '{"jsonrpc":"2.0","id":14,"method":"resources/unsubscribe","params":{"uri":"workspace://'"$SID"'/output/a.txt"}}' "${H[@]}"
post '{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/a.txt\", \"w\").write(\"again\")"}}}' "${H[@]}"
is "$(jb '[m for m in msgs if m.get("method") == "notifications/resources/updated"]')" '[]' \
    "after resources/unsubscribe: no update"

# --- 2026-07-28: the URI holds the workspace handle
mpost tools/call '"name":"run_code","arguments":{"code":"import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/m.txt\", \"w\").write(\"modern\")"}' \
    -H "Mcp-Name: run_code"
WID=$(jb 'r["result"]["structuredContent"]["workspace"]')
[ -n "$WID" ] && [ "$WID" != None ]
ok $? "2026-07-28: run_code makes a workspace"
U="workspace://$WID/output/m.txt"
mpost resources/read '"uri":"'"$U"'"' -H "Mcp-Name: $U"
is "$(jb '[r["result"]["contents"][0]["text"], r["result"]["cacheScope"], r["result"]["ttlMs"]]')" '["modern", "private", 0]' \
    "2026-07-28: resources/read of the workspace's file, private and not to be kept"
mpost resources/read '"uri":"workspace://'"$OTHER"'/output/m.txt"' -H "Mcp-Name: workspace://$OTHER/output/m.txt"
is "$(jb '[r["error"]["code"], r["error"]["data"]["uri"]]')" "[-32602, \"workspace://$OTHER/output/m.txt\"]" \
    "2026-07-28: an unknown workspace: -32602"
mpost resources/read '"uri":"'"$U"'"' -H "Mcp-Name: workspace://$WID/output/other"
is "$(jb 'r["error"]["code"]')" -32020 "2026-07-28: Mcp-Name must mirror the uri"
mpost completion/complete '"ref":{"type":"ref/resource","uri":"workspace://{workspace}/{+path}"},"argument":{"name":"path","value":"out"},"context":{"arguments":{"workspace":"'"$WID"'"}}'
is "$(jb 'r["result"]["completion"]["values"]')" '["output/m.txt"]' "2026-07-28: completion of a path in the named workspace"
mpost resources/list ''
is "$(jb '[x for x in r["result"]["resources"] if x["uri"].startswith("workspace://")], r["result"]["cacheScope"]')" '[[], "public"]' \
    "2026-07-28: resources/list names no workspace's files (handles are never listed)"

# --- 2026-07-28: subscriptions/listen follows a workspace's file
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
curl -sS -N -o "$T/listen" -X POST -H 'Content-Type: application/json' -H "$ACCEPT_BOTH" \
    -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: subscriptions/listen" --max-time 30 \
    --data-binary '{"jsonrpc":"2.0","id":77,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["'"$U"'","workspace://'"$OTHER"'/x"]},'"$meta"'}}' \
    "$BASE/mcp" &
LISTEN=$!
wait_for grep -q acknowledged "$T/listen"
listen_msgs() { # listen_msgs EXPR: EXPR on the messages of the listen stream so far (msgs)
    "$PYTHON3" -c 'import json, sys
msgs = [json.loads(l[5:]) for l in open(sys.argv[1]) if l.startswith("data:") and l[5:].strip()]
print(json.dumps(eval(sys.argv[2])))' "$T/listen" "$1"
}
is "$(listen_msgs '[msgs[0]["method"], msgs[0]["params"]["notifications"]]')" \
    "[\"notifications/subscriptions/acknowledged\", {\"resourceSubscriptions\": [\"$U\"]}]" \
    "2026-07-28: subscriptions/listen agrees to the file of a live workspace, and only to it"
sleep 1 # past the worker's first look: the stream process follows it from here on
mpost tools/call '"name":"run_code","arguments":{"workspace":"'"$WID"'","code":"import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/m.txt\", \"w\").write(\"changed\")"}' \
    -H "Mcp-Name: run_code" -H "Mcp-Param-Workspace: $WID"
is "$(jb 'r["result"]["structuredContent"]["status"]')" ok "2026-07-28: a run in the workspace changes the file"
wait_for grep -q resources/updated "$T/listen"
is "$(listen_msgs '[[m["params"]["uri"], m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]] for m in msgs if m.get("method") == "notifications/resources/updated"]')" \
    "[[\"$U\", 77]]" "2026-07-28: notifications/resources/updated on the listen stream, with its subscription id"
kill "$LISTEN" 2>/dev/null
wait "$LISTEN" 2>/dev/null
done_testing
