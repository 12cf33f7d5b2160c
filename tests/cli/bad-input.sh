#!/bin/bash
# Bad input: a clear one-line error, a distinct exit code, no crash, no
# half-written result presented as complete.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
R=$RUNMYSCRIPT

expect() { # expect CODE MESSAGE-PART DESCRIPTION -- ARGS...
    local code=$1 msg=$2 desc=$3
    shift 4
    local rc=0
    "$R" "$@" >$T/stdout 2>$T/stderr || rc=$?
    is "$rc" "$code" "$desc: exit $code"
    like "$(head -n1 $T/stderr)" "$msg" "$desc: says '$msg'"
    ! grep -qi "sanitizer\|segmentation\|core dumped" $T/stderr
    ok $? "$desc: no crash"
}
runs_made() { ls "$RUNMYSCRIPT_STATE_DIR/runs" 2>/dev/null | grep -c '^[0-9a-f]\{32\}$'; }

: >$T/empty.py
printf 'print("\xff")\n' >$T/latin1.py
printf 'print(1)\n' >$T/ok.py
before=$(runs_made)
expect 65 "the script is empty" "an empty script" -- run $T/empty.py
expect 65 "not valid UTF-8" "a non-UTF-8 script" -- run $T/latin1.py
is "$(runs_made)" "$before" "bad scripts make no run directory"
expect 66 "cannot read script" "a missing script" -- run $T/missing.py
expect 66 "cannot read input" "a missing --input file" -- run $T/ok.py --input $T/missing.json
echo x >$T/afile
expect 73 "--out" "an --out below a file" -- run $T/ok.py --out $T/afile/sub
expect 78 "unknown configuration key 'bogus'" "an unknown --set key" -- run $T/ok.py --set bogus=1
expect 78 "--set bogus" "a --set without =" -- run $T/ok.py --set bogus
expect 78 "--timeout" "a bad --timeout" -- run $T/ok.py --timeout soon
expect 78 "out of range" "a --timeout out of range" -- run $T/ok.py --timeout 0
expect 64 "which script" "no script" -- run
expect 64 "one script at a time" "two scripts" -- run $T/ok.py $T/ok.py
expect 64 "run: unknown option --frobnicate (runmyscript run --help lists the options)" "an unknown option" -- run $T/ok.py --frobnicate
is "$(wc -l <$T/stderr)" 1 "an unknown option: one line, not the whole help"
expect 64 "run: --with needs a value" "an option without its value" -- run $T/ok.py --with
is "$(wc -l <$T/stderr)" 1 "one line there too"
expect 64 "config: unknown option --frobnicate" "an unknown option of config" -- config --frobnicate
"$R" config --help >$T/stdout 2>&1
like "$(cat $T/stdout)" "usage: runmyscript config [--config FILE] [--set KEY=VALUE]" "config --help"
expect 64 "give one of them" "--input and --input-text" -- run $T/ok.py --input $T/ok.py --input-text x
expect 64 "both come from stdin" "script and input both on stdin" -- run - --input -
head -c 3000 /dev/zero | tr '\0' '#' >$T/large.py
expect 65 "is larger than code_bytes (1.0 KiB)" "a script over code_bytes, with its value" -- run $T/large.py --set code_bytes=1K
expect 64 "unknown command" "an unknown command" -- frobnicate
is "$(wc -l <$T/stderr)" 1 "an unknown command: one line"
RUNMYSCRIPT_TIMEOUT=forever "$R" run $T/ok.py >/dev/null 2>$T/stderr
is "$?" 78 "a bad RUNMYSCRIPT_ variable: exit 78"
like "$(cat $T/stderr)" "RUNMYSCRIPT_TIMEOUT" "and names the variable"
"$R" run $T/ok.py --config $T/nope.conf >/dev/null 2>$T/stderr
is "$?" 78 "a missing --config file: exit 78"
"$R" run $T/ok.py --set python=/nonexistent/python3 >/dev/null 2>$T/stderr
is "$?" 125 "a python that does not exist: the service failed, exit 125"
like "$(cat $T/stderr)" "/nonexistent/python3" "and says which"

# A full disk under the state directory: a 1 MiB tmpfs in a private mount
# namespace (root only), filled before the run. With the defaults the
# low-disk guard (disk_reserve) refuses the run before it starts; with the
# guard off the run meets the full disk itself.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
    mkdir -p $T/full
    unshare --mount --propagation private bash -c '
        mount -t tmpfs -o size=1m tmpfs "$1" || exit 99
        export RUNMYSCRIPT_STATE_DIR="$1"
        "$2" run "$3" >/dev/null 2>&1           # makes the base environment
        dd if=/dev/zero of="$1/filler" bs=4k >/dev/null 2>&1
        rc=0
        "$2" run "$3" --json >"$4/guard.json" 2>"$4/guard.err" || rc=$?
        echo $rc >"$4/guard.rc"
        rc=0
        "$2" run "$3" --set disk_reserve=0 --json >"$4/full.json" 2>"$4/full.err" || rc=$?
        echo $rc >"$4/full.rc"
        # Nothing published as complete: no result.json without its run.
        for d in "$1"/runs/*/; do
            [ -f "$d/result.json" ] && [ ! -f "$d/log" ] && echo "half: $d" >>"$4/half"
        done
        ls "$1"/runs/*/.result.json.*.tmp 2>/dev/null >>"$4/half"
        exit 0' - $T/full "$R" $T/ok.py $T
    is "$(cat $T/guard.rc 2>/dev/null)" 74 "a full state disk, the guard on (the default): exit 74"
    like "$(cat $T/guard.err 2>/dev/null)" "low on disk space (0 B free, disk_reserve keeps" "a full state disk, the guard on: says so, naming disk_reserve"
    is "$(wc -l <$T/guard.err 2>/dev/null)" 1 "a full state disk, the guard on: in one line"
    is "$(cat $T/full.rc 2>/dev/null)" 74 "a full state disk, disk_reserve = 0: the run meets the full disk, exit 74 (low disk)"
    like "$(cat $T/full.err 2>/dev/null)" "No space left on device" "a full state disk: says so in one line"
    [ ! -s $T/half ]
    ok $? "a full state disk: no half-written result"
else
    skip "the full-disk case needs root and unshare for a private tmpfs"
    skip "(same)"
    skip "(same)"
fi
done_testing
