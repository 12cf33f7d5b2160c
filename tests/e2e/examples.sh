#!/bin/bash
# Every program of examples/ run as a user runs it, against runmyscript
# served behind nginx, with the server's URL (and for mount_and_run a CSV
# from a fixture server on loopback), so that none of them can rot: each
# must exit 0 and print what its comment promises.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/nginx.sh"
. "$top_srcdir/tests/lib/fixture-server.sh"
need_sdk
need "$NGINX" curl
NGINX_PREFIX=$T/fixtures
NGINX_ON_EXIT=stack_exit
fixture_server_start
STACK_CONF="fetch_allow = 127.0.0.1:$PORT1"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
MCP_URL=$BASE/mcp

# The examples are run from a copy beside the tests' node_modules, as a
# user runs them from a folder where the SDK is installed.
EX=$T/examples
mkdir -p "$EX"
cp "$top_srcdir"/examples/*.mjs "$EX/"
ln -s "$MODULES" "$T/node_modules"

# example NAME ARGS...: runs examples/NAME.mjs in $EX; its output in $OUT.
example() {
    local name=$1
    shift
    OUT=$(cd "$EX" && timeout 300 "$NODE" "$name.mjs" "$@" 2>&1)
    local rc=$?
    is "$rc" 0 "$name exits 0"
    [ "$rc" = 0 ] || printf '#   %s\n' "${OUT//$'\n'/$'\n'#   }"
}

# Every example has its test here, and every test its example.
for f in "$top_srcdir"/examples/*.mjs; do
    n=$(basename "$f" .mjs)
    grep -q "^ *example $n " "$0"
    ok $? "examples/$n.mjs is run by this test"
done
[ -f "$top_srcdir/examples/README.md" ]
ok $? "examples/README.md"

example list_tools "$MCP_URL"
like "$OUT" "connected to runmyscript" "list_tools: the server's name"
like "$OUT" "- run_code(code, " "list_tools: run_code and its arguments"
like "$OUT" "- preview_file(relative_path)" "list_tools: preview_file"

example run_code "$MCP_URL"
like "$OUT" "status: ok" "run_code: ok"
like "$OUT" "logs: mean: 3.875" "run_code: what the script printed"
like "$OUT" "artifact: sorted.txt (15 bytes) $BASE/artifacts/" "run_code: the artifact and its absolute URL"

example mount_and_run "$MCP_URL" "http://127.0.0.1:$PORT1/data/table.csv"
rows=$("$PYTHON3" -c 'import csv, sys; print(len(list(csv.reader(open(sys.argv[1])))))' "$F/data/table.csv")
like "$OUT" "first run: ok, rows: $rows" "mount_and_run: the mounted CSV read in the first run"
like "$OUT" "second run: ok, header: $(head -n1 "$F/data/table.csv" | tr -d '\r')" \
    "mount_and_run: read again in the second run without its URL"
OUT=$(cd "$EX" && "$NODE" mount_and_run.mjs 2>&1)
is "$?:$OUT" "2:usage: node mount_and_run.mjs MCP_URL CSV_URL" "mount_and_run without its arguments: its usage, exit 2"

example inspect_workspace "$MCP_URL"
like "$OUT" "output/notes.txt (file, 22 bytes)" "inspect_workspace: list_dir"
like "$OUT" "output/report.csv (file, " "inspect_workspace: list_dir lists both files"
like "$OUT" $'preview of output/report.csv:\nmonth,sales\njan,10' "inspect_workspace: preview_file"

example artifact_download "$MCP_URL" "$T/chart.svg"
like "$OUT" "downloaded plots/chart.svg (image/svg+xml" "artifact_download: by GET /artifacts/PATH with the session header"
grep -q '<rect x="60" y="30" width="20" height="50"/>' "$T/chart.svg"
ok $? "artifact_download: the file as the script wrote it"

example session_persistence "$MCP_URL"
like "$OUT" "second call: hello, workspace - counter is now 2" "session_persistence: the module and the file of the first call"

have_pillow
SEEDS=$top_srcdir/tests/fixtures/seeds
if [ "$HAVE_PILLOW" = 1 ]; then
    example run_my_script_seed "$MCP_URL" "$SEEDS/run_my_script_test.py" "$SEEDS/run_my_script_test_input.json" "$T/flipped.png"
    like "$OUT" "logs: Image flipped and saved as flipped.png." "run_my_script_seed: the seed's own line"
    is "$(head -c 8 "$T/flipped.png" | od -An -tx1 | tr -d ' ')" 89504e470d0a1a0a "run_my_script_seed: a PNG saved"
else
    skip "no pillow in the test wheelhouse (python3-pil missing): the seed, which imports PIL, is not run"
fi

done_testing
