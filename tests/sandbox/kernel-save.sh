#!/bin/bash
# Saved kernels: a kernel stopped rather than dropped saves its state into
# its workspace (kernel.py, inside its jail), and the workspace's next cell
# restores it. Driven as serve's workers drive kernels (tests/sandbox/cell:
# exec_kernel_cell, exec_kernel_save, exec_kernel_restore), through real
# processes and jails, with `runmyscript serve` standing for the server
# every kernel ends with (tests/lib/warm.sh). Names of every kind (numbers,
# strings, lists, dicts, a function, a class and its instance, a lambda, a
# DataFrame and arrays, one of 16 MiB, where the wheelhouse has pandas) back after each
# way a kernel stops: kernel_idle, max_kernels, kernel_memory, the server's
# end and a new server, an explicit save; an open file, a socket, a
# generator and a lock listed as not saved, the others back; the saved
# kernel holding no process; a state past kernel_save_bytes not saved, the
# next cell saying why; a reset starting empty; a state a cell rewrote
# loaded only in the kernel's jail (its payload and checks of the attack
# suite as cells after it); a state from another Python version.
# kernel-save-unprivileged.sh runs it all with the server, the kernels and
# the driver an unprivileged user's.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/warm.sh"
T=$TEST_TMP
CELL=$top_builddir/tests/sandbox/cell
RUNAS=()
SERVER_UID=$(id -u)
if [ "${RMS_KERNEL_AS:-self}" = unprivileged ]; then
    [ "$(id -u)" = 0 ] || skip_all "the tests run unprivileged already: kernel-save.sh is this pass"
    command -v setpriv >/dev/null || skip_all "setpriv is missing: cannot drop to an unprivileged user"
    RUNAS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    SERVER_UID=65534
    mkdir -p "$RUNMYSCRIPT_STATE_DIR" && chown 65534:65534 "$RUNMYSCRIPT_STATE_DIR"
    chmod 755 "$T"
fi
diag "pass: $([ ${#RUNAS[@]} = 0 ] && id -un || echo nobody)"
export RUNMYSCRIPT_ISOLATION=namespaces RUNMYSCRIPT_WARM_WAIT=60s
warm_serve || { echo "Bail out! the server did not start"; exit 1; }
export RMS_TEST_SERVER=$WARM_SERVE_PID

