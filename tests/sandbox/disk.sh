#!/bin/bash
# The disk a run may use, in the four isolation modes (tests/lib/modes.sh):
# a script that writes past workspace_bytes or workspace_files anywhere in
# its workspace (not only output/) is stopped with status workspace_limit,
# and what it wrote outside output/ is not left on the host's disk; in the
# fallback, $TMPDIR and $HOME (the run directory's tmp/ and home/) are held
# to tmp_bytes and tmp_files as the jail's /tmp is; a session keeps its
# earlier files and loses only what the run that crossed the bound wrote;
# a mount that would take a session's workspace past the bound is refused.
#
# Harmless if the bound did not hold: the limits are small (a few MiB), a
# script writes at most 48 MiB and 3000 empty files, only below its own
# workspace, and sleeps afterwards instead of writing more.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/modes.sh" || exit 99
. "$top_srcdir/tests/lib/nginx.sh" || exit 99
. "$top_srcdir/tests/lib/fixture-server.sh" || exit 99
T=$TEST_TMP
fixture_server_start
U=http://127.0.0.1:$PORT1
RMS_MODE_ENV="RUNMYSCRIPT_FETCH_ALLOW=127.0.0.1:$PORT1"

# What every script starts with: fill(PATH, MIB) writes MIB MiB into PATH
# a MiB at a time, and linger() waits to be stopped.
PRELUDE='import os, time
print("R started", flush=True)
def fill(path, mib):
    with open(path, "wb") as f:
        for i in range(mib):
            f.write(b"x" * (1 << 20))
            f.flush()
            time.sleep(0.01)
def linger():
    time.sleep(25)
'

# disk NAME [ARGS...] <<PY: runs the script (stdin) in the current mode;
# sets J (the result), LOGS, RUN_DIR (its run directory).
disk() {
    local name=$1
    shift
    { printf '%s' "$PRELUDE"; cat; } >$T/$m-$name.py
    mode_file $T/$m-$name.py
    J=$T/$m-$name.json
    RC=0
    mode_rms run $T/$m-$name.py --json "$@" >$J 2>$J.err || RC=$?
    LOGS=$(jget $J 'r["logs"]' 2>/dev/null)
    RUN_DIR=$(jget $J 'r["workdir"]' 2>/dev/null)
    [ -s $J ] || diag "$m $name: no result: $(head -c 300 $J.err)"
}
# ran: the last script did run (so that what it should have left behind
# is not missing merely because nothing ran).
ran() { [ -n "$RUN_DIR" ] && [[ "$LOGS" == *"R started"* ]]; }
status_is() {
    is "$(jget $J 'r["status"]' 2>/dev/null) $(jget $J 'r["limit"]' 2>/dev/null)" "$1 $2" "$m $3: status $1, limit $2"
}
# kib DIR: the disk DIR takes, in KiB (0 when it is gone).
kib() { [ -e "$1" ] && du -sk "$1" | cut -f1 || echo 0; }
# at_most KIB DIR DESCRIPTION: DIR takes no more than KIB.
at_most() {
    local k
    k=$(kib "$2")
    ran && [ "$k" -le "$1" ]
    ok $? "$m $3 ($k KiB left, at most $1)"
}

for m in $RMS_MODES; do
    if ! mode_enter $m; then
        skip "$m: $MODE_SKIP"
        continue
    fi

    # --- one big file beside output/ ---
    disk big --set workspace_bytes=20M --timeout 30 <<'PY'
fill("scratch.bin", 48)
linger()
PY
    status_is workspace_limit workspace_bytes "a big file in the workspace"
    is $RC 123 "$m the CLI exits 123 (workspace_limit)"
    like "$LOGS" "[runmyscript] the workspace passed its limit (workspace_bytes = 20.0 MiB)" "$m the log says why"
    ran && [ ! -e "$RUN_DIR/scratch.bin" ]
    ok $? "$m the big file is gone from the run directory"
    at_most 20480 "$RUN_DIR" "the run directory is back under workspace_bytes"
    ran && [ -s "$RUN_DIR/result.json" ] && [ -s "$RUN_DIR/script.py" ] && [ -f "$RUN_DIR/log" ]
    ok $? "$m result.json, script.py and log are kept"

    # --- many small files ---
    disk many --set workspace_files=200 --timeout 30 <<'PY'
os.mkdir("many")
for i in range(3000):
    open("many/f%04d" % i, "w").close()
