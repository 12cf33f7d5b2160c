#!/bin/bash
# What a client written for PRIMS finds here, through nginx: the prompts
# (prompts/list, prompts/get of python_programmer and analyze_file, in both
# revisions).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
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
    '[["task", true], ["mounted_files", false]]' "python_programmer(task, mounted_files?)"
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

done_testing