ws() { mkdir -p "$T/$1" && { [ ${#RUNAS[@]} = 0 ] || chown 65534:65534 "$T/$1"; } && echo "$T/$1"; }
N=0
# cell [OPTIONS] WS CODE: the result into $J.
cell() {
    N=$((N + 1))
    J=$T/cell-$N.json
    "${RUNAS[@]}" env RMS_TEST_SERVER=$RMS_TEST_SERVER "$CELL" cell "$@" >$J 2>$J.err
    [ -s $J ] || diag "cell $N: no result: $(tail -c 400 $J.err)"
}
ctl() { "${RUNAS[@]}" env RMS_TEST_SERVER=$RMS_TEST_SERVER "$CELL" "$@" 2>/dev/null; }
val() { jget $J 'r["value"]'; }
state() { jget $J 'r["kernel"]["state"]'; }
reason() { jget $J 'r["kernel"]["reason"]'; }
back() { jget $J 'sorted(n for n, t in r["kernel"]["restored"]["names"] if n != "big")'; }
notsaved() { jget $J 'sorted(n for n, t, why in r["kernel"]["restored"]["skipped"])'; }
live() { ctl stats >$T/stats.json; jget $T/stats.json 'r["live"]'; }
# counted MIB: whether the live kernels hold more than MIB MiB together.
counted() { ctl stats >$T/stats.json; [ "$(jget $T/stats.json "r['memory'] > $1 << 20")" = true ]; }
key_of() { printf %s "$(cd "$1" && pwd -P)" | sha256sum | cut -c1-32; }
# stopped WS: whether the workspace's kernel has no host; gone WS waits
# for that.
stopped() { flock -n "$RUNMYSCRIPT_STATE_DIR/kernels/$(key_of "$1")/lock" true; }
gone() { wait_until stopped "$1"; }

HAVE_PD=0
ls "${WHEELHOUSE:-/nonexistent}"/pandas-*.whl >/dev/null 2>&1 && HAVE_PD=1
ls "${WHEELHOUSE:-/nonexistent}"/cloudpickle-*.whl >/dev/null 2>&1 ||
    skip_all "the wheelhouse has no cloudpickle (python3-cloudpickle is not installed; make check rebuilds it)"

# The names of every kind a cell defines, and what cannot be saved.
KINDS='n = 41; s = "text"; l = [1, [2, 3]]; d = {"a": 1, "b": [2]}
def f(a): return a + n
class C:
    def __init__(self, k): self.k = k
    def m(self): return self.k * 2 + n
c = C(5)
lam = lambda q: q * 3
import socket, threading
fh = open("kept.txt", "w")
sock = socket.socket()
gen = (i for i in range(3))
lock = threading.Lock()'
CHECK='n = 100
[s, l, d, f(1), c.m(), isinstance(c, C), type(c).__name__, lam(2)]'
CHECK_VAL="['text', [1, [2, 3]], {'a': 1, 'b': [2]}, 101, 110, True, 'C', 6]"
if [ $HAVE_PD = 1 ]; then
    KINDS="$KINDS
import numpy as np, pandas as pd
arr = np.arange(12).reshape(3, 4)
wide = np.arange(2 << 20)
df = pd.DataFrame({'a': range(5), 'b': [v * 2 for v in range(5)]})"
    CHECK="$CHECK + [int(arr.sum()), int(wide[-1]), int(df.b.sum()), list(df.columns)]"
    CHECK_VAL="${CHECK_VAL%]}, 66, 2097151, 20, ['a', 'b']]"
fi
WANT_BACK='["C", "c", "d", "f", "l", "lam", "n", "s", "socket", "threading"]'
[ $HAVE_PD = 1 ] && WANT_BACK='["C", "arr", "c", "d", "df", "f", "l", "lam", "n", "np", "pd", "s", "socket", "threading", "wide"]'
WANT_SKIPPED='["fh", "gen", "lock", "sock"]'

# restored WHERE [OPTION]...: the cell after a stop (with the options)
# restored every kind, and listed what could not be saved.
restored() {
    local where=$1
    shift
    set -- "$where" "$@"
    cell "${@:2}" $W "$CHECK"
    is "$(state)" restored "$1: the next cell restored the kernel"
    is "$(val)" "$CHECK_VAL" "$1: numbers, strings, lists, dicts, a function, a class, its instance, a lambda$([ $HAVE_PD = 1 ] && echo ', an array, a DataFrame') back (the function sees the cell's n)"
    is "$(back)" "$WANT_BACK" "$1: restored lists the names back"
    is "$(notsaved)" "$WANT_SKIPPED" "$1: the open file, the socket, the generator and the lock listed as not saved"
    is "$(jget $J '[t for n, t, why in r["kernel"]["restored"]["skipped"] if n == "gen"]')" '["generator"]' \
        "$1: ... each with its type"
}

# --- kernel_idle ---
W=$(ws idle)
cell --set kernel_idle=2s --set install_time=600s $W "$KINDS
n + 1"
is "$(val) $(state)" "42 new" "a kernel with names of every kind"
gone $W
ok $? "kernel_idle: the kernel stops"
is "$(live)" 0 "the saved kernel holds no process (no kernel is live)"
like "$(cat $RUNMYSCRIPT_STATE_DIR/kernels/$(key_of $W)/ended)" "kernel_idle (2 s) and was stopped; its" \
    "its end says it was saved"
test -f $W/.kernel/state
ok $? "the state is a file of the workspace (.kernel/state)"
restored "kernel_idle"
like "$(reason)" "names were saved" "kernel_idle: the reason says the last kernel was saved"
is "$(jget $J 'r["kernel"]["cell"]')" 2 "the cell counts on from the saved kernel's"
ctl end $W >/dev/null

# --- max_kernels ---
W=$(ws count)
OTHER=$(ws count-other)
cell --set max_kernels=1 $W "$KINDS"
is "$(state)" new "max_kernels = 1: a kernel"
cell --set max_kernels=1 $OTHER 'y = 7'
is "$(state)" new "another workspace's kernel takes the slot"
stopped $W
ok $? "the first kernel was stopped for it"
restored "max_kernels" --set max_kernels=1
like "$(reason)" "to make room for another (max_kernels = 1); its" "max_kernels: the reason says why, and that it was saved"
cell --set max_kernels=1 $OTHER 'y'
is "$(val) $(state)" "7 restored" "the other workspace's kernel, stopped in turn, comes back too"
ctl end $W >/dev/null
ctl end $OTHER >/dev/null

# --- kernel_memory ---
W=$(ws memory)
OTHER=$(ws memory-other)
cell --set kernel_memory=100M $W "$KINDS
big = bytearray(100 << 20)
len(big)"
is "$(val)" 104857600 "kernel_memory = 100M: a kernel holding more than 100 MiB"
wait_until counted 100
ok $? "(its memory counted)"
cell --set kernel_memory=100M $OTHER 'z = 1; z'
is "$(val)" 1 "another workspace's kernel starts"
wait_until stopped $W
ok $? "the first kernel was stopped to stay within kernel_memory"
restored "kernel_memory" --set kernel_memory=400M
is "$(jget $J '[why for n, t, why in r["kernel"]["restored"]["failed"]] + [n for n, t in r["kernel"]["restored"]["names"] if n == "big"]')" '["big"]' \
    "kernel_memory: the 100 MiB bytearray came back too"
ctl end $W >/dev/null
ctl end $OTHER >/dev/null

# --- an explicit save: a checkpoint, and the return to it ---
W=$(ws checkpoint)
cell $W "$KINDS"
ctl save $W >$T/save.json
is "$(jget $T/save.json 'r["rc"], sorted(n for n, t in r["report"]["names"])')" "[0, $WANT_BACK]" \
    "save: the kernel's names saved"
is "$(jget $T/save.json 'sorted(n for n, t, why in r["report"]["skipped"])')" "$WANT_SKIPPED" "save: ... and what was not"
cell $W 'n = 0; del s; l.append("risky"); n'
is "$(val) $(state)" "0 kept" "the kernel ran on after its save"
is "$(ctl restore $W)" ok "restore: the kernel reset to its saved state"
restored "an explicit save"
is "$(reason)" "the kernel was reset to its saved state" "the reason says it was reset to its state"
ctl reset $W >/dev/null
cell $W '"n" in globals()'
is "$(val) $(state)" "False new" "a plain reset: the next kernel starts empty"
ctl end $W >/dev/null
W=$(ws never-saved)
is "$(ctl restore $W)" "the workspace has no saved kernel state (save_kernel makes one)" "restore without a state: refused"

# --- kernel_save_bytes ---
W=$(ws too-big)
cell --set kernel_idle=2s --set kernel_save_bytes=1M $W 'blob = b"x" * (3 << 20); keep = 1'
gone $W
cell $W '"keep" in globals()'
is "$(val) $(state)" "False new" "a state past kernel_save_bytes is not saved: the next kernel is new"
like "$(reason)" "its state passed kernel_save_bytes (kernel_save_bytes = 1.0 MiB) and was not saved" \
    "... and the reason says why"
test ! -e $W/.kernel/state.tmp
ok $? "nothing of it is left in the workspace"
ctl end $W >/dev/null
W=$(ws too-big-for-workspace)
head -c $((1 << 20)) /dev/zero >$W/data.bin
[ ${#RUNAS[@]} = 0 ] || chown 65534:65534 $W/data.bin
cell --set kernel_idle=2s --set workspace_bytes=2M $W 'blob = b"x" * (3 << 20); keep = 1'
gone $W
cell $W '"keep" in globals()'
is "$(val) $(state)" "False new" "a state past the room workspace_bytes leaves is not saved"
like "$(reason)" "its state passed the room the workspace had left (" "... and the reason says so"
like "$(reason)" "of workspace_bytes = 2.0 MiB) and was not saved" "... naming workspace_bytes"
ctl end $W >/dev/null

# --- a state a cell rewrote: loaded in the kernel's jail only ---
W=$(ws tampered)
cell $W 'x = 1'
ctl save $W >/dev/null
cell $W 'import json, pickle
class Payload:
    def __reduce__(self):
        return (exec, ("import os; open(\"/work/payload.txt\", \"w\").write(repr([os.getuid(), os.path.exists(\"'"$RUNMYSCRIPT_STATE_DIR"'\")]))",))
blob = pickle.dumps(Payload())
meta = {"format": 1, "python": "3.0.0", "packages": {}, "pickler": "pickle", "modules": [], "cells": 9,
        "history": [], "names": [["evil", "Payload", 0, len(blob), "pickle", None]], "skipped": []}
m = json.dumps(meta).encode()
with open(".kernel/state", "wb") as f:
    f.write(blob + m + len(m).to_bytes(8, "big") + b"RMSKST01")
"written"'
is "$(val)" "'written'" "a cell rewrites its workspace's state with a payload"
is "$(ctl restore $W)" ok "the kernel reset to it"
cell $W 'import os
[os.getuid() == 0, os.path.exists("'"$RUNMYSCRIPT_STATE_DIR"'"), os.path.exists("'"$T"'/tampered/.kernel")]'
is "$(state)" restored "the next cell restored the rewritten state"
is "$(jget $J '[e[0] for e in r["kernel"]["restored"]["failed"] + r["kernel"]["restored"]["names"]]')" '["evil"]' \
    "... whose payload ran (its name listed)"
like "$(cat $W/payload.txt 2>&1)" ", False]" "the payload ran where the cell runs: the state directory is not there"
# (unprivileged, the server cannot give its kernels another uid: the jail's
# user namespace is what keeps the payload from the server's files)
test "$(stat -c %u $W/payload.txt)" != "$SERVER_UID" -o "$SERVER_UID" != 0
ok $? "... under the kernel's uid, not the server's"
is "$(val)" "[False, False, False]" "a cell after it: not root, no state directory, the host's paths not there"
like "$(jget $J 'r["kernel"]["restored"]["differs"]')" "written under Python 3.0.0" "a state of another Python says so"
cell $W 'import socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    r = "reached"
except OSError as e:
    r = "no network"
r'
is "$(val)" "'no network'" "an attack-suite check as a cell after the restore: no network"
cell $W 'import os, time
try:
    os.kill(1, 9)
    r = "killed"
except OSError as e:
    r = type(e).__name__
time.sleep(0.2)
[r, os.path.exists("/proc/1"), len([p for p in os.listdir("/proc") if p.isdigit()]) < 10]'
# (unprivileged, the jail's init is the kernel's own uid: the SIGKILL is
# sent, and its namespace's init ignores it, as in the attack suite)
KILL=PermissionError
[ ${#RUNAS[@]} = 0 ] || KILL=killed
is "$(val)" "['$KILL', True, True]" "... nor the host's processes (its pid 1 is the jail's own, alive after)"
ctl end $W >/dev/null

# --- another Python version: what loads, loads ---
W=$(ws other-python)
cell $W 'x = 3; y = [1, 2]'
ctl save $W >/dev/null
cell $W 'import json
with open(".kernel/state", "rb") as f:
    data = f.read()
n = int.from_bytes(data[-16:-8], "big")
meta = json.loads(data[-16 - n:-16])
meta["python"] = "3.99.0"
meta["packages"]["rms-gone"] = "1.0"
m = json.dumps(meta).encode()
with open(".kernel/state", "wb") as f:
    f.write(data[:-16 - n] + m + len(m).to_bytes(8, "big") + b"RMSKST01")
1'
ctl restore $W >/dev/null
cell $W '[x, y]'
is "$(val) $(state)" "[3, [1, 2]] restored" "a state written under another Python and packages: its names back"
is "$(jget $J 'r["kernel"]["restored"]["python"]')" 3.99.0 "restored names the Python it was written under"
like "$(jget $J 'r["kernel"]["restored"]["differs"]')" "rms-gone: 1.0 then, absent now" "... and the packages that differ"
ctl end $W >/dev/null

# --- the server's end (a drain), and a new server ---
W=$(ws drain)
cell $W "$KINDS"
is "$(state)" new "a kernel before the server stops"
warm_stop
gone $W
ok $? "the server's end stops its kernels"
like "$(cat $RUNMYSCRIPT_STATE_DIR/kernels/$(key_of $W)/ended)" "the server was restarted, and the last kernel ended with it; its" \
    "... saving them first"
warm_serve || { echo "Bail out! the server did not start again"; exit 1; }
export RMS_TEST_SERVER=$WARM_SERVE_PID
restored "a new server"
ctl end $W >/dev/null
is "$(live)" 0 "every kernel ended"
warm_stop
done_testing
