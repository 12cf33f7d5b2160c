#!/bin/bash
# kernel.sh: kernels through a real nginx and `runmyscript serve`, as an
# agent and the page reach them: run_cell's names kept from cell to cell (a
# legacy session, a 2026-07-28 handle), the last expression's value, only
# the files a cell made, an error and a timeout that keep the names,
# reset_kernel, the end of the kernel with DELETE and delete_workspace,
# cells of one kernel one at a time (the second waits, or is busy past
# queue_wait), a long cell as a task, cancelling a cell
# (notifications/cancelled, tasks/cancel, a closed stream), /api/cell, its
# reset and its files (/api/cell/WID/file and its refusals), /healthz's
# kernels, two workspaces' kernels apart; the official
# clients v1 and v2 each drive a 20-cell session (sdk-cells.mjs); then the
# same program as CGI, which has no kernels and says so.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_CONF="task_after = 1s\nqueue_wait = 3s\nwrite_bytes = 1K"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

# cell CODE [ARGS]: run_cell in the legacy session $SID (ARGS: more
# arguments as a JSON object); the answer in $T/b.
ID=100
args_json() { # args_json CODE [ARGS] [WORKSPACE]
    "$PYTHON3" -c 'import json, sys
a = {"code": sys.argv[1]}
a.update(json.loads(sys.argv[2] or "{}"))
if sys.argv[3]: a["workspace"] = sys.argv[3]
print(json.dumps(a))' "$1" "${2:-}" "${3:-}"
}
cell() {
    ID=$((ID + 1))
    post '{"jsonrpc":"2.0","id":'$ID',"method":"tools/call","params":{"name":"run_cell","arguments":'"$(args_json "$1" "${2:-}")"'}}' \
        "${H[@]}"
}
# mcell CODE WID [ARGS [CURL ARGS...]]: run_cell in 2026-07-28 in the
# workspace WID ("": a new one).
mcell() {
    local code=$1 wid=$2 args=${3:-} ws=()
    shift 2
    [ $# -gt 0 ] && shift
    [ -n "$wid" ] && ws=(-H "Mcp-Param-Workspace: $wid")
    mpost tools/call '"name":"run_cell","arguments":'"$(args_json "$code" "$args" "$wid")" -H "Mcp-Name: run_cell" \
        "${ws[@]}" "$@"
}
# bg_cell ID CODE OUT: run_cell in $SID in the background, its answer in OUT
# (the caller waits for $!).
bg_cell() {
    curl -sS -N -o "$3" -X POST -H 'Content-Type: application/json' "${H[@]}" --data-binary \
        '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"run_cell","arguments":'"$(args_json "$2")"'}}' \
        "$BASE/mcp" &
}
sc() { jb 'r["result"]["structuredContent"]'"$1"; }
text() { jb '"\n".join(c["text"] for c in r["result"]["content"] if c["type"] == "text")'; }
live() { curl -sS "$BASE/healthz" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["kernels"]["live"])'; }
# wait_live N: until /healthz counts N live kernels (at most 20 s).
wait_live() { wait_for sh -c '[ "$(curl -sS "$1/healthz" | "$2" -c "import json, sys; print(json.load(sys.stdin)[\"kernels\"][\"live\"])")" = "$3" ]' - "$BASE" "$PYTHON3" "$1"; }

curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["kernels"]["on"], r["kernels"]["live"]')" '[true, 0]' "/healthz: serve has kernels, none live yet"

# --- a legacy session -------------------------------------------------------
init 2025-11-25
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${H[@]}"
is "$(jb '[t["name"] for t in r["result"]["tools"]][:3]')" '["run_code", "run_cell", "reset_kernel"]' \
    "tools/list: run_cell and reset_kernel beside run_code"
is "$(jb '"kernel" in [t for t in r["result"]["tools"] if t["name"] == "run_cell"][0]["outputSchema"]["required"]')" true \
    "run_cell's outputSchema requires kernel"

cell 'x = 41'
is "$(sc '["status"], r["result"]["structuredContent"]["kernel"], r["result"]["structuredContent"]["value"]')" \
    '["ok", {"state": "new", "cell": 1, "reason": null}, null]' "the first cell starts the kernel (new, cell 1); an assignment has no value"
is "$(live)" 1 "/healthz counts it"
cell 'x + 1'
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]')" '["42", {"state": "kept", "cell": 2, "reason": null}]' \
    "x = 41, then x + 1 gives 42 in the kept kernel (cell 2)"
