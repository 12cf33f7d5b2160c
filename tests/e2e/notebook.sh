#!/bin/bash
# notebook.sh: Jupyter notebooks in and out, through a real nginx and
# `runmyscript serve`. In: a notebook whose third code cell fails
# (tests/fixtures/notebooks/third-fails.ipynb), run by MCP's run_code and
# run_my_script (notebook: true), by /api/run (the field notebook, as the
# page sends it) and by `runmyscript run NAME.ipynb`: the cells before it
# ran with their outputs, the failing one holds its error and traceback,
# the one after it never ran, the status is error and the error names the
# cell; the executed notebook comes back as an artifact, validates against
# nbformat's schema and converts with `jupyter nbconvert --to html`. Bad
# JSON and JSON that is no notebook are refused with the reason. Out: a
# workspace's cells (run_cell; text, a value, an image, an error) as
# output/notebook.ipynb, served by list_dir, /artifacts/ with the
# workspace's header and as the resource workspace://ID/output/notebook.ipynb,
# valid and converted the same way.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
NB=$top_srcdir/tests/fixtures/notebooks/third-fails.ipynb
CHECK=$top_srcdir/tests/lib/check_notebook.py
# nbformat is Debian's python3-nbformat: the system's python3 has it.
NBPY=""
for p in "$PYTHON3" /usr/bin/python3; do
    "$p" -c 'import nbformat' 2>/dev/null && { NBPY=$p; break; }
done
[ -n "$NBPY" ] || skip_all "python3-nbformat is not installed (./quickstart test installs it)"
need jupyter-nbconvert
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

sc() { jb 'r["result"]["structuredContent"]'"$1"; }
# checked FILE: check_notebook.py's summary of FILE, converted to HTML.
checked() { "$NBPY" "$CHECK" "$1" "$T/conv.html"; }
# the_run SUMMARY WHERE: what every executed third-fails.ipynb must show.
the_run() {
    local s=$1 where=$2
    is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; s = json.load(sys.stdin); print(s["valid"], s["html"])')" \
        "True True" "$where: the executed notebook validates against nbformat's schema and converts to HTML"
    is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["cells"])')" \
        "[['markdown', None, []], ['code', 1, ['stdout']], ['code', 2, ['execute_result']], ['code', 3, ['error']], ['code', None, []]]" \
        "$where: cells 1 and 2 ran with their outputs, cell 3 holds its error, cell 4 never ran"
    is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; e = json.load(sys.stdin)["error"]; print(e[0], e[1], any("<cell 3>" in l for l in e[2]), "ratio(len(values), 0)" in "".join(e[2]))')" \
        "ZeroDivisionError division by zero True True" "$where: the error with its traceback through the cell's own lines"
}
# fetch URL OUT: GET an artifact's URL (absolute, or from the site).
fetch() {
    case $1 in
    http*) curl -sS -o "$2" -w '%{http_code}' "$1" ;;
    *) curl -sS -o "$2" -w '%{http_code}' "$BASE/${1#/}" ;;
    esac
}
nb_json() { "$PYTHON3" -c 'import json, sys; print(json.dumps(open(sys.argv[1], encoding="utf-8").read()))' "$1"; }
art_url() { # art_url NAME: the URL of that artifact in the answer's result
    jb "[a[\"url\"] for a in ($1)[\"artifacts\"] if a[\"path\"] == \"$2\"][0]"
}

# --- in: MCP -----------------------------------------------------------------
init 2025-11-25
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"notebook":true,"code":'"$(nb_json "$NB")"'}}}' \
    "${H[@]}"
is "$(sc '["status"]') / $(sc '["error"]')" "error / the notebook failed at cell 3: ZeroDivisionError: division by zero" \
    "run_code with notebook: true runs the cells; the status says it failed at cell 3"
is "$(jb 'r["result"]["isError"]')" true "isError, as for a failing script"
like "$(sc '["logs"]')" "mean 2" "the log holds what the cells printed"
case "$(sc '["logs"]')" in *"never printed"*) ok 1 "the cell after the failing one did not run" ;; *) ok 0 "the cell after the failing one did not run" ;; esac
is "$(fetch "$(art_url 'r["result"]["structuredContent"]' executed.ipynb)" "$T/mcp.ipynb")" 200 \
    "the executed notebook is the artifact executed.ipynb"
the_run "$(checked "$T/mcp.ipynb")" run_code

post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_my_script","arguments":{"notebook":true,"code":'"$(nb_json "$NB")"'}}}' \
    "${H[@]}"
is "$(sc '["error"]')" "the notebook failed at cell 3: ZeroDivisionError: division by zero" "run_my_script takes a notebook too"
is "$(fetch "$(art_url 'r["result"]["structuredContent"]' executed.ipynb)" "$T/rms.ipynb")" 200 "with its executed notebook"
the_run "$(checked "$T/rms.ipynb")" run_my_script

post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_code","arguments":{"notebook":true,"code":"{\"cells\": [1,"}}}' \
    "${H[@]}"
