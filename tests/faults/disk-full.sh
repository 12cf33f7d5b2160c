#!/bin/bash
# The state disk full while the server runs: the state dir is a 4 MiB tmpfs
# (root only: a private mount namespace, so nothing of it outlives the
# test). Filled up, run_code and /api/run fail cleanly (sandbox_error: a
# JSON-RPC error and HTTP 500, saying the disk is full), the workers
# survive; freed, the same calls work again and nothing half-written is
# left. The low-disk guard is off (disk_reserve = 0) so that the runs get
# as far as the full disk: low-disk.sh tests the guard that refuses them
# before.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/privns.sh" "the full-disk case"
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/faults/lib.sh"
mkdir -p "$T/state"
mount -t tmpfs -o size=4m,mode=0755 tmpfs "$T/state" || skip_all "cannot mount a tmpfs"
STACK_WORKERS=3
STACK_CONF='disk_reserve = 0'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
session
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
is "$(jb 'r["result"]["structuredContent"]["status"]')" ok "a run before the disk fills"
WORKERS=$(pgrep -P "$SERVE_PID" | sort | tr '\n' ' ')

dd if=/dev/zero of="$T/state/filler" bs=4k >/dev/null 2>&1
TOK=$(token full)
post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(\"'"$TOK"'\")"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
is "$STATUS" 200 "disk full: MCP answers"
is "$(jb 'r["error"]["code"], "No space left on device" in str(r)')" \
    '[-32603, true]' "disk full: a JSON-RPC internal error that says the disk is full"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"code":"print(2)"}' "$BASE/api/run")
is "$STATUS" 500 "disk full: /api/run answers 500"
like "$(cat "$T/b")" "No space left on device" "and says why"
is "$(pgrep -P "$SERVE_PID" | sort | tr '\n' ' ')" "$WORKERS" "the workers survive (none died)"

rm -f "$T/state/filler"
half=""
for d in "$T"/state/runs/*/; do
    [ -f "$d/result.json" ] && [ ! -f "$d/log" ] && half="$half $d"
done
is "$half" "" "no result published half-written"
after_fault "$TOK"
stack_stop
umount "$T/state"
done_testing