like "$(text)" $'kernel: kept, cell 2\n' "the text names the kernel"
like "$(text)" $'--- value ---\n42\n' "and shows the value"
cell $'import statistics\ndef double(v):\n    return v * 2\nclass Box:\n    def __init__(self, v):\n        self.v = v'
is "$(sc '["status"], r["result"]["structuredContent"]["value"]')" '["ok", null]' "a cell defines an import, a function and a class"
cell 'fh = open("journal.txt", "w")'
cell 'fh.write("line\n")'
is "$(sc '["value"]')" 5 "an open file's handle is there in the next cell (fh.write gives 5)"
cell 'Box(double(x)).v, statistics.mean([1, 2, 3])'
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]["cell"]')" '["(82, 2)", 6]' \
    "the function, the class and the import of cell 3 work in cell 6"
cell 'None'
is "$(sc '["value"]')" null "None gives no value"
cell 'print("shown"); {"a": [1, 2]}'
is "$(sc '["logs"], r["result"]["structuredContent"]["value"]')" '["shown\n", "{'"'"'a'"'"': [1, 2]}"]' \
    "printed output is the log, the last expression the value"
# run_code (stateless, no kernel) shows its last expression the same way.
ID=$((ID + 1))
post '{"jsonrpc":"2.0","id":'$ID',"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(\"p\")\n6 * 7"}}}' \
    "${H[@]}"
is "$(sc '["status"], r["result"]["structuredContent"]["value"]')" '["ok", "42"]' "run_code's last expression is its value too"
like "$(text)" $'--- value ---\n42\n' "in its text as well"
ID=$((ID + 1))
post '{"jsonrpc":"2.0","id":'$ID',"method":"tools/call","params":{"name":"run_code","arguments":{"code":"x"}}}' "${H[@]}"
is "$(sc '["status"]')" error "run_code shares no names with the session's kernel (x is not defined there)"

# Only what a cell made: its new and changed files, not the earlier ones.
cell $'import os\nopen(os.path.join(os.environ["SCRIPT_OUTPUT"], "a.txt"), "w").write("a")'
is "$(sc '["artifacts"]' | "$PYTHON3" -c 'import json, sys; print([(a["path"], a["change"]) for a in json.load(sys.stdin)])')" \
    "[('a.txt', 'new')]" "a cell's new file is its artifact (change new)"
cell $'open(os.path.join(os.environ["SCRIPT_OUTPUT"], "b.txt"), "w").write("b")'
is "$(sc '["artifacts"]' | "$PYTHON3" -c 'import json, sys; print([(a["path"], a["change"]) for a in json.load(sys.stdin)])')" \
    "[('b.txt', 'new')]" "the next cell lists only its own file"
cell $'open(os.path.join(os.environ["SCRIPT_OUTPUT"], "a.txt"), "w").write("again")'
is "$(sc '["artifacts"]' | "$PYTHON3" -c 'import json, sys; print([(a["path"], a["change"]) for a in json.load(sys.stdin)])')" \
    "[('a.txt', 'changed')]" "a rewritten file is listed as changed"
cell 'x'
is "$(sc '["artifacts"]')" '[]' "a cell that writes nothing lists nothing"
like "$(text)" "no artifacts this call created or changed" "and says so"

