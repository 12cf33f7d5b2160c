#!/bin/bash
# A worker killed (SIGKILL) in the middle of a run: the client gets an error
# (its stream ends without a result), the supervisor starts a new worker,
# the run's processes are gone (also where they are forked from a zygote,
# as a warm run is: the worker is then found by the run directory it holds),
# and the run is marked failed on disk.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/faults/lib.sh"
STACK_WORKERS=3
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
TOK=$(token killed)
token_code "$TOK" 120 >"$T/code.py"
call_json 2 "$T/code.py" >"$T/body.json"
session
call_bg "$SID" "$T/body.json" "$T/out"
wait_for grep -q "go $TOK" "$T/out"
ok $? "the run started"
pids=$(procs_with "$TOK")
ok $([ -n "$pids" ]; echo $?) "its processes carry the token ($pids)"
RUN=$(run_of "$TOK")
W=$(worker_of ${pids%% *} || worker_of_run "$RUN")
ok $? "the worker serving it is found ($W)"
sleep 1.1 # the run directory is older than the orphan check's 1 s floor
kill -KILL "$W"
wait $CURL
grep -q '"result"' "$T/out"
ok $((! $?)) "the client got no result (its stream ended)"
wait_for bash -c "[ \$(pgrep -P $SERVE_PID | wc -l) -eq 3 ] && ! kill -0 $W 2>/dev/null"
ok $? "the supervisor started a new worker"
wait_for test -f "$RUN/result.json"
is "$("$PYTHON3" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], "died" in r.get("error",""))' "$RUN/result.json" 2>&1)" \
    "sandbox_error True" "the run is marked failed on disk (sandbox_error: its process died)"
grep -q "worker $W died of signal 9" "$T/serve.log"
ok $? "serve logged the death"
after_fault "$TOK"
done_testing
