# tap.sh: TAP helpers for the shell test drivers. Source it; call done_testing
# at the end. Every test gets its own temporary directory and state dir,
# removed on exit.
set -u
# Never the terminal make was started from: a script's input() in
# `runmyscript run` reads the CLI's own stdin (a test that wants to answer
# it gives its own).
exec </dev/null
TAP_N=0
TAP_FAILED=0
: "${RUNMYSCRIPT:?RUNMYSCRIPT must point at the built program}"
PYTHON3=${PYTHON3:-/usr/bin/python3}
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rms-test.XXXXXX") || exit 99
# Every file a test writes goes below TEST_TMP: never let it be empty.
case "$TEST_TMP" in /?*/rms-test.*) ;; *) echo "Bail out! no temporary directory ($TEST_TMP)"; exit 99 ;; esac
chmod 755 "$TEST_TMP"
export RUNMYSCRIPT_STATE_DIR="$TEST_TMP/state"
unset RUNMYSCRIPT_CONFIG
# The CLI suites run twice: in the namespace jail (the default) and, through
# the *-rlimits.sh wrappers, in the rlimits fallback.
# A suite that needs the jail skips where the host cannot make it; one that
# only needs runs (RMS_JAIL_OPTIONAL=1) falls back to rlimits there.
if [ "${RMS_ISOLATION:-}" != rlimits ] && ! "$RUNMYSCRIPT" check-sandbox >/dev/null 2>&1; then
    if [ -n "${RMS_JAIL_OPTIONAL:-}" ]; then
        RMS_ISOLATION=rlimits
    else
        echo "1..0 # SKIP this host cannot make the jail's namespaces (runmyscript check-sandbox says why)"
        exit 0
    fi
fi
if [ "${RMS_ISOLATION:-}" = rlimits ]; then
    export RUNMYSCRIPT_ISOLATION=rlimits RUNMYSCRIPT_REQUIRE_ISOLATION=off
fi
cleanup_tmp() { [ -n "${KEEP_TEST_TMP:-}" ] || rm -rf "$TEST_TMP"; }
trap cleanup_tmp EXIT

# TAP_TODO=REASON before a test marks it a known failure, written down so
# that it keeps running: "not ok ... # TODO REASON" is an expected failure,
# and once it passes "ok ... # TODO" is an unexpected pass, which fails
# `make check` until the mark is taken away.
ok() { # ok RC DESCRIPTION...
    local rc=$1 todo=
    shift
    TAP_N=$((TAP_N + 1))
    [ -n "${TAP_TODO:-}" ] && todo=" # TODO $TAP_TODO"
    if [ "$rc" -eq 0 ]; then
        echo "ok $TAP_N - $*$todo"
    else
        echo "not ok $TAP_N - $*$todo"
        [ -n "$todo" ] || TAP_FAILED=$((TAP_FAILED + 1))
    fi
}
is() { # is GOT WANT DESCRIPTION...
    local got=$1 want=$2
    shift 2
    if [ "$got" = "$want" ]; then
        ok 0 "$*"
    else
        ok 1 "$*"
        printf '#   got:  %s\n#   want: %s\n' "$got" "$want"
    fi
}
like() { # like GOT SUBSTRING DESCRIPTION...
    local got=$1 want=$2
    shift 2
    case "$got" in
    *"$want"*) ok 0 "$*" ;;
    *) ok 1 "$*"; printf '#   got:  %s\n#   want (inside): %s\n' "$got" "$want" ;;
    esac
}
skip() { # skip REASON: one skipped test
    TAP_N=$((TAP_N + 1))
    echo "ok $TAP_N # SKIP $*"
}
diag() { printf '# %s\n' "$*"; }
# tap_merge PREFIX FILE: the TAP another program printed into FILE, numbered
# into this one's (its plan dropped, each description prefixed).
tap_merge() {
    local prefix=$1 line
    while IFS= read -r line; do
        case "$line" in
        "ok "*"# SKIP "*) skip "$prefix${line#*# SKIP }" ;;
        "ok "*) ok 0 "$prefix${line#ok * - }" ;;
        "not ok "*) ok 1 "$prefix${line#not ok * - }" ;;
        "1.."*) ;;
        *) printf '%s\n' "$line" ;;
        esac
    done <"$2"
}
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# ended_within SECONDS PID...: 0 once every PID has ended; else 1, and
# $left names those still alive.
ended_within() {
    local s=$1 i p
    shift
    for i in $(seq $((s * 10))); do
        left=""
        for p in "$@"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    return 1
}
done_testing() {
    echo "1..$TAP_N"
    [ "$TAP_FAILED" -eq 0 ]
}

# jget FILE EXPR: evaluates a Python expression on the JSON in FILE (bound to
# r) and prints the result (JSON for lists/dicts/None/bools).
jget() {
    "$PYTHON3" - "$1" "$2" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    r = json.load(f)
v = eval(sys.argv[2], {"r": r})
print(v if isinstance(v, str) else json.dumps(v))
PY
}

# run_json OUTFILE ARGS...: runs `runmyscript run ARGS --json` into OUTFILE,
# sets RC to its exit status.
run_json() {
    local out=$1
    shift
    RC=0
    "$RUNMYSCRIPT" run "$@" --json >"$out" 2>"$out.err" || RC=$?
}

# Marking a script's processes so that a test can look for them from
# outside, whatever the namespaces: `new_token` prints a fresh name, and
# `mark_py TOKEN` prints a line of Python that gives the process (and every
# child it forks) that name (prctl PR_SET_NAME). `no_process_named TOKEN`
# is true when no process on the machine carries it.
new_token() { printf 'rms%s' "$(od -An -N5 -tx1 /dev/urandom | tr -d ' \n')"; }
mark_py() { printf 'import ctypes; ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)\n' "$1"; }
no_process_named() {
    local p
    for p in /proc/[0-9]*/comm; do
        [ "$(cat "$p" 2>/dev/null)" = "$1" ] && return 1
    done
    return 0
}

# wait_until CMD...: polls CMD every 50 ms until it succeeds; gives up
# after 120 s (a guard against a hang, not a timing assertion).
wait_until() {
    local i
    for ((i = 0; i < 2400; i++)); do
        "$@" && return 0
        sleep 0.05
    done
    return 1
}

# env_dirs STATE: the published dependency environments (32-hex names).
env_dirs() {
    ls "$1/envs" 2>/dev/null | grep -E '^[0-9a-f]{32}$' | sort | tr '\n' ' '
}