# An error and a timeout keep the kernel and its names.
cell '1 / 0'
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]["status"]')" '[true, "error"]' "a failing cell: isError, status error"
like "$(sc '["logs"]')" ZeroDivisionError "with the traceback in the log"
is "$(sc '["error"]')" "ZeroDivisionError: division by zero" "and its error is the exception's type and message"
like "$(text)" "error: ZeroDivisionError: division by zero" "which the text says too"
cell 'x'
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]["state"]')" '["41", "kept"]' "the names survive the error"
cell $'import time\ntime.sleep(60)' '{"timeout": 1}'
is "$(sc '["status"]')" timeout "a cell past its timeout: status timeout"
like "$(sc '["logs"]')" KeyboardInterrupt "interrupted with KeyboardInterrupt"
cell 'x'
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]["state"]')" '["41", "kept"]' "and the kernel keeps its names"

# One cell at a time: a second one waits for the first, and sees its names.
bg_cell 300 $'import time\nprint("started", flush=True)\ntime.sleep(2)\nlate = 7' "$T/bg1"
FIRST=$!
wait_for grep -q started "$T/bg1" # its log line: it is running
cell 'late * 6'
wait $FIRST
is "$(sc '["value"]')" 42 "a cell sent while another runs waits for it, then sees its names"
# Past queue_wait (3 s) the waiting one is answered busy.
bg_cell 301 $'import time\nprint("started", flush=True)\ntime.sleep(6)' "$T/bg2"
FIRST=$!
wait_for grep -q started "$T/bg2"
cell 'x'
is "$(jb 'r["result"]["isError"], "structuredContent" in r["result"]')" '[true, false]' \
    "a cell waiting past queue_wait for the kernel: an isError result, nothing run"
like "$(text)" "busy" "saying why ($(jb '"\n".join(c["text"] for c in r["result"]["content"] if c["type"] == "text")[:160]'))"
wait $FIRST

