# streams.sh: what the stream tests share (tests/e2e/streams.sh,
# stream-caps.sh). Source it after tests/e2e/lib.sh, with the stack started.
#
#   health EXPR            a Python expression on /healthz's JSON (h); "down"
#                          when it does not answer within 10 s
#   wait_health EXPR       until EXPR is true (at most 30 s)
#   long_task              a task that runs until it is cancelled (the server's
#                          timeout must allow 300 s): its id in $TID
#   hog_start NAME N [SOURCE]  N subscriptions/listen streams at once on $TID
#                          (tests/lib/stream_hog.py; from the local address
#                          SOURCE: another client), held until hog_stop; its
#                          first line (the counts) in $LINE
#   hog_stop NAME          ends it (SIGTERM); its last line in $LINE
#   slow_start REV KB SLEEP  a tools/call printing KB KiB, then sleeping SLEEP s,
#                          from a client that reads nothing (tests/lib/
#                          slow_reader.py; REV 2025-11-25 in the session $SID)
#   slow_end               the client reads what it can now; its verdict in $line
#   newest_run             the run directory made last
HOG_PY="$top_srcdir/tests/lib/stream_hog.py"

health() {
    curl -sS --max-time 10 -o "$T/hz" "$BASE/healthz" 2>/dev/null || { echo down; return; }
    "$PYTHON3" -c 'import json, sys; h = json.load(open(sys.argv[1])); v = eval(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v))' \
        "$T/hz" "$1"
}

wait_health() {
    local i
    for i in $(seq 150); do
        [ "$(health "$1")" = true ] && return 0
        sleep 0.2
    done
    return 1
}

long_task() {
    CAPS=$TASKS_CAP mpost tools/call '"name":"run_my_script","arguments":{"code":"import time\ntime.sleep(300)"}' \
        -H "Mcp-Name: run_my_script"
    TID=$(jb 'r["result"]["taskId"]')
}

hog_start() {
    local name=$1 n=$2 src=${3:-} i
    "$PYTHON3" "$HOG_PY" --port "$PORT" --task "$TID" --n "$n" --until-term ${src:+--source "$src"} </dev/null \
        >"$T/hog.$name.out" 2>"$T/hog.$name.err" &
    eval "HOG_PID_$name=$!"
    for i in $(seq 1800); do
        [ -s "$T/hog.$name.out" ] && break
        sleep 0.1
    done
    LINE=$(head -1 "$T/hog.$name.out")
}

hog_stop() {
    local pid
    eval "pid=\$HOG_PID_$1"
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    LINE=$(sed -n 2p "$T/hog.$1.out")
}

# hog_count KEY: KEY of $LINE (a JSON object).
hog_count() {
    printf '%s' "$LINE" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

slow_start() {
    rm -f "$T/slow.out" "$T/slow.go"
    "$PYTHON3" "$top_srcdir/tests/lib/slow_reader.py" "$PORT" "${SID:-}" "$@" "$T/slow.go" </dev/null >"$T/slow.out" &
    SLOW_PID=$!
    wait_for grep -q sent "$T/slow.out"
}

slow_end() {
    touch "$T/slow.go"
    wait "$SLOW_PID" 2>/dev/null
    line=$(sed -n 2p "$T/slow.out")
}

newest_run() { ls -t "$T/state/runs" | head -1; }