like "$(cat "$T/b")" "the notebook is not valid JSON" "bad JSON is refused, with the reason"
post '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_code","arguments":{"notebook":true,"code":"{\"a\": 1}"}}}' \
    "${H[@]}"
like "$(cat "$T/b")" "not a Jupyter notebook: the JSON has no list of" "JSON that is no notebook is refused"
post '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run_code","arguments":{"notebook":"yes","code":"print(1)"}}}' \
    "${H[@]}"
like "$(cat "$T/b")" "notebook must be true" "notebook must be a boolean"

# The cells' imports are installed as a script's are: a DataFrame's value
# (its HTML too) and a figure left open (an image) in the notebook.
if ls "$WHEELHOUSE"/pandas-*.whl "$WHEELHOUSE"/matplotlib-*.whl >/dev/null 2>&1; then
    "$PYTHON3" - "$T/plot.ipynb" <<'PY'
import json, sys
cells = ['import pandas as pd\nimport matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt',
         'df = pd.DataFrame({"a": [1, 2, 3]})\ndf',
         'plt.plot(df["a"])\nplt.title("three points")']
nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c%d" % i, "metadata": {}, "outputs": [],
                 "source": c} for i, c in enumerate(cells)],
      "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
json.dump(nb, open(sys.argv[1], "w"))
PY
    post '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"notebook":true,"code":'"$(nb_json "$T/plot.ipynb")"'}}}' \
        "${H[@]}"
    is "$(sc '["status"], [q.split("==")[0] for q in r["result"]["structuredContent"]["requirements"] if q.split("==")[0] in ("matplotlib", "pandas")]')" \
        '["ok", ["matplotlib", "pandas"]]' "a notebook's imports are installed ($(sc '["logs"][-300:]'))"
    is "$(fetch "$(art_url 'r["result"]["structuredContent"]' executed.ipynb)" "$T/plot-out.ipynb")" 200 "its executed notebook"
    s=$(checked "$T/plot-out.ipynb")
    is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; s = json.load(sys.stdin); print(s["valid"], s["html"], s["cells"], s["images"])')" \
        "True True [['code', 1, []], ['code', 2, ['execute_result']], ['code', 3, ['execute_result', 'display_data']]] 1" \
        "the DataFrame is a value, the figure an image; valid, and converted to HTML"
    like "$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["cells"][1]["outputs"][0]["data"]["text/html"])' "$T/plot-out.ipynb")" \
        "<table" "the DataFrame's value has its HTML table too"
else
    skip "a notebook with pandas and matplotlib: their wheels are not in the test wheelhouse"
    skip "its executed notebook"
    skip "its outputs"
    skip "its HTML"
fi

# --- in: /api/run, as the page sends it -------------------------------------
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -F "code=<$NB" -F notebook=third-fails.ipynb "$BASE/api/run")
is "$STATUS/$(jb 'r["status"], r["error"]')" \
    '200/["error", "the notebook failed at cell 3: ZeroDivisionError: division by zero"]' \
    "POST /api/run with the field notebook: the run failed at cell 3"
is "$(fetch "$(art_url r third-fails.ipynb)" "$T/web.ipynb")" 200 "the executed notebook keeps the name the page gave"
the_run "$(checked "$T/web.ipynb")" /api/run
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"code": "not json", "notebook": "x.ipynb"}' "$BASE/api/run")
is "$STATUS" 400 "/api/run: a notebook that is not JSON is refused (400)"
like "$(jb 'r["error"]')" "the notebook is not valid JSON" "with the reason ($(jb 'r["error"]'))"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -F "code=<$NB" -F "notebook=$(printf 'n%.0s' $(seq 300)).ipynb" "$BASE/api/run")
is "$STATUS" 413 "/api/run: a notebook field longer than its ceiling (255 bytes) is refused (413)"
like "$(jb 'r["error"]')" "the notebook field's ceiling" "and says which ($(jb 'r["error"]'))"

# --- in: the command line ----------------------------------------------------
cp "$NB" "$T/analysis.ipynb"
"$RUNMYSCRIPT" run --set "state_dir=$T/state" --json --out "$T/cli" "$T/analysis.ipynb" >"$T/b" 2>"$T/cli.err"
rc=$?
is "$rc/$(jb 'r["status"], r["error"]')" '1/["error", "the notebook failed at cell 3: ZeroDivisionError: division by zero"]' \
    "runmyscript run analysis.ipynb: exit status 1, failed at cell 3"