# notifications/cancelled interrupts the cell; the kernel stays.
bg_cell 302 $'# cancel me\nimport time\nprint("started", flush=True)\ntime.sleep(60)' "$T/bg3"
CURL=$!
wait_for grep -q started "$T/bg3"
post '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":302}}' "${H[@]}" -o /dev/null
wait $CURL
crun=$(grep -l "cancel me" "$T"/state/runs/*/script.py 2>/dev/null | head -1)
crun=${crun%/script.py}
wait_for test -s "$crun/result.json"
is "$(jget "$crun/result.json" 'r["status"]')" cancelled "notifications/cancelled interrupts the cell (status cancelled)"
cell 'x'
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]["state"]')" '["41", "kept"]' "and the kernel keeps its names"

# save_kernel: a checkpoint, the kernel kept; reset_kernel to it.
post '{"jsonrpc":"2.0","id":310,"method":"tools/call","params":{"name":"save_kernel","arguments":{}}}' "${H[@]}"
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]["saved"], "x" in [n for n, t in r["result"]["structuredContent"]["names"]]')" \
    '[false, true, true]' "save_kernel: the kernel's names saved"
cell 'x = 0'
post '{"jsonrpc":"2.0","id":311,"method":"tools/call","params":{"name":"reset_kernel","arguments":{"to":"saved"}}}' "${H[@]}"
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]')" '[false, {"reset": true, "to": "saved"}]' \
    "reset_kernel to: saved"
cell 'x'
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]["state"]')" '["41", "restored"]' \
    "the next cell starts from the checkpoint: x is 41 again"
like "$(jb 'r["result"]["content"][0]["text"]')" "restored: " "... and its text says what came back"

# reset_kernel: the names go, the files stay.
post '{"jsonrpc":"2.0","id":303,"method":"tools/call","params":{"name":"reset_kernel","arguments":{}}}' "${H[@]}"
is "$(jb 'r["result"]["isError"], r["result"]["structuredContent"]')" '[false, {"reset": true, "to": "new"}]' "reset_kernel"
cell $'import os\n(os.path.exists("journal.txt"), "x" in globals())'
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]["state"], r["result"]["structuredContent"]["kernel"]["cell"]')" \
    '["(True, False)", "new", 1]' "after it: a new kernel (cell 1) without the names, with the files"
like "$(sc '["kernel"]["reason"]')" reset "its reason says the kernel was reset"

# DELETE /mcp ends the session's kernel.
before=$(live)
STATUS=$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE "${H[@]}" "$BASE/mcp")
is "$STATUS" 200 "DELETE /mcp"
wait_live $((before - 1))
ok $? "and its kernel ends (/healthz: $before live, then $(live))"

# --- 2026-07-28: a workspace handle ----------------------------------------
mcell 'y = "kept in a workspace"' ""
wid=$(sc '["workspace"]')
[[ "$wid" =~ ^[0-9a-f]{32}$ ]]
ok $? "run_cell without a workspace makes one ($wid)"
is "$(sc '["kernel"]["state"]')" new "with a new kernel"
mcell 'y' "$wid"
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]')" "[\"'kept in a workspace'\", {\"state\": \"kept\", \"cell\": 2, \"reason\": null}]" \
    "the handle's next cell sees the name"
mcell 'y' ""
like "$(sc '["logs"]')" NameError "a cell without the handle runs in another workspace's kernel"
other=$(sc '["workspace"]')
mcell $'open("/tmp/mine", "w").write("secret")\nopen("here.txt", "w").write("w")' "$wid"
mcell $'import os\n(os.path.exists("/tmp/mine"), os.path.exists("here.txt"))' "$other"
is "$(sc '["value"]')" '(False, False)' "two workspaces' kernels share neither /tmp nor files"

# A long cell becomes a task; tasks/cancel interrupts one.
CAPS=$TASKS_CAP mcell $'import time\ntime.sleep(3)\nz = 3\nz * 2' "$wid"
tid=$(jb 'r["result"]["taskId"]')
is "$(jb 'r["result"]["resultType"]')" task "a long cell with the tasks extension becomes a task"
task_poll "$tid"
is "$(jb 'r["result"]["status"], r["result"]["result"]["structuredContent"]["value"]')" '["completed", "6"]' \
    "tasks/get polls it to its end, with its value"
CAPS=$TASKS_CAP mcell $'import time\ntime.sleep(60)' "$wid"
tid=$(jb 'r["result"]["taskId"]')
CAPS=$TASKS_CAP mpost tasks/cancel '"taskId":"'"$tid"'"' -H "Mcp-Name: $tid"
task_poll "$tid"
is "$(jb 'r["result"]["status"]')" cancelled "tasks/cancel interrupts a cell's task"
mcell 'z' "$wid"
is "$(sc '["value"], r["result"]["structuredContent"]["kernel"]["state"]')" '["3", "kept"]' "and the kernel keeps its names"
# A closed stream cancels the cell.
mcell $'# closed stream\nimport time\ntime.sleep(60)' "$wid" "" --max-time 4 2>/dev/null
crun=""
for i in $(seq 100); do
    crun=$(grep -l "closed stream" "$T"/state/runs/*/script.py 2>/dev/null | head -1)
    [ -n "$crun" ] && [ -s "${crun%/script.py}/result.json" ] && break
    sleep 0.2
done
is "$(jget "${crun%/script.py}/result.json" 'r["status"]' 2>/dev/null)" cancelled "a closed 2026-07-28 stream cancels the cell"
mcell 'z' "$wid"
is "$(sc '["value"]')" 3 "and the kernel keeps its names"

# reset_kernel needs the handle; delete_workspace ends the kernel.
mpost tools/call '"name":"reset_kernel","arguments":{}' -H "Mcp-Name: reset_kernel"
is "$(jb 'r["result"]["isError"]')" true "reset_kernel without a handle: a tool error"
before=$(live)
mpost tools/call '"name":"delete_workspace","arguments":{"workspace":"'"$wid"'"}' -H "Mcp-Name: delete_workspace" \
    -H "Mcp-Param-Workspace: $wid"
is "$(jb 'r["result"]["isError"]')" false "delete_workspace"
wait_live $((before - 1))
ok $? "ends its kernel"
mcell 'z' "$wid"
like "$(text)" "unknown workspace" "and a cell in it is refused"

