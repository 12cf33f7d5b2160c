#!/bin/bash
# Kernels: a live Python per workspace, driven as a worker of serve drives
# them (tests/sandbox/cell, linked against the executor: exec_kernel_cell and the
# calls beside it), through real processes and real jails. A server
# (tests/lib/warm.sh: `runmyscript serve` with its warm pool) stands for
# the process every kernel ends with. State kept from cell to cell (names,
# functions, imports, a DataFrame; cell numbers); isolation between two
# workspaces' kernels; the limits and faults (an interrupt that keeps the
# state, a cell that ignores it, memory, kernel_idle, max_kernels, the
# kernel killed by hand, the server restarted, cells of one kernel
# serialised and busy past queue_wait, reset and end); the display (the
# last expression, None, a figure, a PIL image, a DataFrame) and only the
# files a cell made; a package a cell needs (added to the live kernel, its
# state kept; another version of one it has restarts it). Then the
# state and the faults again in the fallback (isolation = rlimits).
# kernel-unprivileged.sh runs it all with the server, the kernels and the
# driver an unprivileged user's.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/warm.sh"
T=$TEST_TMP
CELL=$top_builddir/tests/sandbox/cell
RUNAS=()
if [ "${RMS_KERNEL_AS:-self}" = unprivileged ]; then
    [ "$(id -u)" = 0 ] || skip_all "the tests run unprivileged already: kernel.sh is this pass"
    command -v setpriv >/dev/null || skip_all "setpriv is missing: cannot drop to an unprivileged user"
    RUNAS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    mkdir -p "$RUNMYSCRIPT_STATE_DIR" && chown 65534:65534 "$RUNMYSCRIPT_STATE_DIR"
    chmod 755 "$T"
fi
diag "pass: $([ ${#RUNAS[@]} = 0 ] && id -un || echo nobody)"
export RUNMYSCRIPT_ISOLATION=namespaces RUNMYSCRIPT_WARM_WAIT=60s
warm_serve || { echo "Bail out! the server did not start"; exit 1; }
export RMS_TEST_SERVER=$WARM_SERVE_PID

