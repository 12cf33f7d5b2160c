#!/bin/bash
# Every run limit, crossed: the run is contained, the status names it, and no
# process of the run survives.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP

# Each script marks its processes with a token (see tap.sh) so that the
# test can look for leftovers from outside the namespaces.
script() { # script FILE TOKEN: writes the marker line, then stdin, to FILE
    { mark_py "$2"; cat; } >"$1"
}

# --- wall time ---
tok=$(new_token)
printf 'while True:\n    pass\n' | script $T/spin.py $tok
run_json $T/spin.json $T/spin.py --timeout 1
is "$RC" 124 "a busy loop: exit 124 at the wall limit"
is "$(jget $T/spin.json 'r["status"]')" timeout "status timeout"
is "$(jget $T/spin.json 'r["limit"]')" wall_time "limit wall_time"
like "$(jget $T/spin.json 'r["logs"]')" "wall time limit (timeout = 1 s)" "the log says why it stopped"
no_process_named $tok
ok $? "busy loop: no process of the run is left"

tok=$(new_token)
printf 'import time\nprint("sleeping", flush=True)\ntime.sleep(1000)\n' | script $T/sleep.py $tok
run_json $T/sleep.json $T/sleep.py --timeout 1
is "$(jget $T/sleep.json 'r["status"]')" timeout "time.sleep(1000) is stopped at the wall limit"
is "$(jget $T/sleep.json 'r["signal"]')" SIGTERM "by SIGTERM first"
no_process_named $tok
ok $? "sleep: no process of the run is left"

tok=$(new_token)
script $T/stubborn.py $tok <<'PY'
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ignoring SIGTERM", flush=True)
time.sleep(1000)
PY
run_json $T/stubborn.json $T/stubborn.py --timeout 1 --set kill_grace=500ms
is "$(jget $T/stubborn.json 'r["status"]')" timeout "a script that ignores SIGTERM is still stopped"
is "$(jget $T/stubborn.json 'r["signal"]')" SIGKILL "by SIGKILL after kill_grace"
no_process_named $tok
ok $? "SIGTERM ignored: no process of the run is left"

# --- a daemon: fork, setsid, fork; the first process returns at once. The
# daemon beats (appends to a file) until it dies: after the run the file
# must stop growing. ---
daemon() { # daemon FILE TOKEN PARENT_SLEEP
    script "$1" "$2" <<PY
import os, sys, time
out = os.environ["SCRIPT_OUTPUT"]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            with open(os.path.join(out, "beat"), "a") as f:
                f.write("x")
            time.sleep(0.02)
    os._exit(0)
time.sleep($3)
print("parent done")
PY
}
beats() { stat -c %s "$1" 2>/dev/null || echo 0; }
tok=$(new_token)
daemon $T/daemon.py $tok 0.5
run_json $T/daemon.json $T/daemon.py --timeout 20
is "$(jget $T/daemon.json 'r["status"]')" ok "the daemonising script finishes"
beat=$RUNMYSCRIPT_STATE_DIR/runs/$(jget $T/daemon.json 'r["run_id"]')/output/beat
b1=$(beats "$beat")
[ "$b1" -gt 0 ]
ok $? "the daemon was beating ($b1 beats)"
sleep 0.3
is "$(beats "$beat")" "$b1" "the double-forked daemon did not survive the run"
no_process_named $tok
ok $? "daemon: no process of the run is left"

tok=$(new_token)
daemon $T/daemon2.py $tok 1000
run_json $T/daemon2.json $T/daemon2.py --timeout 1
is "$(jget $T/daemon2.json 'r["status"]')" timeout "daemon + timeout: status timeout"
beat=$RUNMYSCRIPT_STATE_DIR/runs/$(jget $T/daemon2.json 'r["run_id"]')/output/beat
b1=$(beats "$beat")
sleep 0.3
is "$(beats "$beat")" "$b1" "the daemon is gone after the timeout too"
no_process_named $tok
ok $? "daemon + timeout: no process of the run is left"

# --- one run at a time per session: a second run waits for the first ---
mkdir -p $T/sess && chmod 711 $T/sess
cat >$T/first.py <<'PY'
import os, time
time.sleep(1.5)
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "first.txt"), "w").write("first was here\n")
print("first done")
PY
cat >$T/second.py <<'PY'
import os
p = os.path.join(os.environ["SCRIPT_OUTPUT"], "first.txt")
print("second sees:", open(p).read().strip() if os.path.exists(p) else "nothing")
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "second.txt"), "w").write("second\n")
PY
"$RUNMYSCRIPT" run $T/first.py --session $T/sess --json >$T/first.json 2>/dev/null &
first=$!
sleep 0.5
run_json $T/second.json $T/second.py --session $T/sess
wait $first
is "$(jget $T/first.json 'r["status"]')" ok "two runs in one session: the first is ok"
is "$(jget $T/second.json 'r["status"]')" ok "the second is ok"
like "$(jget $T/second.json 'r["logs"]')" "second sees: first was here" "the second ran after the first had finished"