linger()
PY
    status_is workspace_limit workspace_files "many small files"
    ran && [ ! -e "$RUN_DIR/many" ]
    ok $? "$m the files are gone"
    n=$(find "$RUN_DIR" 2>/dev/null | wc -l)
    ran && [ "$n" -le 200 ]
    ok $? "$m the run directory is back under workspace_files ($n entries)"

    # --- a deep tree is measured (or stops the run), never overlooked ---
    disk deep --set workspace_bytes=20M --timeout 30 <<'PY'
for i in range(400):
    os.mkdir("d")
    os.chdir("d")
fill("deep.bin", 48)
linger()
PY
    status_is workspace_limit workspace_bytes "a file 400 directories deep (its bytes counted)"
    ran && [ ! -e "$RUN_DIR/d" ]
    ok $? "$m the deep tree is gone"
    # A deep tree under the bound is measured to its bottom, not taken as
    # past it; and what it left is removed in place, however deep.
    disk deep-ok --set workspace_bytes=20M --timeout 30 <<'PY'
for i in range(400):
    os.mkdir("d")
    os.chdir("d")
fill("deep.bin", 1)
print("R wrote", flush=True)
PY
    is "$(jget $J 'r["status"]' 2>/dev/null)" ok "$m a small file 400 directories deep: status ok"
    ran && [ ! -e "$RUN_DIR/d" ]
    ok $? "$m the deep tree is gone after the run"

    # --- bytes a directory's mode hides, or that take blocks but no size ---
    disk hidden --set workspace_bytes=20M --timeout 30 <<'PY'
os.mkdir("hid")
fill("hid/h.bin", 32)
os.chmod("hid", 0)
linger()
PY
    status_is workspace_limit workspace_bytes "a directory shut with chmod 000"
    ran && [ ! -e "$RUN_DIR/hid" ]
    ok $? "$m the shut directory is gone"
    disk prealloc --set workspace_bytes=20M --timeout 30 <<'PY'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open("pre.bin", os.O_WRONLY | os.O_CREAT, 0o644)
# FALLOC_FL_KEEP_SIZE: 40 MiB of blocks, a size of 0
r = libc.fallocate(fd, 1, 0, 40 << 20)
print("R fallocate", r, ctypes.get_errno(), os.fstat(fd).st_size, flush=True)
linger()
PY
    if [[ "$LOGS" == *"R fallocate 0 "* ]]; then
        status_is workspace_limit workspace_bytes "blocks preallocated past the size"
        ran && [ ! -e "$RUN_DIR/pre.bin" ]
        ok $? "$m the preallocated file is gone"
    else
        skip "$m: this file system has no fallocate ($(grep -o 'R fallocate.*' <<<"$LOGS"))"
        skip "$m: no fallocate"
    fi

    # --- what a one-shot run wrote outside output/ is not kept ---
    disk tidy <<'PY'
open("notes.txt", "w").write("scratch\n")
open(os.path.join(os.environ["HOME"], "dot"), "w").write("home\n")
open(os.path.join(os.environ["TMPDIR"], "t"), "w").write("tmp\n")
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "kept.txt"), "w").write("artifact\n")
PY
    is "$(jget $J 'r["status"]' 2>/dev/null)" ok "$m a tidy run: status ok"
    ran && [ ! -e "$RUN_DIR/notes.txt" ] && [ ! -e "$RUN_DIR/home/dot" ] && [ ! -e "$RUN_DIR/tmp/t" ]
    ok $? "$m its scratch files are removed"
    ran && [ -f "$RUN_DIR/output/kept.txt" ] && [ -s "$RUN_DIR/artifacts.zip" ]
    ok $? "$m its artifacts and zip are kept"

    # --- script.py and input are kept as given, not as the script left them ---
    disk replace <<'PY'
fill(os.environ["SCRIPT_INPUT"], 2)
with open(__file__, "a") as f:
    f.write("# " + "x" * 100000 + "\n")
PY
    ran && [ "$(stat -c %s "$RUN_DIR/input")" = 0 ] && cmp -s "$RUN_DIR/script.py" $T/$m-replace.py
    ok $? "$m an input and a script.py the script grew are put back as given"

    # --- output/ keeps its artifacts, not what was past output_bytes ---
    disk outpast --set output_bytes=1M --timeout 30 <<'PY'
