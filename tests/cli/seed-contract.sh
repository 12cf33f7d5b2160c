#!/bin/bash
# The script contract (doc/architecture.md) through `runmyscript run`: SCRIPT_INPUT is
# a file holding the input (also on stdin), SCRIPT_OUTPUT an empty directory
# whose files come back as artifacts, a clean environment, no inherited fds,
# only the standard library, exit codes passed through.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
S=$top_srcdir/tests/fixtures
T=$TEST_TMP

# --- the Run My Script example, standard library only ---
run_json $T/seed.json "$S/scripts/seed-stdlib.py" --input "$S/seeds/run_my_script_test_input.json" --out $T/out
is "$RC" 0 "the seed example exits 0"
is "$(jget $T/seed.json 'r["status"]')" ok "status ok"
is "$(jget $T/seed.json '[a["path"] for a in r["artifacts"]]')" '["flipped.png", "rows.csv"]' "flipped.png and rows.csv"
is "$(jget $T/seed.json 'r["artifacts"][0]["mime"]')" image/png "flipped.png is image/png"
is "$(jget $T/seed.json 'r["artifacts"][0]["summary"]')" "PNG image 256x256" "summary: PNG image 256x256"
is "$(jget $T/seed.json 'r["artifacts"][1]["summary"]')" "CSV, 256 rows x 2 columns; header: row, sum" "the CSV summary"
like "$(jget $T/seed.json 'r["logs"]')" "Image flipped and saved as flipped.png." "the log"
id=$(jget $T/seed.json 'r["run_id"]')
"$PYTHON3" - "$S/seeds/run_my_script_test_input.json" $T/orig.png <<'PY'
import base64, json, sys
open(sys.argv[2], "wb").write(base64.b64decode(json.load(open(sys.argv[1]))["img"]))
PY
"$PYTHON3" "$top_srcdir/tests/lib/check_png.py" mirror $T/orig.png "$T/out/$id/flipped.png"
ok $? "--out holds flipped.png, the input mirrored pixel for pixel"
cmp -s "$T/out/$id/rows.csv" "$RUNMYSCRIPT_STATE_DIR/runs/$id/output/rows.csv"
ok $? "--out holds an exact copy of rows.csv"
unzip -tq "$T/out/$id/artifacts.zip" >/dev/null 2>&1
ok $? "the zip passes unzip -t"
is "$(unzip -Z1 "$T/out/$id/artifacts.zip" | sort | tr '\n' ' ')" "flipped.png rows.csv " "the zip holds both files"
"$PYTHON3" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; assert sorted(z.namelist()) == ["flipped.png", "rows.csv"]' "$T/out/$id/artifacts.zip"
ok $? "Python's zipfile reads the zip"
# The record on disk.
rd=$RUNMYSCRIPT_STATE_DIR/runs/$id
for f in script.py input log result.json artifacts.zip; do
    [ -f "$rd/$f" ]
    ok $? "the run directory keeps $f"
done
cmp -s "$rd/input" "$S/seeds/run_my_script_test_input.json"
ok $? "the input file holds the input bytes"
is "$(jget $rd/result.json 'r["run_id"]')" "$id" "result.json is the result"
"$PYTHON3" -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a != b)' $T/seed.json $rd/result.json
ok $? "result.json equals the --json output"

# --- the environment the script sees ---
cat >$T/env.py <<'PY'
import os, sys
inp = os.environ["SCRIPT_INPUT"]
out = os.environ["SCRIPT_OUTPUT"]
print("KEYS", " ".join(sorted(os.environ)))
print("INPUT_IS_FILE", os.path.isfile(inp))
print("STDIN_MATCHES", sys.stdin.read() == open(inp).read())
print("OUTPUT_EMPTY_DIR", os.path.isdir(out) and os.listdir(out) == [])
print("CWD", os.getcwd() == os.path.dirname(out))
print("FDS", " ".join(sorted(os.listdir("/proc/self/fd"), key=int)))
print("CANARY", os.environ.get("RMS_CANARY", "absent"))
print("PYTHONUNBUFFERED", os.environ.get("PYTHONUNBUFFERED"))
print("DIST", any("dist-packages" in p or "site-packages" in p and "/usr/" in p for p in sys.path))
print("USER_SITE", __import__("site").ENABLE_USER_SITE)
try:
    import PIL
    print("PIL", "importable")
except ImportError:
    print("PIL", "absent")
PY
exec 7</dev/null
# --no-auto-deps: the script's `import PIL` would otherwise install pillow,
# and this checks that the system python's PIL does not leak in.
RMS_CANARY=secret-canary PYTHONPATH=/usr/lib/python3/dist-packages run_json $T/env.json $T/env.py --input-text 'hello input' \
    --no-auto-deps
