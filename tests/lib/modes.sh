# modes.sh: the four isolation modes an attack runs in. Source it after
# tap.sh. A suite loops over them:
#
#   for m in $RMS_MODES; do
#       mode_enter $m || { skip "$m: $MODE_SKIP"; continue; }
#       mode_rms run $T/x.py --json >$T/x.json
#       ...
#   done
#
# jail-root      the namespace jail, the program run by root
# jail-user      the namespace jail, the program run by an unprivileged
#                user (nobody when the tests run as root, else this user)
# fallback-root  the fallback (isolation = rlimits), run by root
# fallback-user  the fallback, run by an unprivileged user
#
# Each mode has a state directory of its own (MODE_STATE), owned by the
# user who runs the program, so that what one mode leaves cannot be seen
# by the next.
RMS_MODES="jail-root jail-user fallback-root fallback-user"
RMS_NOBODY=65534

# mode_enter MODE: the program runs in MODE from now on (mode_rms). Returns
# 1 with the reason in MODE_SKIP when this machine cannot run the mode.
mode_enter() {
    MODE=$1
    MODE_SKIP=
    MODE_RUNAS=()
    MODE_STATE=$TEST_TMP/state-$MODE
    MODE_ROOT=0
    case $MODE in
    jail-*) MODE_ISOLATION=namespaces ;;
    fallback-*) MODE_ISOLATION=rlimits ;;
    *) MODE_SKIP="no such mode"; return 1 ;;
    esac
    mkdir -p "$MODE_STATE"
    case $MODE in
    *-root)
        if [ "$(id -u)" != 0 ]; then
            MODE_SKIP="needs root (the tests run as $(id -un))"
            return 1
        fi
        MODE_ROOT=1
        ;;
    *-user)
        if [ "$(id -u)" = 0 ]; then
            if ! command -v setpriv >/dev/null; then
                MODE_SKIP="setpriv is missing: cannot drop to an unprivileged user"
                return 1
            fi
            MODE_RUNAS=(setpriv --reuid=$RMS_NOBODY --regid=$RMS_NOBODY --clear-groups)
            chown $RMS_NOBODY:$RMS_NOBODY "$MODE_STATE"
            chmod 755 "$TEST_TMP"
        fi
        ;;
    esac
    if [ $MODE_ISOLATION = namespaces ] && ! mode_rms check-sandbox >/dev/null 2>&1; then
        MODE_SKIP="this host cannot make the namespaces (check-sandbox says why)"
        return 1
    fi
    return 0
}

# mode_rms ARGS...: the program with ARGS in the current mode, with a
# clean environment of the test's choosing (RMS_MODE_ENV: more VAR=VALUE
# words to pass).
mode_rms() {
    "${MODE_RUNAS[@]}" env -u RUNMYSCRIPT_CONFIG RUNMYSCRIPT_STATE_DIR="$MODE_STATE" \
        RUNMYSCRIPT_ISOLATION=$MODE_ISOLATION RUNMYSCRIPT_REQUIRE_ISOLATION=off ${RMS_MODE_ENV:-} \
        "$RUNMYSCRIPT" "$@"
}

# mode_cell ARGS...: tests/sandbox/cell (a kernel's cells, as serve's
# workers run them) with ARGS in the current mode, as mode_rms.
mode_cell() {
    "${MODE_RUNAS[@]}" env -u RUNMYSCRIPT_CONFIG RUNMYSCRIPT_STATE_DIR="$MODE_STATE" \
        RUNMYSCRIPT_ISOLATION=$MODE_ISOLATION RUNMYSCRIPT_REQUIRE_ISOLATION=off ${RMS_MODE_ENV:-} \
        "$top_builddir/tests/sandbox/cell" "$@"
}

# mode_file PATH...: makes the test's files readable by the mode's user.
mode_file() {
    chmod a+rX "$@"
}

# mode_memory: how check-sandbox says `memory` holds a run in the current
# mode: "cgroup v1 (whole run)", "cgroup v2 (whole run)", or "watched: ...".
mode_memory() {
    local key="memory (fallback)"
    [ $MODE_ISOLATION = namespaces ] && key="memory (jail)"
    mode_rms check-sandbox 2>&1 | grep -F "$key:" | sed 's/^[^:]*: *//'
}

# probe NAME ARGS... <<PY: runs the script (stdin) in the current mode with a
# process marker, under $T; sets J (the result file), LOGS and TOK.
# field KEY: the result's KEY. gone WHAT: no process of the last probe is
# left.
probe() {
    local name=$1
    shift
    TOK=$(new_token)
    { mark_py "$TOK"; cat; } >$T/$MODE-$name.py
    mode_file $T/$MODE-$name.py
    J=$T/$MODE-$name.json
    mode_rms run $T/$MODE-$name.py --json "$@" >$J 2>$J.err
    LOGS=$(jget $J 'r["logs"]' 2>/dev/null)
    [ -s $J ] || diag "$MODE $name: no result: $(head -c 300 $J.err)"
}
field() { jget $J "r[\"$1\"]" 2>/dev/null; }
gone() {
    no_process_named "$TOK"
    ok $? "$MODE: $1: no process of the run is left"
}
