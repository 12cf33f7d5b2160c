#!/bin/bash
# kernel-restart.sh: saved kernels across a restart of `runmyscript serve`
# behind a real nginx, as an agent meets one: SESSIONS (8) legacy MCP
# sessions, each with a kernel holding names of its own; SIGTERM to serve
# while three of their cells run (two that end within drain_grace, one
# that ignores the drain's interrupt); a new serve on the same socket; then
# every session's next cell. The cells that ended within drain_grace were
# answered and their kernels saved with the idle ones: every one of those
# sessions finds its names back ("restored"); the cell past drain_grace was
# not answered with a result, and its session's next cell is "new" with
# the reason saying its names were not saved. bench/kernel's part 7 is the
# same at 64 sessions.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
SESSIONS=${KERNEL_RESTART_SESSIONS:-8}
STACK_CONF="drain_grace = 6s\nkernel_grace = 60s\nmax_concurrent_runs = 4"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

# call I CODE [OUT]: run_cell in session I (its headers H_I); the answer in
# $T/b (OUT: in the background, into OUT).
call() {
    local sid=${SIDS[$1]} body
    body='{"jsonrpc":"2.0","id":'"$((1000 + $1))"',"method":"tools/call","params":{"name":"run_cell","arguments":{"code":'"$("$PYTHON3" -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$2")"'}}}'
    local h=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: 2025-11-25")
    if [ -n "${3:-}" ]; then
        curl -sS -N -o "$3" -X POST -H 'Content-Type: application/json' "${h[@]}" --data-binary "$body" "$BASE/mcp" &
    else
        post "$body" "${h[@]}"
    fi
}
sc() { jb 'r["result"]["structuredContent"]'"$1"; }
live() { curl -sS "$BASE/healthz" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["kernels"]["live"])'; }

# The names of session I, and the cell that reads them back.
names() { printf 'k = %d\nlabel = "s-%d"\ndef f(v):\n    return v + k\nclass Box:\n    def __init__(self):\n        self.items = list(range(k))\nbox = Box()\n' $1 $1; }
CHECK='[k, label, f(1), len(box.items), type(box).__name__]'
want() { printf "[%d, 's-%d', %d, %d, 'Box']" $1 $1 $(($1 + 1)) $1; }

SIDS=()
for i in $(seq 0 $((SESSIONS - 1))); do
    init 2025-11-25
    SIDS[$i]=$SID
done
made=0
for i in $(seq 0 $((SESSIONS - 1))); do
    call $i "$(names $i)"
    [ "$(sc '["status"], r["result"]["structuredContent"]["kernel"]["state"]')" = '["ok", "new"]' ] && made=$((made + 1))
done
is "$made" "$SESSIONS" "$SESSIONS sessions, each a new kernel holding names of its own"
is "$(live)" "$SESSIONS" "/healthz counts $SESSIONS live kernels"

# Sessions 0 and 1: a cell that ends within drain_grace; session 2: a cell
# that ignores the drain's interrupt and outlives the drain.
call 0 'import time; time.sleep(3); k2 = k * 2; k2' "$T/short0"
P0=$!
call 1 'import time; time.sleep(3); k2 = k * 2; k2' "$T/short1"
P1=$!
call 2 'import time
late = 1
t = time.time()
while time.time() - t < 90:
    try:
        time.sleep(0.2)
    except KeyboardInterrupt:
        pass' "$T/long2"
P2=$!
busy() { curl -sS "$BASE/healthz" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["kernels"]["busy"])'; }
three_busy() { local b; b=$(busy); echo "$b" >>"$T/busy.seen"; [ "$b" = 3 ]; }
wait_for three_busy
R=$?
ok $R "three cells running"
[ $R = 0 ] || diag "busy seen: $(sort "$T/busy.seen" | uniq -c | tr '\n' ' ')"

# SIGTERM: the drain; then a new serve on the same socket.
T0=$(date +%s)
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
diag "serve's drain took $(($(date +%s) - T0)) s"
wait $P0 $P1 $P2 2>/dev/null
STACK_PIDS=${STACK_PIDS/ $SERVE_PID/}
cp "$T/serve.log" "$T/serve-1.log"
: >"$T/serve.log"
"$RUNMYSCRIPT" serve --listen "unix:$T/fcgi.sock" --config "$CONF" --workers "${STACK_WORKERS:-4}" \
    >/dev/null 2>"$T/serve.log" &
SERVE_PID=$!
STACK_PIDS="$STACK_PIDS $SERVE_PID"
wait_for curl -sf "$BASE/healthz"
ok $? "a new serve answers"

for i in 0 1; do
    cp "$T/short$i" "$T/b"
    is "$(sc '["status"], r["result"]["structuredContent"]["value"]')" "[\"ok\", \"$((i * 2))\"]" \
        "session $i: the cell that ended within drain_grace was answered"
done
cp "$T/long2" "$T/b"
is "$(jb '[m.get("id") for m in (msgs or [r]) if m and "result" in m]' 2>/dev/null)" '[]' \
    "session 2: the cell past drain_grace got no result"
like "$(cat "$T/long2")" "the cell was cancelled and interrupted" "... only the notice of the drain's interrupt it ignored"
is "$(live)" 0 "no kernel is live after the restart (each one saved or ended)"

# Every session's next cell.
back=0
for i in $(seq 0 $((SESSIONS - 1))); do
    call $i "$CHECK"
    got=$(sc '["value"], r["result"]["structuredContent"]["kernel"]["state"]')
    if [ $i = 2 ]; then
        is "$got" '[null, "new"]' "session 2: the kernel past drain_grace was not saved: its next cell is new"
        cp "$T/b" "$T/late"
        continue
    fi
    [ "$got" = "[\"$(want $i)\", \"restored\"]" ] && back=$((back + 1)) || diag "session $i: $got"
done
is "$back" $((SESSIONS - 1)) "every other session's names back after the restart (restored), the two drained cells' too"
cp "$T/late" "$T/b"
like "$(sc '["kernel"]["reason"]')" "in the middle of a cell, and its names were not saved" \
    "... and its reason says its names were not saved"
call 0 'k2'
is "$(sc '["value"]')" 0 "session 0: the name its drained cell made was saved too"
done_testing
