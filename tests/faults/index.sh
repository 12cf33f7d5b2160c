#!/bin/bash
# The package index slow, then down, during an install (a PEP 503 index on
# loopback whose wheel downloads wait at a gate file: tests/lib/gate_index.py).
# Slow: the installer is held past install_time and the call ends
# install_failed. Down: the index is killed while the installer waits on it;
# the call ends install_failed. After each, no temporary environment and no
# broken one is left, no installer process survives; when the index is back
# the same requirement installs and runs.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/faults/lib.sh"
[ -f "${WHEELHOUSE:-}/.stamp" ] || skip_all "no wheelhouse (make check builds it)"
GATE=$T/gate.open
IPORT=$(free_port)
start_index() {
    : >"$T/gate.log"
    rm -f "$T/iport"
    "$PYTHON3" "$top_srcdir/tests/lib/gate_index.py" "$WHEELHOUSE" "$T/iport" "$T/gate.log" "$GATE" "$IPORT" &
    INDEX_PID=$!
    STACK_PIDS="$STACK_PIDS $INDEX_PID"
    wait_for test -s "$T/iport"
}
stop_index() {
    kill -KILL "$INDEX_PID" 2>/dev/null
    wait "$INDEX_PID" 2>/dev/null
    STACK_PIDS=${STACK_PIDS/ $INDEX_PID/}
}
start_index || { ok 1 "the index starts"; done_testing; exit 1; }
STACK_WORKERS=3
# make check points every run at the wheelhouse through the environment,
# which wins over the file: point this one at the index instead.
export RUNMYSCRIPT_INDEX_URL="http://127.0.0.1:$IPORT/simple/" RUNMYSCRIPT_FIND_LINKS=none
STACK_CONF="install_time = 4s"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
printf 'import rms_alpha\nprint(rms_alpha.greet("faults"))\n' >"$T/alpha.py"
call_json 2 "$T/alpha.py" >"$T/body.json"

# no_installer: the workers have no child left (the installer ran jailed, as theirs).
no_installer() {
    local w kids=""
    for w in $(pgrep -P "$SERVE_PID"); do
        kids="$kids$(pgrep -P "$w" | tr '\n' ' ')"
    done
    [ -z "$kids" ]
}
status_failed() {
    cp "$1" "$T/b"
    jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["limit"]'
}

# --- slow: held at the gate past install_time
session
call_bg "$SID" "$T/body.json" "$T/slow.out"
wait_for grep -q 'rms_alpha.*\.whl' "$T/gate.log"
ok $? "slow: the installer waits on the index"
wait "$CURL"
is "$(status_failed "$T/slow.out")" '["install_failed", "install_time"]' "slow: install_failed when install_time passes"
wait_for no_installer
ok $? "slow: no installer process is left"

# --- down: the index dies while the installer waits on it
call_bg "$SID" "$T/body.json" "$T/down.out"
wait_for grep -q 'rms_alpha.*\.whl' "$T/gate.log"
ok $? "down: the installer waits on the index again"
stop_index
wait "$CURL"
like "$(status_failed "$T/down.out")" '"install_failed"' "down: install_failed when the index goes away"
wait_for no_installer
ok $? "down: no installer process is left"
is "$(ls -A "$T/state/envs" | grep -v '^base-\|^\.\(base-\)\?.*lock$' | tr '\n' ' ')" "" \
    "no environment of the failed installs is kept"

# --- back: the same requirement installs and runs
touch "$GATE"
start_index
ok $? "the index is back on the same port"
call_bg "$SID" "$T/body.json" "$T/back.out"
wait "$CURL"
cp "$T/back.out" "$T/b"
is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["logs"]')" \
    '["ok", "alpha says hello to faults\n"]' "back: the requirement installs and the script runs"
after_fault
done_testing