# --- display: a DataFrame, a figure, a PIL image; packages added, a restart ---
if ls "$WHEELHOUSE"/pandas-*.whl "$WHEELHOUSE"/matplotlib-*.whl "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1; then
    mcell $'import pandas as pd\nimport matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nfrom PIL import Image\ndf = pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]})' ""
    dw=$(sc '["workspace"]')
    is "$(sc '["status"], r["result"]["structuredContent"]["kernel"]["state"]')" '["ok", "new"]' \
        "a cell importing pandas, matplotlib and PIL starts a kernel with them ($(sc '["logs"][-300:]'))"
    mcell 'df.describe()' "$dw"
    like "$(sc '["value"]')" $'count  3.0  3.0\nmean   2.0  5.0' "a DataFrame's value is as pandas prints it"
    mcell $'plt.plot([1, 3, 2])\nplt.title("a figure left open")' "$dw"
    is "$(sc '["artifacts"]' | "$PYTHON3" -c 'import json, sys; print([(a["mime"], a["change"]) for a in json.load(sys.stdin)])')" \
        "[('image/png', 'new')]" "a figure left open comes back as a PNG artifact"
    is "$(jb '[c["mimeType"] for c in r["result"]["content"] if c["type"] == "image"]')" '["image/png"]' "and an inline image"
    mcell 'Image.new("RGB", (8, 8), "red")' "$dw"
    is "$(sc '["value"], [a["mime"] for a in r["result"]["structuredContent"]["artifacts"]]')" '[null, ["image/png"]]' \
        "a PIL image as the last value: a PNG artifact, no text value"
    mcell 'len(df)' "$dw"
    is "$(sc '["value"], r["result"]["structuredContent"]["artifacts"]')" '["3", []]' \
        "the next cell lists none of the earlier images"
    # df.plot() in a kernel made for pandas alone: no import names
    # matplotlib, the call does; the kernel gets it and the plot is drawn.
    mcell $'import pandas as pd\nsales = pd.DataFrame({"month": [1, 2, 3], "sales": [3, 5, 4]})' ""
    dp=$(sc '["workspace"]')
    is "$(sc '["status"], r["result"]["structuredContent"]["kernel"]["state"]')" '["ok", "new"]' "a kernel made for pandas"
    mcell 'sales.plot(x="month", y="sales")' "$dp"
    is "$(sc '["status"], [a["mime"] for a in r["result"]["structuredContent"]["artifacts"]]')" '["ok", ["image/png"]]' \
        "df.plot() in it draws: matplotlib is found from the call ($(sc '["logs"][-300:]'))"
    like "$(sc '["kernel"]["reason"]')" "matplotlib" "the kernel says matplotlib was added ($(sc '["kernel"]'))"
    if ls "$WHEELHOUSE"/rms_alpha-*.whl "$WHEELHOUSE"/rms_ver-1.0-*.whl >/dev/null 2>&1; then
        mcell $'import rms_alpha\nlen(df)' "$dw"
        is "$(sc '["status"], r["result"]["structuredContent"]["kernel"]["state"], r["result"]["structuredContent"]["value"]')" \
            '["ok", "kept", "3"]' "a cell importing a package the kernel's environment lacks: added in place, the DataFrame kept"
        is "$(sc '["kernel"]["reason"]')" "added rms-alpha==1.0 from the package store to the running kernel, which kept its state" \
            "the reason says what was added"
        like "$(jb '[c["text"] for c in r["result"]["content"] if c["type"] == "text"][0]')" "kernel: kept" "(the text says kept)"
        mcell $'import rms_ver\nrms_ver.__version__' "$dw"
        is "$(sc '["kernel"]["state"], r["result"]["structuredContent"]["value"]')" "[\"kept\", \"'2.0'\"]" \
            "another package added in place"
        mcell $'# /// script\n# dependencies = ["rms-ver==1.0"]\n# ///\nimport rms_ver\nrms_ver.__version__' "$dw"
        is "$(sc '["kernel"]["state"], r["result"]["structuredContent"]["value"]')" "[\"restarted\", \"'1.0'\"]" \
            "a PEP 723 pin of another version of a package the kernel has: the kernel restarts with it"
        like "$(sc '["kernel"]["reason"]')" "rms-ver is 2.0 in the kernel, and the cell needs 1.0" "the reason says which"
        mcell 'df' "$dw"
        like "$(sc '["logs"]')" NameError "the names before the restart are gone"
    else
        skip "a package added to the live kernel: no rms_alpha or rms_ver wheel in the test wheelhouse"
    fi
