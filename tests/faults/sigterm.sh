#!/bin/bash
# SIGTERM to serve with runs in flight: three running or queued calls (one
# run slot, so two wait in the queue) all finish and get their results, then
# serve exits 0; nothing is left. Then serve is started again on the same
# state dir and answers. A run longer than drain_grace is cancelled when
# the grace is over, and its answer says the server stopped it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/faults/lib.sh"
STACK_WORKERS=5
STACK_CONF='max_concurrent_runs = 1\nmax_queued_runs = 4'
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
TOKS=() CURLS=()
for i in 1 2 3; do
    tok=$(token "drain$i")
    TOKS+=("$tok")
    token_code "$tok" 3 >"$T/code$i.py"
    call_json 2 "$T/code$i.py" >"$T/body$i.json"
    session
    call_bg "$SID" "$T/body$i.json" "$T/out$i"
    CURLS+=("$CURL")
done
wait_for runs_are 1 2
ok $? "one run started, the other two wait in the queue"
kill -TERM "$SERVE_PID"
for i in 1 2 3; do
    wait "${CURLS[$((i - 1))]}"
    cp "$T/out$i" "$T/b"
    is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["logs"]')" \
        "[\"ok\", \"go ${TOKS[$((i - 1))]}\\nend ${TOKS[$((i - 1))]}\\n\"]" "call $i drained: its own result"
done
wait "$SERVE_PID"
is "$?" 0 "serve exits 0 after draining"
STACK_PIDS=${STACK_PIDS/ $SERVE_PID/}
grep -q "stopping: draining" "$T/serve.log"
ok $? "serve said it drains"
# serve_again: serve started again on the same socket and state dir (nginx
# still runs); 0 once it answers.
serve_again() {
    "$RUNMYSCRIPT" serve --listen "unix:$T/fcgi.sock" --config "$CONF" --workers 2 >/dev/null 2>>"$T/serve.log" &
    SERVE_PID=$!
    STACK_PIDS="$STACK_PIDS $SERVE_PID"
    wait_for curl -sf "$BASE/healthz"
}
serve_again
ok $? "serve starts again"
after_fault "${TOKS[@]}"

# A run longer than drain_grace: cancelled when the grace is over, and its
# answer says so (the server stopped, not the client), the log as well.
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
STACK_PIDS=${STACK_PIDS/ $SERVE_PID/}
printf 'drain_grace = 1s\n' >>"$CONF"
serve_again
ok $? "serve starts with drain_grace = 1s"
tok=$(token grace)
token_code "$tok" 30 >"$T/code9.py"
call_json 9 "$T/code9.py" >"$T/body9.json"
session
call_bg "$SID" "$T/body9.json" "$T/out9"
wait_for runs_are 1 0
ok $? "a run of 30 s started"
kill -TERM "$SERVE_PID"
wait "$CURL"
cp "$T/out9" "$T/b"
is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["error"]')" \
    '["cancelled", "the server stopped: its drain_grace (1 s) passed before the run ended"]' \
    "past drain_grace the run is cancelled, and its answer says the server stopped"
is "$(jb 'r["result"]["structuredContent"]["logs"].splitlines()')" \
    "[\"go $tok\", \"[runmyscript] the run was cancelled: the server stopped: its drain_grace (1 s) passed before the run ended\"]" \
    "its log says so in its last line"
wait "$SERVE_PID"
is "$?" 0 "serve exits 0"
STACK_PIDS=${STACK_PIDS/ $SERVE_PID/}
grep -q "drain grace over: cancelling the runs of 1 workers" "$T/serve.log"
ok $? "serve said it cancelled the run"
serve_again
ok $? "serve starts again"
after_fault "$tok"
done_testing
