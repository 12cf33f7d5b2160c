#!/bin/bash
# serve's drain ends whatever order its processes die in. The ordering that
# once spun for ever: the stream process ends while a worker is still alive
# in the drain (here: a worker stopped with SIGSTOP while the server gets
# SIGTERM and the stream process is killed, then let go). A worker that
# never takes SIGTERM does not keep serve from exiting. Then: serve never takes over a socket another serve listens
# on, and replaces one that nobody listens on.
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
T=$TEST_TMP
PIDS=""
on_exit() {
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
    cleanup_tmp
}
trap on_exit EXIT
export RUNMYSCRIPT_WARM=off RUNMYSCRIPT_LOG_LEVEL=info

# start_serve NAME [--set ...]: serve on $T/NAME.sock, logging to $T/NAME.log;
# SERVE_PID, STREAM_PID and WORKERS once its workers and stream process run.
start_serve() {
    local name=$1
    shift
    "$RUNMYSCRIPT" serve --listen "unix:$T/$name.sock" --workers 2 "$@" >/dev/null 2>"$T/$name.log" &
    SERVE_PID=$!
    PIDS="$PIDS $SERVE_PID"
    for _ in $(seq 100); do
        STREAM_PID=$(sed -n 's/.*the stream process \([0-9]*\) started.*/\1/p' "$T/$name.log" | tail -1)
        WORKERS=$(pgrep -P "$SERVE_PID" | tr '\n' ' ')
        [ -S "$T/$name.sock" ] && [ -n "$STREAM_PID" ] && [ "$(echo $WORKERS | wc -w)" = 2 ] && break
        sleep 0.1
    done
    PIDS="$PIDS $STREAM_PID $WORKERS"
    [ -n "$STREAM_PID" ] && [ "$(echo $WORKERS | wc -w)" = 2 ]
}

# 1. The stream process ends while a worker still lives in the drain.
start_serve a
ok $? "serve starts with two workers and its stream process"
w1=${WORKERS%% *}
kill -STOP "$w1"
kill -TERM "$SERVE_PID"
sleep 0.3
kill -KILL "$STREAM_PID"
sleep 1.5
kill -CONT "$w1"
ended_within 10 "$SERVE_PID"
ok $? "serve ends after its stream process died before its last worker"
ended_within 1 $WORKERS
is "$left" "" "no worker is left behind"
grep -q "stopped" "$T/a.log"
ok $? "serve said it stopped"

# 2. A worker that never takes SIGTERM (stopped): after drain_grace its run
# is cancelled, kill_grace and the slack later it gets SIGKILL, and serve
# exits. (The drain's last bound, for a process not even SIGKILL ends, is
# not reached here.)
start_serve b --set drain_grace=1s --set kill_grace=1s
ok $? "serve starts again, with drain_grace = 1s"
w1=${WORKERS%% *}
kill -STOP "$w1"
kill -TERM "$SERVE_PID"
ended_within 30 "$SERVE_PID"
ok $? "serve's drain ends: drain_grace, kill_grace, then SIGKILL"
grep -q "drain grace over" "$T/b.log"
ok $? "serve said the drain grace was over"
kill -CONT "$w1" 2>/dev/null

# 3. A socket another serve listens on is never taken over.
start_serve c
ok $? "a serve listens on c.sock"
first=$SERVE_PID
"$RUNMYSCRIPT" serve --listen "unix:$T/c.sock" --workers 1 >/dev/null 2>"$T/c2.log" &
second=$!
PIDS="$PIDS $second"
ended_within 10 "$second"
ok $? "a second serve on the same socket exits"
wait "$second"
is "$?" 78 "with the configuration's exit status"
like "$(cat "$T/c2.log")" "another server listens on $T/c.sock" "and says another server listens there"
kill -0 "$first" 2>/dev/null && [ -S "$T/c.sock" ]
ok $? "the first serve runs on, its socket in place"
kill -TERM "$first"
ended_within 10 "$first"
ok $? "the first one stops"

# 4. A socket nobody listens on (a serve that was killed) is replaced.
"$PYTHON3" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/d.sock"
start_serve d
ok $? "serve replaces a socket nobody listens on"
kill -TERM "$SERVE_PID"
ended_within 10 "$SERVE_PID"
ok $? "and stops"
done_testing