# --- CPU time ---
run_json $T/cpu.json $T/spin.py --timeout 30 --set cpu_time=1
is "$RC" 124 "cpu_time: exit 124"
is "$(jget $T/cpu.json 'r["status"]')" timeout "cpu_time: status timeout"
is "$(jget $T/cpu.json 'r["limit"]')" cpu_time "limit cpu_time"

# --- memory ---
printf 'x = bytearray(1500 * 1024 * 1024)\nprint("allocated")\n' >$T/mem.py
run_json $T/mem.json $T/mem.py --set memory=256M
is "$RC" 121 "memory: exit 121"
is "$(jget $T/mem.json 'r["status"]')" memory "status memory"
is "$(jget $T/mem.json 'r["limit"]')" memory "limit memory"

# --- file size ---
cat >$T/big.py <<'PY'
import os
with open(os.path.join(os.environ["SCRIPT_OUTPUT"], "big.bin"), "wb") as f:
    f.write(b"x" * (3 * 1024 * 1024))
PY
run_json $T/fsize.json $T/big.py --set file_size=1M
is "$RC" 122 "file_size: exit 122"
is "$(jget $T/fsize.json 'r["status"]')" output_limit "status output_limit"
is "$(jget $T/fsize.json 'r["limit"]')" file_size "limit file_size"
like "$(jget $T/fsize.json 'r["logs"]')" "File too large" "the script saw EFBIG"

# --- output files and bytes ---
cat >$T/many.py <<'PY'
import os, time
out = os.environ["SCRIPT_OUTPUT"]
for i in range(200):
    with open(os.path.join(out, "f%03d.txt" % i), "w") as f:
        f.write("x" * 2000)
time.sleep(30)
PY
run_json $T/files.json $T/many.py --set output_files=50 --timeout 60
is "$(jget $T/files.json 'r["status"]')" output_limit "output_files: status output_limit"
is "$(jget $T/files.json 'r["limit"]')" output_files "limit output_files"
is "$(jget $T/files.json 'len(r["artifacts"])')" 50 "only output_files artifacts are listed"
like "$(jget $T/files.json 'r["logs"]')" "output/ passed its limit" "the run was stopped while running, not after 30 s of sleep"
run_json $T/bytes.json $T/many.py --set output_bytes=20K --timeout 60
is "$(jget $T/bytes.json 'r["status"]')" output_limit "output_bytes: status output_limit"
is "$(jget $T/bytes.json 'r["limit"]')" output_bytes "limit output_bytes"
is "$(jget $T/bytes.json 'sum(a["size"] for a in r["artifacts"]) <= 20480')" true "the listed files fit in output_bytes"
unzip -tq "$RUNMYSCRIPT_STATE_DIR/runs/$(jget $T/bytes.json 'r["run_id"]')/artifacts.zip" >/dev/null
ok $? "the zip of a stopped run is still whole"

# --- open files ---
cat >$T/fds.py <<'PY'
import errno
fs = []
try:
    for i in range(500):
        fs.append(open("/dev/null"))
    print("opened all")
except OSError as e:
    print("stopped at", len(fs), errno.errorcode[e.errno])
PY
run_json $T/fds.json $T/fds.py --set open_files=64
like "$(jget $T/fds.json 'r["logs"]')" "EMFILE" "open_files: the script gets EMFILE"

# --- processes: RLIMIT_NPROC (counted per user namespace), or the pids
# cgroup when we are root ---
tok=$(new_token)
script $T/forks.py $tok <<'PY'
import os, time
n = 0
try:
    for i in range(100):
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        n += 1
    print("forked all")
except OSError as e:
    print("fork failed after", n, e.__class__.__name__)
PY
if [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null; then
        chmod 777 $T
        mkdir -p $T/nobody-state && chown 65534:65534 $T/nobody-state
        RUNMYSCRIPT_STATE_DIR=$T/nobody-state setpriv --reuid=65534 --regid=65534 --clear-groups \
            "$RUNMYSCRIPT" run $T/forks.py --set processes=16 --json >$T/forks.json 2>$T/forks.err
        like "$(jget $T/forks.json 'r["logs"]')" "fork failed after" "processes: fork fails past the limit (as nobody)"
        no_process_named $tok
        ok $? "forks: no process of the run is left"
    else
        skip "running as root and setpriv is missing: RLIMIT_NPROC does not bind root"
        skip "(same)"
    fi
else
    run_json $T/forks.json $T/forks.py --set processes=16
    like "$(jget $T/forks.json 'r["logs"]')" "fork failed after" "processes: fork fails past the limit"
    no_process_named $tok
    ok $? "forks: no process of the run is left"
fi

done_testing
