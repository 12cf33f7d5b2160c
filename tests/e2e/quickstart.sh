#!/bin/bash
# ./quickstart serve, with the program built already (QUICKSTART_PROGRAM):
# it stops everything it started whatever ended first (nginx killed, then
# SIGTERM), ends with a message when nginx dies, refuses a port in use and
# a run directory in use before it starts anything, and the first one's
# token is still required afterwards; it writes runmyscript.conf next to
# the program for the command line, and keeps one it did not write.
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
T=$TEST_TMP
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "1..0 # SKIP nginx is not installed (./quickstart test installs it)"; exit 0; }
command -v curl >/dev/null || { echo "1..0 # SKIP curl is not installed"; exit 0; }
command -v flock >/dev/null || { echo "1..0 # SKIP flock is not installed"; exit 0; }
dpkg-query -W -f='${Status}' nginx curl 2>/dev/null | grep -q "install ok installed" ||
    { echo "1..0 # SKIP quickstart asks dpkg for nginx and curl, which has neither"; exit 0; }
# The program through a link of the test's own: quickstart writes
# runmyscript.conf next to it, here and not in the build.
mkdir -p "$T/bin" "$T/wheels"
ln -s "$RUNMYSCRIPT" "$T/bin/runmyscript"
export PATH="$PATH:/usr/sbin" QUICKSTART_PROGRAM=$T/bin/runmyscript RUNMYSCRIPT_WARM=off
QS_PIDS="" SERVE_PIDS=""
on_exit() {
    for p in $QS_PIDS $SERVE_PIDS; do kill -TERM "$p" 2>/dev/null; done
    sleep 1
    # An nginx a quickstart left: stopped too.
    for d in "$T"/run*; do
        [ -f "$d/nginx.pid" ] && kill -KILL "$(cat "$d/nginx.pid")" 2>/dev/null
    done
    cleanup_tmp
}
trap on_exit EXIT
free_port() {
    "$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# qs NAME PORT RUNDIR [VAR=VALUE...]: ./quickstart serve in the background,
# its output in $T/NAME.out; QS_PID.
qs() {
    local name=$1 port=$2 dir=$3
    shift 3
    env PORT="$port" QUICKSTART_RUN_DIR="$dir" "$@" "$top_srcdir/quickstart" serve >"$T/$name.out" 2>&1 &
    QS_PID=$!
    QS_PIDS="$QS_PIDS $QS_PID"
}
# ready NAME: 0 once quickstart NAME printed its URLs.
ready() {
    local i
    for i in $(seq 300); do
        grep -q "^web page:" "$T/$1.out" && return 0
        sleep 0.1
    done
    return 1
}
# serving QS_PID: $servers, the pid of the runmyscript serve that
# quickstart started.
serving() {
    servers=$(pgrep -P "$1" -x runmyscript | tr '\n' ' ' | sed 's/ $//')
    SERVE_PIDS="$SERVE_PIDS $servers"
}
run_status() { # run_status PORT [TOKEN]: /api/run's HTTP status
    curl -s -o /dev/null -w '%{http_code}' ${2:+-H "Authorization: Bearer $2"} \
        -H 'Content-Type: application/json' --data '{"code":"print(1)"}' "http://127.0.0.1:$1/api/run"
}

port=$(free_port)
qs a "$port" "$T/run-a" RUNMYSCRIPT_AUTH_TOKEN=secret-a
ready a
ok $? "quickstart serve starts" || sed 's/^/# /' "$T/a.out"
a=$QS_PID
is "$(run_status "$port")" 401 "its /api/run wants the token"

# A second one on the same port: refused before it starts anything.
qs b "$port" "$T/run-b"
ended_within 30 "$QS_PID"
ok $? "a second quickstart on the same port ends"
wait "$QS_PID"
is "$?" 1 "with status 1"
like "$(cat "$T/b.out")" "port $port on 127.0.0.1 is in use" "and says the port is in use"
[ ! -e "$T/run-b/fcgi.sock" ] && [ ! -e "$T/run-b/nginx.conf" ]
ok $? "it started no server"

# A third one in the first one's run directory: refused.
qs c "$(free_port)" "$T/run-a"
ended_within 30 "$QS_PID"
ok $? "a quickstart in a run directory in use ends"
wait "$QS_PID"
is "$?" 1 "with status 1"
like "$(cat "$T/c.out")" "another ./quickstart serve runs in $T/run-a" "and says another one runs there"
is "$(run_status "$port")" 401 "the first one's token is still required"
is "$(run_status "$port" secret-a)" 200 "and the first one still runs scripts"

# nginx dies: quickstart says so and stops the server.
serving "$a"
[ -n "$servers" ]
ok $? "the first quickstart's server runs ($servers)"
kill -TERM "$(cat "$T/run-a/nginx.pid")"
ended_within 20 "$a"
ok $? "quickstart ends when its nginx dies"
like "$(cat "$T/a.out")" "quickstart: nginx ended" "and says nginx ended"
ended_within 20 $servers
is "$left" "" "runmyscript serve is stopped too"

# stops NAME NGINX_FIRST WHAT: quickstart NAME started again in the same
# run directory and port, then SIGTERM (after its nginx ended, with
# NGINX_FIRST=1): it ends, and nothing of it is left.
stops() {
    qs "$1" "$port" "$T/run-a"
    ready "$1"
    ok $? "quickstart starts again in the same run directory and port" || sed 's/^/# /' "$T/$1.out"
    serving "$QS_PID"
    local ngx
    ngx=$(cat "$T/run-a/nginx.pid")
    if [ "$2" = 1 ]; then
        kill -TERM "$ngx"
        ended_within 10 "$ngx"
    fi
    kill -TERM "$QS_PID"
    ended_within 20 "$QS_PID"
    ok $? "quickstart ends on SIGTERM $3"
    ended_within 20 $servers $ngx
    is "$left" "" "nothing of it is left $3"
}
# runmyscript.conf next to the program: quickstart's own is written with
# the server's state_dir and package sources (and read by the command line
# there); a file of someone else's is kept as it is.
qs g "$(free_port)" "$T/run-g" FIND_LINKS="$T/wheels"
ready g
ok $? "quickstart serve with FIND_LINKS starts" || sed 's/^/# /' "$T/g.out"
like "$(head -n 1 "$T/bin/runmyscript.conf")" "Written by ./quickstart serve" "it wrote runmyscript.conf next to the program"
is "$(env -u RUNMYSCRIPT_STATE_DIR -u RUNMYSCRIPT_FIND_LINKS -u RUNMYSCRIPT_INDEX_URL "$T/bin/runmyscript" config |
    grep -E '^(state_dir|index_url|find_links) = ')" \
    "$(printf 'state_dir = %s\nindex_url = none\nfind_links = %s' "$RUNMYSCRIPT_STATE_DIR" "$T/wheels")" \
    "which gives the command line there the server's state_dir and package sources"
like "$(cat "$T/g.out")" "reads $T/bin/runmyscript.conf" "and quickstart says so"
kill -TERM "$QS_PID"
ended_within 20 "$QS_PID"
printf 'log_level = info\n' >"$T/bin/runmyscript.conf"
qs h "$(free_port)" "$T/run-g" FIND_LINKS="$T/wheels"
ready h
ok $? "quickstart serve starts beside a runmyscript.conf of someone else's" || sed 's/^/# /' "$T/h.out"
is "$(cat "$T/bin/runmyscript.conf")" "log_level = info" "that file is kept as it was"
like "$(cat "$T/h.out")" "was not written by quickstart: kept" "and quickstart says so"
kill -TERM "$QS_PID"
ended_within 20 "$QS_PID"

# nginx gone and SIGTERM right after (the order that once left the server).
stops d 1 "with nginx gone"
# The ordinary case. (Ctrl-C's SIGINT cannot be tried here: a shell
# ignores it in a background job; SIGTERM takes the same path.)
stops e 0 "with nginx running"
done_testing
