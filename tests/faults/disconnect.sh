#!/bin/bash
# A client that hangs up in the middle of a run. cancel_on_disconnect = off
# (the default; MCP says a disconnection is not a cancellation): the run
# finishes and its result is kept on disk. = on: the run is cancelled (MCP
# over SSE, and /api/run). Either way nothing is left behind.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/faults/lib.sh"
STACK_WORKERS=3

status_of() { # status_of RUN_DIR: status and whether the log has "end"
    "$PYTHON3" -c 'import json,sys; r=json.load(open(sys.argv[1]+"/result.json")); print(r["status"], "end " in r["logs"])' "$1" 2>&1
}

# --- off: the run goes on
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
TOK1=$(token finish)
token_code "$TOK1" 3 >"$T/code1.py"
call_json 2 "$T/code1.py" >"$T/body1.json"
session
call_bg "$SID" "$T/body1.json" "$T/out1"
wait_for grep -q "go $TOK1" "$T/out1"
ok $? "off: the run started"
RUN1=$(run_of "$TOK1")
kill -TERM "$CURL"; wait "$CURL" 2>/dev/null
wait_for test -f "$RUN1/result.json"
is "$(status_of "$RUN1")" "ok True" "off: the client hung up, the run finished and its result is on disk"
after_fault "$TOK1"
stack_stop

# --- on: the run is cancelled
STACK_CONF='cancel_on_disconnect = on'
stack_start serve || { ok 1 "the server starts again"; done_testing; exit 1; }
TOK2=$(token cancel)
token_code "$TOK2" 300 >"$T/code2.py"
call_json 2 "$T/code2.py" >"$T/body2.json"
session
call_bg "$SID" "$T/body2.json" "$T/out2"
wait_for grep -q "go $TOK2" "$T/out2"
ok $? "on: the MCP run started"
RUN2=$(run_of "$TOK2")
kill -TERM "$CURL"; wait "$CURL" 2>/dev/null
wait_for test -f "$RUN2/result.json"
is "$(status_of "$RUN2")" "cancelled False" "on: the MCP client hung up and its run was cancelled"
grep -q "the client hung up" "$T/serve.log"
ok $? "serve logged why"

TOK3=$(token api)
"$PYTHON3" -c 'import json,sys; print(json.dumps({"code": open(sys.argv[1]).read()}))' <(token_code "$TOK3" 300) >"$T/body3.json"
curl -sS -o "$T/out3" -X POST -H 'Content-Type: application/json' --data-binary "@$T/body3.json" "$BASE/api/run" 2>/dev/null &
CURL=$!
# (its run directory and a process of its own: a `bash -c "pgrep TOKEN"`
# would find itself, the token being in its own command line)
started() { [ -n "$(run_of "$1")" ] && [ -n "$(procs_with "$1")" ]; }
wait_for started "$TOK3"
ok $? "on: the /api/run run started"
RUN3=$(run_of "$TOK3")
kill -TERM "$CURL"; wait "$CURL" 2>/dev/null
wait_for test -f "$RUN3/result.json"
is "$(status_of "$RUN3")" "cancelled False" "on: the /api/run client hung up and its run was cancelled"
after_fault "$TOK2" "$TOK3"
done_testing
