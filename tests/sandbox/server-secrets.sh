#!/bin/bash
# What a script can learn of the program that runs it, and what a run can
# leave behind with the wrong owner, in every isolation mode
# (tests/lib/modes.sh): the jail and the fallback, each run by root and by
# an unprivileged user.
#
# - Nothing of the server reaches any process the script can see: a token
#   given on the command line (--set auth_token=...), a presigned input URL
#   and a variable of the server's environment are looked for in the
#   command line and environment of every process in /proc; the script's
#   parent (the jail's init, or the program itself in the fallback) can
#   be neither read (/proc/PID/environ, /proc/PID/mem) nor written.
# - As root, the run's files go back to the server's uid however deep they
#   are, and the run directory keeps its mode whatever the script did to it.
# - In a session run, stdin (the input, bound read-only) cannot be reopened
#   read-write through /proc/self/fd/0.
#
# Harmless if it succeeded: the script only reads other processes' /proc
# files and writes its own workspace.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/modes.sh"
T=$TEST_TMP

cat >$T/look.py <<'PY'
import os, sys
secrets = [s.encode() for s in sys.stdin.read().split()]
seen = []
try:
    pids = os.listdir("/proc")
except OSError:
    pids = []  # not even a listing (Landlock): then each known pid is tried
pids += [str(os.getppid()), "1"]
for p in pids:
    if not p.isdigit() or int(p) == os.getpid():
        continue
    for f in ("cmdline", "environ"):
        try:
            with open(f"/proc/{p}/{f}", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        for s in secrets:
            if s in data:
                seen.append(f"{p}/{f}")
print("R seen", sorted(set(seen)) or "nothing")
pp = os.getppid()
for f, mode in (("environ", "rb"), ("mem", "rb"), ("mem", "r+b")):
    try:
        with open(f"/proc/{pp}/{f}", mode) as fh:
            if f == "mem":
                fh.seek(0x400000)
            fh.read(16)
        print("R parent", f, mode, "open")
    except OSError as e:
        print("R parent", f, mode, "refused")
PY
cat >$T/deep.py <<'PY'
import os
# 200 levels, below the kernel's limits and far below any fd limit.
fd = os.open(".", os.O_RDONLY)
for i in range(200):
    os.mkdir("d", dir_fd=fd)
    nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
os.close(os.open("deep-file", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
os.chmod(".", 0o777)
print("R deep done")
PY
cat >$T/stdin.py <<'PY'
import os
try:
    with open("/proc/self/fd/0", "r+b") as f:
        f.write(b"changed")
    print("R stdin writable")
except OSError as e:
    print("R stdin refused", e.errno)
PY
mode_file $T/look.py $T/deep.py $T/stdin.py

for m in $RMS_MODES; do
    if ! mode_enter $m; then
        skip "$m: $MODE_SKIP"
        continue
    fi
    TOKEN=$(new_token)
    URLTOK=$(new_token)
    ENVTOK=$(new_token)
    # index_url stands for any location with credentials in it: the script
    # imports nothing to install, so it is never used, only spelt.
    J=$T/$m-look.json
    RC=0
    RMS_MODE_ENV="RMS_SERVER_SECRET=$ENVTOK" mode_rms run $T/look.py --json --set auth_token=$TOKEN \
        --input-text "$TOKEN $URLTOK $ENVTOK" --set "index_url=http://127.0.0.1:1/simple?token=$URLTOK" >$J 2>$J.err || RC=$?
    logs=$(jget $J 'r["logs"]' 2>/dev/null)
    like "$logs" "R seen nothing" "$m: no process the script sees holds the token or the server's environment"
    like "$logs" "R parent environ rb refused" "$m: the parent's environment cannot be read"
    like "$logs" "R parent mem rb refused" "$m: the parent's memory cannot be read"
    like "$logs" "R parent mem r+b refused" "$m: nor written"

    # The run directory and everything in it are the server's after the run.
    J=$T/$m-deep.json
    mode_rms run $T/deep.py --json >$J 2>$J.err
    rid=$(jget $J 'r["run_id"]' 2>/dev/null)
    rdir=$MODE_STATE/runs/$rid
    like "$(jget $J 'r["logs"]' 2>/dev/null)" "R deep done" "$m: the script made a tree 200 levels deep"
    if [ $MODE_ROOT = 1 ]; then
        strays=$(find "$rdir" ! -uid 0 2>/dev/null | head -3)
        is "$strays" "" "$m: as root, nothing of the run keeps the sandbox uid, however deep"
        J2=$T/$m-plain.json
        mode_rms run $T/stdin.py --json >$J2 2>&1
        want=$(stat -c %a "$MODE_STATE/runs/$(jget $J2 'r["run_id"]')")
        is "$(stat -c %a "$rdir")" "$want" "$m: the run directory has its mode back ($want), not the script's 777"
    else
        strays=$(find "$rdir" ! -uid "$( [ "$(id -u)" = 0 ] && echo $RMS_NOBODY || id -u)" 2>/dev/null | head -3)
        is "$strays" "" "$m: unprivileged, every file of the run is the server's own"
    fi

    # A session run: the input is read-only, stdin too.
    mkdir -p $T/$m-session && chown --reference="$MODE_STATE" $T/$m-session
    J=$T/$m-stdin.json
    mode_rms run $T/stdin.py --json --session $T/$m-session --input-text "the input" >$J 2>$J.err
    logs=$(jget $J 'r["logs"]' 2>/dev/null)
    like "$logs" "R stdin refused" "$m: a session run cannot reopen its stdin read-write"
    rid=$(jget $J 'r["run_id"]' 2>/dev/null)
    is "$(cat "$MODE_STATE/runs/$rid/input" 2>/dev/null)" "the input" "$m: the input is as it was given"
done
done_testing