else
    skip "a DataFrame, a figure and a PIL image as values: no pandas, matplotlib or pillow wheel in the test wheelhouse"
fi

# --- /api/cell: the page's notebook -----------------------------------------
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"code": "n = 41"}' "$BASE/api/cell")
nb=$(jb 'r["workspace"]')
is "$STATUS/$(jb 'r["status"], r["kernel"]["state"]')" '200/["ok", "new"]' "POST /api/cell: a new notebook's first cell"
STATUS=$(curl -sS -N -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
    -d '{"code": "n + 1"}' "$BASE/api/cell/$nb")
head -2 "$T/b" >"$T/first"
is "$(head -1 "$T/first")" "event: workspace" "POST /api/cell/WID over SSE: the workspace event first"
is "$(jb 'r["value"], r["kernel"]["cell"], r["workspace"]')" '["42", 2, "'"$nb"'"]' "then the result: its value, the kernel, the workspace"
grep -q '^event: run' "$T/b"
ok $? "and the run event with its cancel URL, as /api/run's"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"code": "1", "input": "x"}' "$BASE/api/cell/$nb")
is "$STATUS" 400 "a cell with an input: 400"
like "$(jb 'r["error"]')" "unknown member" "naming the member ($(jb 'r["error"]'))"
mpost tools/call '"name":"run_cell","arguments":{"code":"n","workspace":"'"$nb"'"}' -H "Mcp-Name: run_cell" -H "Mcp-Param-Workspace: $nb"
is "$(sc '["value"]')" 41 "the page's notebook is a workspace an agent can go on in (run_cell with its id)"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST "$BASE/api/cell/$nb/save")
is "$STATUS/$(jb 'r["saved"], [n for n, t in r["names"]]')" '200/[true, ["n"]]' "POST /api/cell/WID/save: the kernel's names saved"
like "$(jb 'r["reason"]')" "names were saved" "... with the summary"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST "$BASE/api/cell/0123456789abcdef0123456789abcdef/save")
is "$STATUS" 404 "the save of an unknown notebook: 404"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST "$BASE/api/cell/$nb/reset")
is "$STATUS/$(jb 'r')" '200/{"reset": true}' "POST /api/cell/WID/reset"
curl -sS -o "$T/b" -H 'Content-Type: application/json' -d '{"code": "n"}' "$BASE/api/cell/$nb"
is "$(jb 'r["status"], r["kernel"]["state"]')" '["error", "new"]' "then the names are gone (NameError in a new kernel)"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"code": "1"}' \
    "$BASE/api/cell/0123456789abcdef0123456789abcdef")
is "$STATUS" 404 "an unknown notebook: 404"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST "$BASE/api/cell/0123456789abcdef0123456789abcdef/reset")
is "$STATUS" 404 "its reset: 404"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST "$BASE/api/cell/$nb/nothing")
is "$STATUS" 404 "another path under it: 404"
before=$(ls "$T/state/workspaces" | grep -c .)
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"code": ""}' "$BASE/api/cell")
is "$STATUS/$(ls "$T/state/workspaces" | grep -c .)" "400/$before" "an empty first cell: 400, and no workspace kept for it"

# A cell that fails for want of an optional package: the result names it.
curl -sS -o "$T/b" -H 'Content-Type: application/json' \
    -d '{"code": "raise ImportError(\"Missing optional dependency '"'openpyxl'"'.  Use pip or conda to install openpyxl.\")"}' \
    "$BASE/api/cell/$nb"
is "$(jb 'r["status"], r["error"]')" \
    '["error", "the optional package openpyxl is missing: add openpyxl to requirements (or import openpyxl in the script)"]' \
    "pandas' ImportError for an optional package: the result says what to add to requirements"
