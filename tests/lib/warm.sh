# warm.sh: a warm pool for a test's state directory. Source it after
# tap.sh. warm_serve starts `runmyscript serve` (one worker, on a Unix
# socket in TEST_TMP) whose pool serves RUNMYSCRIPT_STATE_DIR, so that the
# test's `runmyscript run` calls start warm; warm_ready waits until the
# pool has a zygote ready for N environments; warm_stop ends the server
# (and with it the pool). With RUNAS set (an array: the command that
# drops to an unprivileged user, as tests/sandbox/attacks.sh sets it), the
# server and the warming run are that user's, with the state directory
# that user owns. Warm starts need user namespaces: warm_serve says skip
# where the host cannot make them.
WARM_SERVE_PID=
warm_stats() { cat "$RUNMYSCRIPT_STATE_DIR/.warm/stats" 2>/dev/null; }
warm_envs() { warm_stats | sed -n 's/^envs //p'; }
warm_runs() { warm_stats | sed -n 's/^runs //p'; }
warm_has() { [ "$(warm_envs)" -ge "$1" ] 2>/dev/null; }
# warm_serve [--set K=V]...: the server, and one stdlib run whose zygote
# the pool then makes ready (the first run of an environment is cold).
warm_serve() {
    "${RUNAS[@]}" "$RUNMYSCRIPT" check-sandbox 2>/dev/null | grep -q '^namespaces and mounts: *yes' ||
        skip_all "warm starts need user namespaces, which this host cannot make"
    # The server's socket, in a directory of the server's user.
    mkdir -p "$TEST_TMP/warm-sock"
    [ ${#RUNAS[@]} = 0 ] || chown --reference="$RUNMYSCRIPT_STATE_DIR" "$TEST_TMP/warm-sock"
    "${RUNAS[@]}" "$RUNMYSCRIPT" serve --listen "unix:$TEST_TMP/warm-sock/fcgi.sock" --workers 1 --set log_level=info "$@" >"$TEST_TMP/warm-serve.log" 2>&1 &
    WARM_SERVE_PID=$!
    trap 'warm_stop; cleanup_tmp' EXIT
    wait_until test -S "$RUNMYSCRIPT_STATE_DIR/.warm/pool.sock" || { diag "$(cat "$TEST_TMP/warm-serve.log")"; return 1; }
    printf 'print("warming")\n' >"$TEST_TMP/warming.py"
    chmod 644 "$TEST_TMP/warming.py"
    "${RUNAS[@]}" "$RUNMYSCRIPT" run "$TEST_TMP/warming.py" --json >/dev/null 2>&1
    warm_ready 1
}
warm_ready() { wait_until warm_has "$1"; }
warm_stop() {
    [ -n "$WARM_SERVE_PID" ] || return 0
    kill -TERM "$WARM_SERVE_PID" 2>/dev/null
    wait "$WARM_SERVE_PID" 2>/dev/null
    WARM_SERVE_PID=
}
# The pid of the pool serving this test's state directory (its
# environment names it), or nothing.
warm_pool_pid() {
    local p
    for p in $(pgrep -x rms-warm-pool); do
        tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx "RUNMYSCRIPT_STATE_DIR=$RUNMYSCRIPT_STATE_DIR" && echo $p
    done
}
# The parent pid of process $1.
ppid_of() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2; }
# The pids of the zygotes of this test's pool (a zygote's parent is the
# init of its jail, whose parent is the pool): never another test's, which
# may run at the same time on the same machine.
warm_zygotes() {
    local pool p
    pool=$(warm_pool_pid)
    [ -n "$pool" ] || return 0
    for p in /proc/[0-9]*; do
        [ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -d' ' -f2)" = --sandbox-zygote ] || continue
        [ "$(ppid_of "$(ppid_of "${p#/proc/}")")" = "$pool" ] && echo "${p#/proc/}"
    done
}