exec 7<&-
logs=$(jget $T/env.json 'r["logs"]')
is "$(echo "$logs" | sed -n 's/^KEYS //p')" "HOME LANG PATH PYTHONUNBUFFERED SCRIPT_INPUT SCRIPT_OUTPUT TMPDIR" "the environment is the allowlist"
like "$logs" "INPUT_IS_FILE True" "SCRIPT_INPUT is a file"
like "$logs" "STDIN_MATCHES True" "stdin holds the same bytes"
like "$logs" "OUTPUT_EMPTY_DIR True" "SCRIPT_OUTPUT starts empty"
like "$logs" "CWD True" "cwd is the workspace"
is "$(echo "$logs" | sed -n 's/^FDS //p')" "0 1 2 3" "no inherited descriptors (3 is listdir's own)"
like "$logs" "CANARY absent" "a variable of the caller does not reach the script"
like "$logs" "PYTHONUNBUFFERED 1" "PYTHONUNBUFFERED=1"
like "$logs" "DIST False" "no dist-packages on sys.path"
like "$logs" "USER_SITE False" "no user site"
if "$PYTHON3" -c 'import PIL' 2>/dev/null; then
    like "$logs" "PIL absent" "a package of the system python is not importable"
else
    skip "the system python has no PIL to hide"
fi

cat >$T/noinput.py <<'PY'
import os, sys
print(repr(open(os.environ["SCRIPT_INPUT"], "rb").read()), repr(sys.stdin.read()))
PY
run_json $T/noinput.json $T/noinput.py
is "$(jget $T/noinput.json 'r["logs"]')" "b'' ''" "without input SCRIPT_INPUT is an empty file and stdin is empty"
printf 'piped \xff bytes' | "$RUNMYSCRIPT" run $T/noinput.py --input - --json >$T/stdin.json
like "$(jget $T/stdin.json 'r["logs"]')" "b'piped \\xff bytes'" "--input - reads the input from stdin, bytes intact"
printf 'print("from stdin")\n' | "$RUNMYSCRIPT" run - --json >$T/dash.json
is "$(jget $T/dash.json 'r["logs"]')" "from stdin" "the script itself from stdin"

# --- exit codes ---
printf 'import sys\nprint("bye")\nsys.exit(3)\n' >$T/exit3.py
run_json $T/exit3.json $T/exit3.py
is "$RC" 3 "the script's exit code is the CLI's"
is "$(jget $T/exit3.json 'r["status"]')" error "a non-zero exit is status error"
is "$(jget $T/exit3.json 'r["exit_code"]')" 3 "exit_code 3"
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n' >$T/kill.py
run_json $T/kill.json $T/kill.py
is "$RC" 137 "killed by SIGKILL: 128 + 9"
is "$(jget $T/kill.json 'r["signal"]')" SIGKILL "signal SIGKILL"
is "$(jget $T/kill.json 'r["exit_code"]')" null "exit_code null"
printf 'raise ValueError("boom")\n' >$T/raise.py
"$RUNMYSCRIPT" run $T/raise.py --out $T/o >$T/raise.txt 2>$T/raise.err
is "$?" 1 "an exception exits 1"
like "$(cat $T/raise.txt)" "[stderr] ValueError: boom" "the traceback is shown, marked as stderr"
like "$(cat $T/raise.err)" "--- error, exit code 1" "the summary line says error"
# A traceback names the script by one path, with a session or without (the
# web page's runs and MCP's run_my_script have none, run_code has one): in
# the jail /job/script.py, in the fallback the run directory's script.py.
tb_file() { jget "$1" 'r["logs"].split("File \"")[1].split("\"")[0]'; }
run_json $T/tb.json $T/raise.py
run_json $T/tbs.json $T/raise.py --session $T/tb-session
if [ "${RMS_ISOLATION:-}" = rlimits ]; then
    is "$(tb_file $T/tb.json)" "$(jget $T/tb.json 'r["workdir"]')/script.py" "the traceback names the run directory's script.py"
    is "$(tb_file $T/tbs.json)" "$RUNMYSCRIPT_STATE_DIR/runs/$(jget $T/tbs.json 'r["run_id"]')/script.py" \
        "and so it does with a session"
else
    is "$(tb_file $T/tb.json)" /job/script.py "the traceback names /job/script.py"
    is "$(tb_file $T/tbs.json)" /job/script.py "and with a session too"
fi

done_testing