the_run "$(checked "$T/cli/$(jb 'r["run_id"]')/analysis.ipynb")" "the CLI"
# A run stopped from outside (its timeout) leaves the cells done so far:
# the notebook is written before each cell.
"$PYTHON3" - "$T/slow.ipynb" <<'PY'
import json, sys
cells = ["print('one')", "import time\nprint('two', flush=True)\ntime.sleep(60)", "print('three')"]
json.dump({"cells": [{"cell_type": "code", "execution_count": None, "id": "c%d" % i, "metadata": {}, "outputs": [],
                      "source": c} for i, c in enumerate(cells)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
          open(sys.argv[1], "w"))
PY
"$RUNMYSCRIPT" run --set "state_dir=$T/state" --json --timeout 3 --out "$T/cli" "$T/slow.ipynb" >"$T/b" 2>/dev/null
is "$(jb 'r["status"]')" timeout "a notebook whose second cell sleeps past the timeout"
s=$(checked "$T/cli/$(jb 'r["run_id"]')/slow.ipynb")
is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; s = json.load(sys.stdin); print(s["valid"], s["cells"])')" \
    "True [['code', 1, ['stdout']], ['code', None, []], ['code', None, []]]" "leaves its executed notebook: cell 1 done"
is "$("$PYTHON3" -c 'import json, sys; print([c["metadata"]["papermill"]["status"] for c in json.load(open(sys.argv[1]))["cells"]])' "$T/cli/$(jb 'r["run_id"]')/slow.ipynb")" \
    "['completed', 'running', 'pending']" "cell 2 running when it was stopped, cell 3 pending (papermill's words)"

echo '{"nbformat": 3, "cells": []}' >"$T/old.ipynb"
"$RUNMYSCRIPT" run --set "state_dir=$T/state" "$T/old.ipynb" >"$T/b" 2>&1
rc=$?
is "$rc" 65 "a notebook of nbformat 3 is refused (exit 65)"
like "$(cat "$T/b")" "not a Jupyter notebook of nbformat 4" "and says why"

# --- out: a workspace's cells as output/notebook.ipynb -----------------------
cell() {
    post '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_cell","arguments":{"code":'"$("$PYTHON3" -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1")"'}}}' \
        "${H[@]}"
}
cell $'import os, struct, zlib\nprint("printed")\nx = 41'
cell 'x + 1'
# A PNG written by the cell (the standard library's zlib; a figure saves
# itself the same way as output/cell-N-figure-M.png).
cell $'def png(path, w=4, h=4):\n    raw = b"".join(b"\\x00" + b"\\xff\\x00\\x00" * w for _ in range(h))\n    def chunk(t, d):\n        c = struct.pack(">I", len(d)) + t + d\n        return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)\n    open(path, "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))\npng(os.path.join(os.environ["SCRIPT_OUTPUT"], "cell-3-plot.png"))'
is "$(sc '["status"]')" ok "a cell writes a PNG ($(sc '["logs"][-200:]'))"
cell $'import sys\nprint("to stderr", file=sys.stderr)\n1 / 0'
is "$(sc '["status"]')" error "a cell fails"
post '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_dir","arguments":{"dir_path":"output"}}}' "${H[@]}"
like "$(cat "$T/b")" 'notebook.ipynb' "list_dir shows output/notebook.ipynb"
is "$(curl -sS -o "$T/out.ipynb" -w '%{http_code}' -H "Mcp-Session-Id: $SID" "$BASE/artifacts/notebook.ipynb")" 200 \
    "/artifacts/notebook.ipynb with the session's header serves it"
s=$(checked "$T/out.ipynb")
is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; s = json.load(sys.stdin); print(s["valid"], s["html"], s["nbformat"])')" \
    "True True [4, 5]" "the workspace's notebook validates (nbformat 4.5) and converts to HTML"
is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; s = json.load(sys.stdin); print(s["cells"], s["images"])')" \
    "[['code', 1, ['stdout']], ['code', 2, ['execute_result']], ['code', 3, ['display_data']], ['code', 4, ['stderr', 'error']]] 1" \
    "its cells: printed text, a value, the PNG as an image, stderr and the error"
is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; e = json.load(sys.stdin)["error"]; print(e[0], e[1], e[2][0])')" \
    "ZeroDivisionError division by zero Traceback (most recent call last):" "the error with its traceback"
is "$("$PYTHON3" -c 'import json, sys; nb = json.load(open(sys.argv[1])); print("".join(nb["cells"][1]["outputs"][0]["data"]["text/plain"]))' "$T/out.ipynb")" \
    42 "the value is as the cell showed it"
post '{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"workspace://'"$SID"'/output/notebook.ipynb"}}' "${H[@]}"
like "$(jb 'r["result"]["contents"][0]["text"]')" '"nbformat": 4' "the resource workspace://ID/output/notebook.ipynb reads it"

# A cell of the workspace that puts a symlink there: the notebook starts
# again with that cell rather than follow it (two cells then).
cell $'os.remove(os.path.join(os.environ["SCRIPT_OUTPUT"], "notebook.ipynb"))\nos.symlink("/etc/passwd", os.path.join(os.environ["SCRIPT_OUTPUT"], "notebook.ipynb"))'
cell '"after the link"'
curl -sS -o "$T/out2.ipynb" -H "Mcp-Session-Id: $SID" "$BASE/artifacts/notebook.ipynb"
is "$("$PYTHON3" -c 'import json, sys; nb = json.load(open(sys.argv[1])); print(len(nb["cells"]), "root:" in open(sys.argv[1]).read())' "$T/out2.ipynb")" \
    "2 False" "a symlink put in its place is replaced, never followed"

done_testing
