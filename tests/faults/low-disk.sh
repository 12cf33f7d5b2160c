#!/bin/bash
# The state directory bounded by size, and the low-disk guard, on a state
# directory that is a 48 MiB tmpfs of the test's own (root only: a private
# mount namespace, so nothing of it outlives the test).
#   runs_bytes: a dozen runs of 600 KiB each against a cap of 2 MiB: once
#   they are older than the 10 s every run is kept for its client, the next
#   run removes the oldest, down to nine tenths of the cap; the newest and
#   a session's workspace stay.
#   disk_reserve: the file system filled to 95% (a reserve of 10%): /healthz
#   says low_disk, /api/run answers 507 with Retry-After, run_code a tool
#   error, runmyscript run exits 74, nothing is made; freed, runs work again.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/privns.sh" "the low-disk case"
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/faults/lib.sh"
mkdir -p "$T/state"
mount -t tmpfs -o size=48m,mode=0755 tmpfs "$T/state" || skip_all "cannot mount a tmpfs"
STACK_WORKERS=4
STACK_CONF='runs_bytes = 2M\ndisk_reserve = 10%'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

api_run() { # api_run CODE: a JSON /api/run; the status in $STATUS, the body in $T/b
    STATUS=$(curl -sS -o "$T/b" -D "$T/h" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary "$("$PYTHON3" -c 'import json, sys; print(json.dumps({"code": sys.argv[1]}))' "$1")" "$BASE/api/run")
}
BIG='import os\nopen(os.environ["SCRIPT_OUTPUT"] + "/big.bin", "wb").write(os.urandom(300 << 10))\nprint("big")'
BIG=$(printf "$BIG")

session
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"open(\"keep.txt\", \"w\").write(\"kept\")"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
is "$(jb 'r["result"]["structuredContent"]["status"]')" ok "a session's run leaves a file in its workspace"
urls=()
for i in $(seq 12); do
    api_run "$BIG"
    urls+=("$(jb 'r["artifacts"][0]["url"]')")
done
is "$STATUS/$(jb 'r["status"]')" '200/ok' "twelve runs of 600 KiB each (an artifact and its zip)"
before=$(du -sk "$T/state/runs" | cut -f1)
ok "$([ "$before" -gt 6000 ]; echo $?)" "their records hold $before KiB, past runs_bytes (2 MiB): none of them is 10 s old yet"
sleep 11
api_run 'print("after")'
is "$STATUS/$(jb 'r["logs"]')" '200/after' "a run once they are older"
after=$(du -sk "$T/state/runs" | cut -f1)
ok "$([ "$after" -le 2200 ]; echo $?)" "the oldest records went: $after KiB left, within runs_bytes"
is "$(curl -sS -o /dev/null -w '%{http_code}' "$(abs "${urls[0]}")")" 404 "the oldest run's artifact is gone (404)"
is "$(curl -sS -o /dev/null -w '%{http_code}' "$(abs "${urls[11]}")")" 200 "the newest run's artifact is still served"
post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"preview_file","arguments":{"relative_path":"keep.txt"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
is "$(jb 'r["result"]["structuredContent"]["text"]')" kept "the session's workspace is untouched"
curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["disk"]["runs_bytes"] <= 2200 << 10, r["status"]')" '[true, "ok"]' \
    "/healthz: the records' size, and ok"

# Fill the file system to 95%: under the reserve of 10%.
avail=$(df --output=avail -k "$T/state" | tail -1)
size=$(df --output=size -k "$T/state" | tail -1)
dd if=/dev/zero of="$T/state/filler" bs=1k count=$((avail - size * 5 / 100)) >/dev/null 2>&1
curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["status"], r["disk"]["low"], "disk_reserve" in r["disk"]["error"]')" '["low_disk", true, true]' \
    "the disk at 95%: /healthz says low_disk, and why"
runs_before=$(ls "$T/state/runs" | wc -l)
api_run 'print("refused")'
is "$STATUS" 507 "/api/run: 507 Insufficient Storage"
like "$(jb 'r["error"]')" "low on disk space" "... saying why"
ok "$(grep -qi '^Retry-After: [0-9]' "$T/h"; echo $?)" "... with Retry-After"
post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
is "$(jb 'r["result"]["isError"], "low on disk space" in r["result"]["content"][0]["text"], "structuredContent" in r["result"]')" \
    '[true, true, false]' "run_code: a tool error that says the disk is low"
printf 'print("cli")\n' >"$T/cli.py"
RUNMYSCRIPT_STATE_DIR="$T/state" RUNMYSCRIPT_CONFIG="$T/runmyscript.conf" "$RUNMYSCRIPT" run "$T/cli.py" >"$T/cli.out" 2>&1
is "$?" 74 "runmyscript run on the same state directory: exit 74"
is "$(ls "$T/state/runs" | wc -l)" "$runs_before" "nothing was made for the refused runs"
rm -f "$T/state/filler"
api_run 'print("room again")'
is "$STATUS/$(jb 'r["logs"]')" '200/room again' "space made: runs work again"
curl -sS -o "$T/b" "$BASE/healthz"
is "$(jb 'r["status"]')" ok "/healthz: ok again"
after_fault "$(token low)"
stack_stop
umount "$T/state"
done_testing
