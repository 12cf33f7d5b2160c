#!/bin/bash
# The memory of a run as a whole, in the four isolation modes
# (tests/lib/modes.sh). Where no memory cgroup holds the run, RLIMIT_AS
# binds each process on its own; the executor's watch sums the run's
# processes (and the jail's /tmp and /dev/shm) and kills the run past
# `memory`. A cgroup, where the jail run by root has one, keeps doing it.
#
# Every bomb is bounded: children touch a fixed size and sleep, the parent
# ends them, and nothing allocates without a cap.
RMS_JAIL_OPTIONAL=1 # the fallback modes run where the jail cannot
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/modes.sh" || exit 99
T=$TEST_TMP
unset RUNMYSCRIPT_ISOLATION RUNMYSCRIPT_REQUIRE_ISOLATION

# Six children of 100 MiB each: every one under the per-process cap of
# 256 MiB, together well over it. The parent ends at the first child that
# dies of a signal (a cgroup's OOM kill), and kills them all after 30 s
# when nothing stopped them (today's code without a cgroup).
cat >$T/children.py <<'PY'
import os, signal, sys, time
SIZE = 100 << 20
kids = []
for i in range(6):
    pid = os.fork()
    if pid == 0:
        block = bytearray(SIZE)
        block[::4096] = b"\x01" * (SIZE // 4096)   # every page touched
        print("R child", i, "holds 100 MiB", flush=True)
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
while kids:
    pid, st = os.wait()
    kids.remove(pid)
    if os.WIFSIGNALED(st):
        print("R a child was killed", flush=True)
        sys.exit(3)
print("R all children slept to their end")
PY

# The same parent, under the limit: it holds 80 MiB before it forks four
# children that share those pages copy-on-write (and a memfd of 30 MiB
# through the descriptor they inherit, or where memfds are refused a deleted
# file of the same size in TMPDIR) and touch 16 MiB each. Real use is
# about 200 MiB; counting the shared pages or the memfd once per process
# would make it 600.
cat >$T/shared.py <<'PY'
import os, tempfile, time
BIG = b"\x02" * (80 << 20)           # the parent's, shared with every child
try:
    fd = os.memfd_create("shared")
except PermissionError:                # refused where the watch holds memory
    fd, name = tempfile.mkstemp()      # /tmp: the jail's tmpfs, or the run's tmp/
    os.unlink(name)
os.write(fd, b"\x05" * (30 << 20))
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        own = bytearray(16 << 20)
        own[::4096] = b"\x01" * ((16 << 20) // 4096)
        assert BIG[12345] == 2
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    _, st = os.waitpid(pid, 0)
    assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, st
print("R shared pages counted once")
PY

# 150 MiB in /tmp and 150 MiB in /dev/shm: each under tmp_bytes, together
# over memory. The jail's tmpfs pages are memory, as a cgroup counts them.
cat >$T/tmpfs.py <<'PY'
import time
chunk = b"\x03" * (1 << 20)
for path in ("/tmp/fill", "/dev/shm/fill"):
    with open(path, "wb") as f:
        for _ in range(150):
            f.write(chunk)
    print("R wrote 150 MiB to", path, flush=True)
time.sleep(30)
print("R the files stayed")
PY

# Memory that no process maps: six memfds of 100 MiB, written and kept
# open. A cgroup charges their pages; where the watch holds memory,
# memfd_create is refused (a memfd sent through a socket and closed would
# be out of its sight: tests/sandbox/attacks-review.sh).
cat >$T/memfd.py <<'PY'
import os, time
chunk = b"\x04" * (1 << 20)
fds = []
for i in range(6):
    try:
        fd = os.memfd_create("fill-%d" % i)
    except PermissionError as e:
        print("R memfd_create refused", e.errno)
        raise SystemExit(0)
    for _ in range(100):
        os.write(fd, chunk)
    fds.append(fd)
    print("R memfd", i, "holds 100 MiB", flush=True)
time.sleep(30)
print("R the memfds stayed")
PY

# An untouched reservation of 1 GiB: RLIMIT_AS refuses it, a cgroup (which
# counts what is touched) does not.
cat >$T/reserve.py <<'PY'
import mmap
try:
    m = mmap.mmap(-1, 1 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    print("R reserved 1 GiB")
except OSError as e:
    print("R refused", e.errno)
PY

# System V shared memory: a segment no process has attached is no process's
# memory, out of the watch's sight; every mode refuses the calls. Six
# segments of 100 MiB, made and never attached, removed at once if made.
cat >$T/sysv.py <<'PY'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
made = []
for i in range(6):
    sid = libc.shmget(0, ctypes.c_size_t(100 << 20), 0o1000 | 0o600)
    if sid < 0:
        print("R shmget refused", ctypes.get_errno(), flush=True)
        break
    made.append(sid)
for sid in made:
    libc.shmctl(sid, 0, None)  # IPC_RMID
print("R made", len(made))
PY

for m in $RMS_MODES; do
    mode_enter $m || { skip "$m: $MODE_SKIP"; continue; }
    probe sysv --set memory=256M < $T/sysv.py
    like "$LOGS" "R shmget refused 1" "$m: System V shared memory is refused (EPERM)"
    like "$LOGS" "R made 0" "$m: no segment was made"
    enforced=$(mode_memory)
    diag "$m: memory is $enforced"
    case "$enforced" in
    "cgroup v"[12]" (whole run)" | "watched: sum of the run's processes every "*" ms, plus RLIMIT_AS per process")
        ok 0 "$m: check-sandbox says how memory is held for the whole run" ;;
    *) ok 1 "$m: check-sandbox says how memory is held for the whole run (it says: $enforced)" ;;
    esac

    probe children --set memory=256M < $T/children.py
    is "$(field status)" memory "$m: six children of 100 MiB under memory = 256M: status memory"
    is "$(field limit)" memory "$m: limit memory"
    like "$LOGS" "[runmyscript] the run used up its memory limit (memory = 256.0 MiB)" "$m: the log says so"
    ! grep -q "R all children slept" <<<"$LOGS"
    ok $? "$m: the children did not sleep to their end"
    gone "six children"

    probe shared --set memory=256M < $T/shared.py
    is "$(field status)" ok "$m: a parent's heap and memfd shared with four forked children: not stopped"
    like "$LOGS" "R shared pages counted once" "$m: the script ran to its end"
    gone "shared pages"

    probe memfd --set memory=256M < $T/memfd.py
    case "$enforced" in
    cgroup*)
        is "$(field status)" memory "$m: six memfds of 100 MiB under memory = 256M: status memory"
        ;;
    *)
        like "$LOGS" "R memfd_create refused 1" "$m: watched: memfd_create is refused (EPERM)"
        ;;
    esac
    ! grep -q "R the memfds stayed" <<<"$LOGS"
    ok $? "$m: the memfds did not stay"
    gone "memfds"

    if [ $MODE_ISOLATION = namespaces ]; then
        probe tmpfs --set memory=256M --set tmp_bytes=200M < $T/tmpfs.py
        is "$(field status)" memory "$m: 300 MiB in /tmp and /dev/shm under memory = 256M: status memory"
        ! grep -q "R the files stayed" <<<"$LOGS"
        ok $? "$m: the files did not stay"
        gone "tmpfs"
    else
        skip "$m: the fallback has no private /tmp (TMPDIR is on disk)"
    fi

    probe reserve --set memory=256M < $T/reserve.py
    case "$enforced" in
    cgroup*)
        like "$LOGS" "R reserved 1 GiB" "$m: a memory cgroup holds the run: no RLIMIT_AS, a reservation passes"
        ;;
    *)
        like "$LOGS" "R refused" "$m: watched: RLIMIT_AS still caps a single process"
        ;;
    esac
done
done_testing