# A cell that fails: its error is the exception's line; one whose package
# cannot be installed never ran, and has no time.
curl -sS -o "$T/b" -H 'Content-Type: application/json' -d '{"code": "x = 1\nnot_defined_here * 2"}' "$BASE/api/cell/$nb"
is "$(jb 'r["status"], r["error"]')" "[\"error\", \"NameError: name 'not_defined_here' is not defined\"]" \
    "a NameError in a cell: the result's error is the exception's type and message"
curl -sS -o "$T/b" -H 'Content-Type: application/json' -d '{"code": "import rms_no_such_module_zz"}' "$BASE/api/cell/$nb"
is "$(jb 'r["status"], r["duration_ms"]')" '["install_failed", null]' \
    "a cell whose package is in no source never ran: duration_ms null, not 0"

# --- /api/cell/WID/file: a file of the person's into the notebook ----------
# upload ARGS...: POSTs curl's ARGS to /api/cell/$nb/file (or the URL last
# in ARGS); status in $STATUS, body in $T/b.
upload() { STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' "$@"); }
printf 'city,sales\nLyon,3\nOslo,4\n' >"$T/sales.csv"
upload -F "file=@$T/sales.csv" "$BASE/api/cell/$nb/file"
is "$STATUS/$(jb 'r["mounted_as"], r["bytes"], r["mime"], r["workspace"]')" \
    '200/["mounts/sales.csv", 25, "text/csv", "'"$nb"'"]' "POST /api/cell/WID/file: the file under its own name in mounts/"
curl -sS -o "$T/b" -H 'Content-Type: application/json' \
    -d '{"code": "import csv\nsum(int(r[\"sales\"]) for r in csv.DictReader(open(\"mounts/sales.csv\")))"}' "$BASE/api/cell/$nb"
is "$(jb 'r["status"], r["value"]')" '["ok", "7"]' "a cell of the notebook reads it"
upload -F "file=@$T/sales.csv" -F path=data/q1.csv "$BASE/api/cell/$nb/file"
is "$STATUS/$(jb 'r["mounted_as"]')" '200/mounts/data/q1.csv' "with a path field, where the person says"
cmp -s "$T/sales.csv" "$T/state/workspaces/$nb/workspace/mounts/data/q1.csv"
ok $? "the bytes as sent"
upload -F "file=@$T/sales.csv" -F path=../up.csv "$BASE/api/cell/$nb/file"
is "$STATUS" 400 "a path with '..': 400"
like "$(jb 'r["error"]')" "the path '../up.csv' is not inside mounts/: give a relative path such as 'data/sales.csv'" \
    "saying what to change"
upload -F "file=@$T/sales.csv;filename=../../x.csv" "$BASE/api/cell/$nb/file"
is "$STATUS" 400 "a file name with '..': 400"
upload -F "file=@$T/sales.csv" -F path=/tmp/abs.csv "$BASE/api/cell/$nb/file"
is "$STATUS" 400 "an absolute path: 400"
mkdir -p "$T/elsewhere"
ln -s "$T/elsewhere" "$T/state/workspaces/$nb/workspace/mounts/esc"
upload -F "file=@$T/sales.csv" -F path=esc/x.csv "$BASE/api/cell/$nb/file"
is "$STATUS/$(ls "$T/elsewhere" | grep -c .)" 400/0 "a symlink on the way (a cell's, say) is not followed: 400, nothing written"
rm -f "$T/state/workspaces/$nb/workspace/mounts/esc"
head -c 1025 /dev/zero >"$T/big.bin"
upload -F "file=@$T/big.bin" "$BASE/api/cell/$nb/file"
is "$STATUS" 413 "a file past write_bytes: 413"
like "$(jb 'r["error"]')" "larger than write_bytes (1.0 KiB); nothing was written" "naming the key"
[ ! -e "$T/state/workspaces/$nb/workspace/mounts/big.bin" ]
ok $? "and nothing is left of it"
head -c 1024 /dev/zero >"$T/fit.bin"
upload -F "file=@$T/fit.bin" "$BASE/api/cell/$nb/file"
is "$STATUS/$(jb 'r["bytes"]')" 200/1024 "one of exactly write_bytes is written"
upload -F "other=@$T/sales.csv" "$BASE/api/cell/$nb/file"
is "$STATUS/$(jb 'r["error"]')" '400/unknown field "other" (known: file, path)' "an unknown field: 400"
upload -F path=a.csv "$BASE/api/cell/$nb/file"
is "$STATUS/$(jb 'r["error"]')" '400/no file: send it in a part named "file"' "no file part: 400"
upload -H 'Content-Type: application/json' -d '{"path": "a.csv"}' "$BASE/api/cell/$nb/file"
is "$STATUS" 415 "not a multipart form: 415"
upload "$BASE/api/cell/$nb/file"
is "$STATUS" 405 "GET: 405"
upload -F "file=@$T/sales.csv" "$BASE/api/cell/0123456789abcdef0123456789abcdef/file"
is "$STATUS" 404 "an unknown notebook: 404"
upload -F "file=@$T/sales.csv" "$BASE/api/cell/file"
nb2=$(jb 'r["workspace"]')
is "$STATUS/$(jb 'r["mounted_as"]')" '200/mounts/sales.csv' "POST /api/cell/file: a file before any cell"
[[ "$nb2" =~ ^[0-9a-f]{32}$ && "$nb2" != "$nb" ]] && [ -f "$T/state/workspaces/$nb2/workspace/mounts/sales.csv" ]
ok $? "into a new notebook's workspace, named in the answer"
curl -sS -o "$T/b" -H 'Content-Type: application/json' -d '{"code": "open(\"mounts/sales.csv\").read().count(\"\\n\")"}' \
    "$BASE/api/cell/$nb2"
is "$(jb 'r["status"], r["value"]')" '["ok", "3"]' "whose first cell reads it"
before=$(ls "$T/state/workspaces" | grep -c .)
upload -F "file=@$T/big.bin" "$BASE/api/cell/file"
is "$STATUS/$(ls "$T/state/workspaces" | grep -c .)" "413/$before" "a refused first file keeps no workspace"

# --- the official clients: a 20-cell session each ------------------------------
MODULES=$top_srcdir/tests/node_modules
if [ -d "$MODULES/@modelcontextprotocol/client" ] && [ -d "$MODULES/@modelcontextprotocol/sdk" ]; then
    NODE=$MODULES/.bin/node
    [ -x "$NODE" ] || NODE=node
    MCP_URL=$BASE/mcp "$NODE" "$top_srcdir/tests/e2e/sdk-cells.mjs" >"$T/sdk.tap" 2>&1
    tap_merge "sdk " "$T/sdk.tap"
    grep -q '^ok ' "$T/sdk.tap"
    ok $? "the clients' session ran ($(grep -c '^ok ' "$T/sdk.tap") passed)"
else
    skip "the official clients' 20-cell sessions: the npm packages are not installed in tests/"
fi

# --- CGI: no kernels, and it says so -------------------------------------------
stack_stop
stack_start cgi || { ok 1 "the CGI server starts"; done_testing; exit 1; }
curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["mode"], r["kernels"]["on"]')" '["cgi", false]' "CGI: /healthz says there are no kernels"
init 2025-11-25
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${H[@]}"
is "$(jb '[t["name"] for t in r["result"]["tools"] if t["name"] in ("run_cell", "reset_kernel", "save_kernel")]')" '[]' \
    "CGI: run_cell, reset_kernel and save_kernel are not listed"
cell 'x = 1'
is "$(jb 'r["result"]["isError"], "structuredContent" in r["result"]')" '[true, false]' "CGI: a run_cell call is a tool error"
like "$(text)" "runmyscript serve" "saying that kernels need runmyscript serve"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"code": "1"}' "$BASE/api/cell")
is "$STATUS" 501 "CGI: /api/cell is 501"
like "$(jb 'r["error"]')" "CGI" "saying why ($(jb 'r["error"][:100]'))"
done_testing