ws() { mkdir -p "$T/$1" && { [ ${#RUNAS[@]} = 0 ] || chown 65534:65534 "$T/$1"; } && echo "$T/$1"; }
# cell [OPTIONS] WS CODE: the result into $J (R: the driver's exit status).
N=0
cell() {
    N=$((N + 1))
    J=$T/cell-$N.json
    R=0
    "${RUNAS[@]}" env RMS_TEST_SERVER=$RMS_TEST_SERVER "$CELL" cell "$@" >$J 2>$J.err || R=$?
    [ -s $J ] || diag "cell $N: no result: $(tail -c 400 $J.err)"
}
# cell_bg [OPTIONS] WS CODE: the same in the background (BG its pid, BGJ its result).
cell_bg() {
    N=$((N + 1))
    BGJ=$T/cell-$N.json
    "${RUNAS[@]}" env RMS_TEST_SERVER=$RMS_TEST_SERVER "$CELL" cell "$@" >$BGJ 2>$BGJ.err &
    BG=$!
}
ctl() { "${RUNAS[@]}" env RMS_TEST_SERVER=$RMS_TEST_SERVER "$CELL" "$@" 2>/dev/null; }
val() { jget $J 'r["value"]'; }
st() { jget $J 'r["status"]'; }
kern() { jget $J '[r["kernel"]["state"], r["kernel"]["cell"]]'; }
reason() { jget $J 'r["kernel"]["reason"]'; }
# A kernel named by a cell of its own (mark_py: its process's name), and
# the pid of that process.
named_pid() {
    local p
    for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"; done | head -1
}
live() { ctl stats >$T/stats.json; jget $T/stats.json 'r["live"]'; }

# in_place WS WHERE: packages the kernel lacks added to it in place
# (rms-alpha, then rms-beta), its state kept; what it was given it cannot
# change; another version of a package it has restarts it, with the
# union of what it had. WHERE names the pass in the descriptions.
SITE_PROBE='import os, rms_alpha
d = os.path.dirname(os.path.dirname(rms_alpha.__file__))
def tries(name, f):
    try:
        f()
        return [name]
    except OSError:
        return []
done = (tries("create", lambda: open(d + "/planted.py", "w")) + tries("append", lambda: open(rms_alpha.__file__, "a"))
        + tries("mkdir", lambda: os.mkdir(d + "/planted")) + tries("unlink", lambda: os.unlink(rms_alpha.__file__))
        + tries("rename", lambda: os.rename(d + "/rms_alpha", d + "/moved")))
[os.path.basename(d), done or "refused"]'
in_place() {
    local w=$1 where=$2
    cell $w 'x = 41'
    cell --set install_time=600s $w 'import rms_alpha
rms_alpha.greet("p")'
    is "$(st) $(val)" "ok 'alpha says hello to p'" "$where: a cell imports a package the kernel's environment lacks: it works"
    is "$(jget $J 'r["kernel"]["state"]')" kept "$where: the kernel was kept"
    is "$(reason)" "added rms-alpha==1.0 from the package store to the running kernel, which kept its state" \
        "$where: the reason says what was added"
    cell $w 'x'
    is "$(val) $(kern)" '41 ["kept", 3]' "$where: x is still 41"
    cell $w 'import rms_beta
[rms_beta.__version__, x]'
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "['2.0', 41] kept" "$where: a second package, whose dependency was added before"
    is "$(reason)" "added rms-beta==2.0 from the package store to the running kernel, which kept its state" \
        "$where: only what is new is added"
    cell $w "$SITE_PROBE"
    is "$(val)" "['site', 'refused']" "$where: the kernel cannot create, write, remove or rename in its extra directory"
    local key site
    key=$(printf %s "$(cd "$w" && pwd -P)" | sha256sum | cut -c1-32)
    site=$RUNMYSCRIPT_STATE_DIR/kernels/$key/site
    is "$(cd $site && ls | tr '\n' ' ')" "rms_alpha rms_alpha-1.0.dist-info rms_beta rms_beta-2.0.dist-info " \
        "$where: the extra directory holds what was added, nothing planted"
    like "$(cat $site/rms_alpha/__init__.py)" "alpha says hello" "$where: its files are intact"
    is "$(stat -c %U $site)" "$(stat -c %U $RUNMYSCRIPT_STATE_DIR)" "$where: the extra directory is the server's"
    cell $w '# /// script
# dependencies = ["rms-ver==1.0"]
# ///
import rms_ver
rms_ver.__version__'
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "'1.0' kept" "$where: a pinned version is added in place too"
    cell $w '# /// script
# dependencies = ["rms-ver==2.0"]
# ///
import rms_ver
rms_ver.__version__'
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "'2.0' restarted" "$where: another version of a package the kernel has restarts it"
    like "$(reason)" "rms-ver is 1.0 in the kernel, and the cell needs 2.0" "$where: the reason says which"
    cell $w 'import rms_alpha, rms_beta
["x" in globals(), rms_beta.__version__]'
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "[False, '2.0'] kept" \
        "$where: the restarted kernel has what was added before (its names are gone)"
    is "$(cd $site && ls | wc -l)" 0 "$where: a restart starts with an empty extra directory (its environment has it all)"
    ctl end $w >/dev/null
}
HAVE_VER=0
ls "${WHEELHOUSE:-/nonexistent}"/rms_alpha-*.whl "${WHEELHOUSE:-/nonexistent}"/rms_beta-*.whl \
    "${WHEELHOUSE:-/nonexistent}"/rms_ver-2.0-*.whl >/dev/null 2>&1 && HAVE_VER=1

# --- state: a name, a function, cell numbers ---
A=$(ws a)
cell $A 'x = 41'
is "$(st) $(kern)" 'ok ["new", 1]' "cell 1 starts the workspace's kernel"
is "$(reason)" null "the workspace's first kernel needs no reason"
cell $A 'x + 1'
is "$(val)" 42 "x = 41, then x + 1 gives 42"
is "$(kern)" '["kept", 2]' "the second cell runs in the same kernel, cell 2"
cell $A 'def triple(v):
    return 3 * v
import json'
cell $A 'y = triple(x)'
cell $A 'json.dumps([triple(2), y])'
is "$(val)" "'[6, 123]'" "a function and an import of cell 3 in cell 5"
is "$(kern)" '["kept", 5]' "cell numbers count: 5"
is "$(jget $J 'r["start"] in ("warm", "cold") and r["isolation"]')" namespaces+seccomp "a kernel is in the jail"
cell $A 'None'
is "$(val) $(st)" "null ok" "None gives no value"
cell $A 'print("out"); 6 * 7'
is "$(jget $J '[r["logs"], r["value"]]')" '["out\n", "42"]' "the log and the value apart"
cell $A 'undefined_name'
is "$(st) $(jget $J 'r["exit_code"]')" "error 1" "an exception is the cell's error"
like "$(jget $J 'r["logs"]')" 'File "<cell 8>", line 1, in <module>' "its traceback names the cell"
ok $(grep -c 'script.py' <<<"$(jget $J 'r["logs"]')") "the traceback shows none of the kernel's own frames"
cell $A 'x'
is "$(val) $(kern)" '41 ["kept", 9]' "an error keeps the kernel and its names"

# --- isolation: two workspaces' kernels ---
B=$(ws b)
cell $A 'import os; open("/tmp/a-tmp", "w").write("a"); open("a-file", "w").write("a"); os.getpid()'
cell $B 'import os
def seen(p):
    return os.path.exists(p)
[ "x" in globals(), seen("/tmp/a-tmp"), seen("a-file"), seen("'"$A"'/a-file"), sorted(int(p) for p in os.listdir("/proc") if p.isdigit())]'
is "$(val)" "[False, False, False, False, [1, 2]]" "workspace b's kernel sees neither a's names, /tmp, files, path nor processes"
cell $B 'import os
[p for p in ["/work/../../a-file", "'"$RUNMYSCRIPT_STATE_DIR"'", "/job/script.py"] if os.path.exists(p)]'
is "$(val)" "['/job/script.py']" "a kernel sees its own loop at /job, not the state directory"
cell $B 'import socket, os
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("'"$RUNMYSCRIPT_STATE_DIR"'/kernels")
    r = "connected"
except OSError as e:
    r = e.errno
r'
is "$(val)" 2 "no kernel reaches a host's socket (the state directory is not in its jail)"
is "$(live)" 2 "two kernels live"

# --- the interrupt keeps the state; a cell that ignores it loses its kernel ---
cell --set timeout=1 $A 'import time
kept = "yes"
time.sleep(30)'
is "$(st) $(jget $J 'r["limit"]')" "timeout wall_time" "a cell past its timeout: status timeout"
like "$(jget $J 'r["logs"]')" "KeyboardInterrupt" "the cell got a KeyboardInterrupt"
cell $A '[kept, x]'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "['yes', 41] kept" "the interrupted kernel keeps its names"
cell --cancel-after 1000 $A 'import time
time.sleep(30)'
is "$(st)" cancelled "a cancel interrupts the cell: status cancelled"
cell $A 'x'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "41 kept" "and the kernel stays"
C=$(ws c)
cell $C 'z = 1'
cell --set timeout=1 $C 'import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(60)'
is "$(st)" timeout "a cell that ignores SIGINT: status timeout"
like "$(jget $J 'r["error"]')" "ignored its interrupt and its kernel was killed" "the result says the kernel was killed"
cell $C 'z'
is "$(jget $J 'r["kernel"]["state"]')" new "the next cell starts a new kernel"
like "$(reason)" "did not stop within kernel_grace" "and says why"
is "$(st)" error "the names are gone (NameError)"

# --- memory: the kernel's whole; a new kernel with the files intact ---
M=$(ws m)
cell --set memory=128M $M 'open("kept.txt", "w").write("still here"); m = 1'
cell $M 'blocks = []
for i in range(30):
    blocks.append(bytearray(50 << 20))
    for j in range(0, 50 << 20, 4096):
        blocks[-1][j] = 1'
is "$(st) $(jget $J 'r["limit"]')" "memory memory" "a cell past the kernel's memory: status memory"
killed=$(jget $J '"killed" in r["logs"]')
cell $M 'open("kept.txt").read()'
if [ "$killed" = true ]; then
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "'still here' new" "the kernel was killed: the next cell has a new one, the workspace's files intact"
    is "$(reason)" "the last kernel exceeded memory" "its reason"
else
    # No cgroup holds the kernel here: RLIMIT_AS made the allocation fail
    # (MemoryError) before the memory watch saw the whole.
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "'still here' kept" "an allocation past memory failed: the kernel and its names stay"
    cell $M 'm'
    is "$(val)" 1 "(its names)"
fi

# --- the kernel killed by hand ---
K=$(ws k)
TOK=$(new_token)
cell $K "$(mark_py $TOK)
k = 1"
kp=$(named_pid $TOK)
[ -n "$kp" ]
ok $? "the kernel's process is found ($kp)"
cell_bg $K 'import time; open("started", "w").close(); time.sleep(30)'
wait_until test -e $K/started
kill -KILL $kp 2>/dev/null
wait $BG
J=$BGJ
is "$(st)" sandbox_error "a kernel killed under a cell: status sandbox_error, not a hung call"
like "$(jget $J 'r["error"]')" "killed (signal 9)" "the error says so"
cell $K "$(mark_py $TOK)
k"
is "$(jget $J 'r["kernel"]["state"]')" new "the next cell starts a new kernel"
like "$(reason)" "killed (signal 9) from outside" "and says why"
kp=$(named_pid $TOK)
kill -KILL $kp 2>/dev/null
wait_until no_process_named $TOK
cell $K '1'
like "$(reason)" "killed (signal 9) from outside" "an idle kernel killed by hand: the next cell says so"

# --- a cell that closes its kernel's channel: the kernel is stopped, clearly ---
cell $K 'import os
for fd in os.listdir("/proc/self/fd"):
    try:
        if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
            os.close(int(fd))
    except OSError:
        pass
import time; time.sleep(30)'
is "$(st)" error "a cell that closes the kernel's channel: its status, not a hung call"
like "$(jget $J 'r["error"]')" "closed its kernel's channel" "the error says so"
cell $K '1'
like "$(reason)" "closed its channel to its host" "the next cell's kernel is new, and says why"

# --- one cell at a time per kernel ---
cell $A 'n = 0'
rm -f $A/bg1 $A/bg2 $A/bg3
cell_bg $A 'import time; open("bg1", "w").close(); time.sleep(2); n += 1; n'
wait_until test -e $A/bg1
cell $A 'n += 10; n'
second=$(val)
wait $BG
J=$BGJ
is "$(val) $second" "1 11" "two cells of one kernel at once: the second waits for the first"
cell_bg $A 'import time; open("bg2", "w").close(); time.sleep(3)'
wait_until test -e $A/bg2
cell --set queue_wait=1s $A 'n'
is "$R $(jget $J 'r["run_id"]')" "3 " "past queue_wait the second cell is busy, and nothing of it is kept"
like "$(jget $J 'r["error"]')" "the kernel is busy" "it says why"
wait $BG

# --- a running cell holds a run slot, an idle kernel none ---
export RUNMYSCRIPT_MAX_CONCURRENT_RUNS=1 RUNMYSCRIPT_MAX_QUEUED_RUNS=0
printf 'print("a run")\n' >$T/run.py
chmod 644 $T/run.py
cell $A 'n'
"${RUNAS[@]}" "$RUNMYSCRIPT" run $T/run.py --json >$T/run1.json 2>/dev/null
is "$(jget $T/run1.json 'r["status"]')" ok "max_concurrent_runs = 1 and an idle kernel: a run runs"
cell_bg $A 'import time; open("bg3", "w").close(); time.sleep(3)'
wait_until test -e $A/bg3
"${RUNAS[@]}" "$RUNMYSCRIPT" run $T/run.py --json >$T/run2.json 2>/dev/null
like "$(jget $T/run2.json 'r["error"]')" "busy" "a running cell holds the run slot: the run is turned away"
wait $BG
unset RUNMYSCRIPT_MAX_CONCURRENT_RUNS RUNMYSCRIPT_MAX_QUEUED_RUNS

# --- display: values, figures, images, DataFrames; only new files ---
D=$(ws d)
cell $D 'open("output/old.txt", "w").write("old"); 1'
is "$(jget $J '[(a["path"], a["change"]) for a in r["artifacts"]]')" '[["old.txt", "new"]]' "a file a cell made is new"
cell $D 'open("output/new.txt", "w").write("n"); open("output/old.txt", "w").write("changed!"); 2'
is "$(jget $J '[(a["path"], a["change"]) for a in r["artifacts"]]')" '[["new.txt", "new"], ["old.txt", "changed"]]' \
    "a cell's artifacts are only the files it created or changed"
cell $D '3'
is "$(jget $J 'len(r["artifacts"])')" 0 "a cell that wrote nothing lists nothing"
if ls "${WHEELHOUSE:-/nonexistent}"/pandas-*.whl "${WHEELHOUSE:-/nonexistent}"/matplotlib-*.whl >/dev/null 2>&1; then
    cell --set install_time=600s $D 'import pandas as pd
df = pd.DataFrame({"a": range(100), "b": [v * 2 for v in range(100)]})
df'
    is "$(jget $J 'r["kernel"]["state"]')" kept "a cell that imports pandas, which the kernel lacks: added in place"
    like "$(reason)" "pandas==1.5.3" "the reason names what was added"
    like "$(val)" "[100 rows x 2 columns]" "a DataFrame as pandas prints it, truncated"
    like "$(val)" ".." "(pandas' own ellipsis)"
    cell $D 'df.b.sum()'
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "9900 kept" "the import and the DataFrame survive"
    cell $D 'import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [3, 1, 2])
x = 1'
    is "$(jget $J '[(a["path"], a["mime"]) for a in r["artifacts"]]')" '[["cell-6-figure-1.png", "image/png"]]' \
        "a figure open at the end of a cell is a PNG artifact (matplotlib added in place: cell 6)"
    is "$(jget $J 'r["kernel"]["state"]')" kept "(the kernel kept)"
    is "$(val)" null "(and no value)"
    cell $D 'fig, ax = plt.subplots(); ax.bar([1], [2]); fig'
    is "$(jget $J '[a["path"] for a in r["artifacts"]]')" '["cell-7-value.png"]' "a figure as the value: one PNG"
    cell $D 'from PIL import Image
Image.new("RGB", (24, 12), "blue")'
    is "$(jget $J '[(a["path"], a["summary"]) for a in r["artifacts"]]')" '[["cell-8-value.png", "PNG image 24x12"]]' \
        "a PIL image as the value is a PNG artifact"
    "$PYTHON3" -c 'import sys; sys.exit(open(sys.argv[1], "rb").read(8) != b"\x89PNG\r\n\x1a\n")' \
        "$RUNMYSCRIPT_STATE_DIR/runs/$(jget $J 'r["run_id"]')/output/cell-8-value.png"
    ok $? "the image is a PNG in the cell's run"
else
    skip "no pandas or matplotlib wheel: the DataFrame, the figures and the restart for a package"
fi
cell $D 'v = "x" * 100000; v'
is "$(jget $J '[r["value_truncated"], len(r["value"]) < 70000]')" "[true, true]" "a value past value_bytes is cut"

# --- a package the kernel lacks: added in place ---
if [ $HAVE_VER = 1 ]; then
    in_place "$(ws p)" "the jail"
else
    skip "the wheelhouse lacks rms_alpha, rms_beta or rms_ver (make check rebuilds it)"
fi

# --- reset, end, stats ---
cell $A 'x'
ctl reset $A >/dev/null
cell $A 'x'
is "$(st) $(jget $J 'r["kernel"]["state"]')" "error new" "reset drops the names"
is "$(reason)" "the kernel was reset" "and the next cell says so"
is "$(ctl end $A)" ok "end"
cell $A '1'
is "$(jget $J 'r["kernel"]["reason"]')" null "a workspace ended starts over"
"${RUNAS[@]}" env RMS_TEST_KERNELS=off "$CELL" cell $A '1' >$T/off.json 2>/dev/null
is "$(jget $T/off.json 'r["error"]')" \
    "kernels live only under \`runmyscript serve\`: the command line and CGI have no process that outlives a request" \
    "without kernels (the CLI, CGI) a cell is refused, saying why"

# --- max_kernels: the least recently used idle one goes ---
for w in e1 e2 e3; do ws $w >/dev/null; done
export RUNMYSCRIPT_MAX_KERNELS=2
ctl end $B >/dev/null; ctl end $D >/dev/null; ctl end $K >/dev/null; ctl end $M >/dev/null; ctl end $C >/dev/null; ctl end $A >/dev/null
cell $T/e1 'e = 1'
cell $T/e2 'e = 2'
cell $T/e1 'e'
cell $T/e3 'e = 3'
ctl stats >$T/stats.json
is "$(jget $T/stats.json '[r["live"], r["max"]]')" "[2, 2]" "max_kernels = 2: two live"
cell $T/e1 'e'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "1 kept" "the recently used kernel was kept"
cell $T/e2 'e'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "2 restored" "the least recently used one was stopped (and saved: its names are back)"
like "$(reason)" "to make room for another (max_kernels = 2)" "and says why"
unset RUNMYSCRIPT_MAX_KERNELS
for w in e1 e2 e3; do ctl end $T/$w >/dev/null; done

# --- kernel_memory: past it the least recently used idle kernel goes ---
export RUNMYSCRIPT_KERNEL_MEMORY=1M
cell $T/e1 'g = 1'
cell $T/e2 'g = 2'
is "$(st) $(jget $J 'r["kernel"]["state"]')" "ok new" "kernel_memory = 1M: a second kernel starts"
cell $T/e1 'g'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "1 restored" "the kernels past kernel_memory: the least recently used idle one was stopped (and saved)"
like "$(reason)" "to keep the kernels within kernel_memory" "and says why"
unset RUNMYSCRIPT_KERNEL_MEMORY
for w in e1 e2; do ctl end $T/$w >/dev/null; done

# --- kernel_idle ---
I=$(ws i)
RUNMYSCRIPT_KERNEL_IDLE=2s cell $I 'i = 1'
is "$(live)" 1 "(the one kernel live)"
no_live() { [ "$(live)" = 0 ]; }
wait_until no_live
ok $? "an idle kernel goes by itself"
cell $I 'i'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "1 restored" "an idle kernel is stopped after kernel_idle (and saved)"
like "$(reason)" "no cell for kernel_idle (2 s)" "the next cell says so"

# --- the server restarted ---
cell $I 'i = 2'
warm_stop
warm_serve || diag "the server did not come back"
export RMS_TEST_SERVER=$WARM_SERVE_PID
cell $I 'i'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "2 restored" "the server restarted: the next cell starts a kernel from the saved one"
like "$(reason)" "the server was restarted" "and says why"

# --- the fallback: kernels there too ---
F=$(ws f)
export RUNMYSCRIPT_ISOLATION=rlimits RUNMYSCRIPT_REQUIRE_ISOLATION=off
cell $F 'f = 41'
is "$(st) $(jget $J 'r["kernel"]["state"]')" "ok new" "the fallback: a kernel starts"
is "$(jget $J 'r["isolation"] in ("landlock+seccomp", "landlock", "rlimits+seccomp", "rlimits")')" true "the fallback's isolation ($(jget $J 'r["isolation"]'))"
cell $F 'f + 1'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "42 kept" "the fallback keeps the state"
cell --set timeout=1 $F 'import time; time.sleep(30)'
is "$(st)" timeout "the fallback: a timeout interrupts the cell"
cell $F 'f'
is "$(val) $(jget $J 'r["kernel"]["state"]')" "41 kept" "and the kernel stays"
TOK=$(new_token)
cell $F "$(mark_py $TOK)"
kp=$(named_pid $TOK)
kill -KILL $kp 2>/dev/null
wait_until no_process_named $TOK
cell $F 'f'
like "$(reason)" "killed (signal 9) from outside" "the fallback: a kernel killed by hand is a clear reason"
FISO=$(jget $J 'r["isolation"]')
if [ $HAVE_VER = 0 ]; then
    skip "the wheelhouse lacks rms_alpha, rms_beta or rms_ver (make check rebuilds it)"
elif [ "${FISO#landlock}" != "$FISO" ] || [ ${#RUNAS[@]} = 0 ] && [ "$(id -u)" = 0 ]; then
    in_place "$(ws fp)" "the fallback ($FISO)"
else
    # Unprivileged without Landlock nothing keeps the kernel from writing
    # a directory given to it: the kernel restarts instead, and says why.
    FP=$(ws fp)
    cell $FP 'x = 41'
    cell --set install_time=600s $FP 'import rms_alpha
"x" in globals()'
    is "$(val) $(jget $J 'r["kernel"]["state"]')" "False restarted" "the fallback ($FISO): a package the kernel lacks restarts it"
    like "$(reason)" "without Landlock and as the server's own uid" "and says why"
    ctl end $FP >/dev/null
fi
# The plain fallback (landlock = off): as root the kernel is another uid
# than its extra directory's owner, and is given packages in place; run
# unprivileged it is the server's own uid, and restarts instead.
if [ $HAVE_VER = 1 ]; then
    FL=$(ws fl)
    RUNMYSCRIPT_LANDLOCK=off cell $FL 'x = 41'
    RUNMYSCRIPT_LANDLOCK=off cell --set install_time=600s $FL 'import rms_alpha
"x" in globals()'
    if [ ${#RUNAS[@]} = 0 ] && [ "$(id -u)" = 0 ]; then
        is "$(val) $(jget $J 'r["kernel"]["state"]')" "True kept" "landlock = off, as root: the package is added in place"
    else
        is "$(val) $(jget $J 'r["kernel"]["state"]')" "False restarted" \
            "landlock = off, unprivileged: a package the kernel lacks restarts it"
        like "$(reason)" "without Landlock and as the server's own uid" "and says why"
    fi
    ctl end $FL >/dev/null
fi
ctl end $F >/dev/null
unset RUNMYSCRIPT_REQUIRE_ISOLATION
export RUNMYSCRIPT_ISOLATION=namespaces

ctl end $I >/dev/null
is "$(live)" 0 "every kernel ended"
warm_stop
done_testing