out = os.environ["SCRIPT_OUTPUT"]
os.symlink("/etc/passwd", os.path.join(out, "link"))
for name in ("a.bin", "b.bin", "c.bin", "d.bin"):
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"x" * (600 << 10))
linger()
PY
    status_is output_limit output_bytes "output/ past output_bytes"
    ran && [ "$(ls "$RUN_DIR/output")" = a.bin ]
    ok $? "$m output/ keeps only the artifact listed ($(ls "$RUN_DIR/output" 2>/dev/null | tr '\n' ' '))"

    # --- the fallback's $TMPDIR and $HOME are held to tmp_bytes ---
    case $m in
    fallback-*)
        for where in TMPDIR HOME; do
            disk tmp-$where --set tmp_bytes=8M --timeout 30 <<PY
fill(os.path.join(os.environ["$where"], "big.bin"), 24)
linger()
PY
            status_is workspace_limit tmp_bytes "a big file in \$$where"
            like "$LOGS" "tmp_bytes = 8.0 MiB" "$m the log names tmp_bytes"
            at_most 8192 "$RUN_DIR" "\$$where is emptied"
        done
        disk tmp-files --set tmp_files=100 --timeout 30 <<'PY'
for i in range(2000):
    open(os.path.join(os.environ["TMPDIR"], "f%04d" % i), "w").close()
linger()
PY
        status_is workspace_limit tmp_files "many files in \$TMPDIR"
        ;;
    *)
        skip "$m: the jail's /tmp is a tmpfs of tmp_bytes (tests/sandbox/attacks.sh)"
        ;;
    esac

    # --- a session keeps its files and loses only the crossing run's ---
    S=$MODE_STATE/session
    disk s1 --session $S <<'PY'
fill("keep.bin", 4)
os.mkdir("notes")
for i in range(20):
    open("notes/n%02d" % i, "w").write("note\n")
PY
    is "$(jget $J 'r["status"]' 2>/dev/null)" ok "$m session: a first run writes 4 MiB and 20 small files"
    disk s2 --session $S --set workspace_bytes=20M --timeout 30 <<'PY'
open("small-new.txt", "w").write("new\n")
with open("keep.bin", "rb") as f:
    assert len(f.read()) == 4 << 20
fill("big.bin", 48)
linger()
PY
    status_is workspace_limit workspace_bytes "session: a run past the bound"
    like "$LOGS" "files this run wrote were removed" "$m session: the log says what was removed"
    ran && [ -f $S/workspace/keep.bin ] && [ "$(stat -c %s $S/workspace/keep.bin)" = $((4 << 20)) ] &&
        [ "$(ls $S/workspace/notes | wc -l)" = 20 ]
    ok $? "$m session: the earlier file is kept, whole"
    ran && [ ! -e $S/workspace/big.bin ] && [ ! -e $S/workspace/small-new.txt ]
    ok $? "$m session: what the crossing run wrote is gone"
    at_most 20480 $S/workspace "session: the workspace is back under workspace_bytes"

    # --- a mount that would cross the bound is refused ---
    RC=0
    mode_rms fetch $U/data/big.bin in/big.bin --session $S --set workspace_bytes=8M >$T/$m-mount.out 2>$T/$m-mount.err ||
        RC=$?
    is $RC 0 "$m session: a 1 MiB mount within workspace_bytes is taken"
    RC=0
    mode_rms fetch $U/data/big.bin in/big2.bin --session $S --set workspace_bytes=5M >$T/$m-mount.out 2>$T/$m-mount.err ||
        RC=$?
    is $RC 65 "$m session: a mount past workspace_bytes is refused (exit 65)"
    like "$(cat $T/$m-mount.err)" "the session's workspace would pass workspace_bytes" \
        "$m session: the error names workspace_bytes"
    [ -f $S/workspace/mounts/in/big.bin ] && [ ! -e $S/workspace/mounts/in/big2.bin ] && ! find $S/workspace -name '.fetch-*' | grep -q .
    ok $? "$m session: nothing of the refused mount is left"
    n=$(find $S/workspace -mindepth 1 | wc -l)
    RC=0
    mode_rms fetch $U/data/small.bin in/small.bin --session $S --set workspace_files=$n >$T/$m-mount.out \
        2>$T/$m-mount.err || RC=$?
    is $RC 65 "$m session: a mount past workspace_files is refused (exit 65)"
    like "$(cat $T/$m-mount.err)" "the session's workspace would pass workspace_files" \
        "$m session: the error names workspace_files"
done

done_testing
