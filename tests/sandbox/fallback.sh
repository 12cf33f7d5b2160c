#!/bin/bash
# The fallback's containment: the attacks that reached the host from the
# rlimits fallback (the server's memory, environment and descriptors,
# ptrace, prlimit, other runs and sessions, the configuration, the shared
# environments, loopback TCP and UDP, unix sockets, the host's /tmp and
# /dev/shm, System V IPC, signals), each run in the four modes of
# tests/lib/modes.sh: the jail must hold them as the fallback now does.
# Then: the fallback takes the Landlock path where the kernel has it, and
# landlock = off still runs a script with the plain fallback.
# fallback-cell.sh runs the probe as a cell of a kernel in each mode.
#
# Harmless if an attack succeeds: every target is the test's own (files in
# its temporary directory, /tmp and /dev/shm files it made, listeners it
# started on 127.0.0.1 and in its directory, a System V segment it made,
# a process it started); ptrace seizes and detaches at once; prlimit only
# reads; the signal is one the target catches and records.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/modes.sh"
T=$TEST_TMP
unset RUNMYSCRIPT_ISOLATION RUNMYSCRIPT_REQUIRE_ISOLATION RUNMYSCRIPT_LANDLOCK

# The test's targets, one set per mode, owned by the mode's user: a
# listener (TCP and UDP on 127.0.0.1, an abstract and a path unix socket,
# SIGUSR1 caught) that records what reaches it.
start_targets() { # start_targets DIR
    local d=$1
    mkdir -p "$d"
    chmod 777 "$d"
    "${MODE_RUNAS[@]}" "$PYTHON3" - "$d" "$TOK" >"$d/listener.out" 2>&1 <<'PY' &
import os, signal, socket, sys, threading
d, tok = sys.argv[1], sys.argv[2]
lock = threading.Lock()
def note(what):
    with lock, open(os.path.join(d, "reached"), "a") as f:
        f.write(what + "\n")
# The test's own fence comes last on each channel (SIGUSR2, and "fence"
# sent on each socket): once all are noted, whatever the probe sent before
# them has been noted too.
signal.signal(signal.SIGUSR1, lambda *a: note("signal"))
signal.signal(signal.SIGUSR2, lambda *a: note("fence-signal"))
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(8)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
a = socket.socket(socket.AF_UNIX); a.bind(b"\0rms-fb-" + tok.encode()); a.listen(8)
p = socket.socket(socket.AF_UNIX); p.bind(os.path.join(d, "sock")); p.listen(8)
os.chmod(os.path.join(d, "sock"), 0o777)
def accept(s, what):
    while True:
        c, _ = s.accept()
        c.settimeout(10)
        try:
            data = c.recv(5)
        except OSError:
            data = b""
        note(("fence-" if data == b"fence" else "") + what)
        c.close()
def datagrams():
    while True:
        note(("fence-" if u.recv(100) == b"fence" else "") + "udp")
for s, w in ((t, "tcp"), (a, "abstract"), (p, "path")):
    threading.Thread(target=accept, args=(s, w), daemon=True).start()
threading.Thread(target=datagrams, daemon=True).start()
with open(os.path.join(d, "ports.tmp"), "w") as f:
    f.write("%d %d %d\n" % (t.getsockname()[1], u.getsockname()[1], os.getpid()))
os.rename(os.path.join(d, "ports.tmp"), os.path.join(d, "ports"))
while True:
    signal.pause()  # the handlers run in this thread; SIGTERM ends it
PY
    LISTENER=$!
    wait_until test -s "$d/ports"
    read -r TCP_PORT UDP_PORT TARGET_PID <"$d/ports"
}

# The fence on every channel of the listener in DIR, then what reached it
# besides the fences.
fence_targets() { # fence_targets DIR
    local d=$1
    "$PYTHON3" - "$d" "$TOK" "$TCP_PORT" "$UDP_PORT" <<'PY'
import socket, sys
d, tok, tcp, udp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for fam, addr in ((socket.AF_INET, ("127.0.0.1", tcp)), (socket.AF_UNIX, b"\0rms-fb-" + tok.encode()),
                  (socket.AF_UNIX, d + "/sock")):
    c = socket.socket(fam)
    c.connect(addr)
    c.sendall(b"fence")
    c.close()
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"fence", ("127.0.0.1", udp))
PY
    kill -USR2 $TARGET_PID
    wait_until test "$(grep -c '^fence-' "$d/reached" 2>/dev/null)" -ge 5
    grep -v '^fence-' "$d/reached" | sort -u | tr '\n' ' '
}

# A System V segment of the test's (key KEY, mode 0666, a marker inside),
# and its removal.
sysv_segment() { # sysv_segment make|remove KEY
    "$PYTHON3" - "$1" "$2" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key = int(sys.argv[2])
if sys.argv[1] == "make":
    sid = libc.shmget(key, 4096, 0o1000 | 0o666)
    addr = libc.shmat(sid, None, 0)
    ctypes.memmove(addr, b"rms-sysv-marker\0", 16)
    libc.shmdt(ctypes.c_void_p(addr))
else:
    sid = libc.shmget(key, 0, 0)
    if sid >= 0:
        libc.shmctl(sid, 0, None)  # IPC_RMID
PY
}

# The probes, one script: each prints "R NAME reached ..." or
# "R NAME contained ...".
write_probe() { # write_probe FILE
    cat >"$1" <<PY
import ctypes, os, resource, signal, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.syscall.restype = ctypes.c_long
def res(name, reached, detail=""):
    print("R", name, "reached" if reached else "contained", detail, flush=True)
def err():
    return os.strerror(ctypes.get_errno())
def read(name, path):
    try:
        with open(path, "rb") as f:
            data = f.read(4096)
        res(name, True, "%d bytes" % len(data))
        return data
    except OSError as e:
        res(name, False, e.strerror)
ppid = os.getppid()
# The server's environment and memory (in the jail the parent is init).
env = read("environ", "/proc/%d/environ" % ppid)
if env is not None:
    print("R canary", b"$CANARY" in env)
try:
    with open("/proc/%d/mem" % ppid, "rb") as f:
        res("mem", True, "opened")
except OSError as e:
    res("mem", False, e.strerror)
# process_vm_readv: EFAULT would mean the permission check passed.
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(16)
local, remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 16), iovec(0x400000, 16)
n = libc.syscall(310, ppid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
e = ctypes.get_errno()
res("process_vm_readv", n >= 0 or e == 14, "n=%d %s" % (n, os.strerror(e)))
# pidfd_getfd: the parent's descriptor 0.
pfd = libc.syscall(434, ppid, 0)
if pfd < 0:
    res("pidfd_getfd", False, "pidfd_open: " + err())
else:
    fd = libc.syscall(438, pfd, 0, 0)
    res("pidfd_getfd", fd >= 0, "fd=%d %s" % (fd, err()))
# ptrace of a process of the test's (the mode's uid): seize, then detach.
r = libc.ptrace(0x4206, $TARGET_PID, None, None)
if r == 0:
    libc.ptrace(17, $TARGET_PID, None, None)
res("ptrace", r == 0, err() if r else "")
# prlimit of the parent (a read: the check is the same as for a write).
try:
    resource.prlimit(ppid, resource.RLIMIT_CORE)
    res("prlimit", True)
except OSError as e:
    res("prlimit", False, e.strerror)
# Another run's workspace, a session's, the configuration.
read("other-run", "$VICTIM_FILE")
read("session", "$SESSION_FILE")
read("config-0600", "$MD/conf-0600.conf")
read("config-0644", "$MD/conf-0644.conf")
# The shared environment: put the write bit back, drop a .pth in.
sp = [p for p in sys.path if p.startswith(sys.prefix) and p.endswith("site-packages")]
try:
    d = sp[0]
    os.chmod(d, os.stat(d).st_mode | 0o700)
    with open(os.path.join(d, "rms-evil-$TOK.pth"), "w") as f:
        f.write("import sys; sys.stderr.write('PWNED-$TOK\\\\n')\n")
    res("pth", True, d)
except (OSError, IndexError) as e:
    res("pth", False, str(e))
# Loopback TCP and UDP to the test's listener.
try:
    socket.create_connection(("127.0.0.1", $TCP_PORT), timeout=3).close()
    res("tcp", True)
except OSError as e:
    res("tcp", False, e.strerror)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("127.0.0.1", $UDP_PORT))
    res("udp-send", True)
except OSError as e:
    res("udp-send", False, e.strerror)
# Unix sockets of the test's: abstract and by path.
for name, addr in (("abstract", b"\0rms-fb-$TOK"), ("path", "$MD/sock")):
    try:
        u = socket.socket(socket.AF_UNIX)
        u.settimeout(3)
        u.connect(addr)
        u.close()
        res(name, True)
    except OSError as e:
        res(name, False, e.strerror)
# The host's /tmp and /dev/shm.
read("tmp-read", "/tmp/rms-fb-$TOK")
read("shm-read", "/dev/shm/rms-fb-$TOK")
for name, path in (("tmp-write", "/tmp/rms-fb-$TOK-w"), ("shm-write", "/dev/shm/rms-fb-$TOK-w")):
    try:
        with open(path, "w") as f:
            f.write("x")
        res(name, True, "(inside)")
    except OSError as e:
        res(name, False, e.strerror)
# System V IPC: the test's segment.
sid = libc.shmget($SYSV_KEY, 0, 0)
if sid < 0:
    res("sysv", False, "shmget: " + err())
else:
    addr = libc.shmat(sid, None, 0o10000)
    if addr in (None, ctypes.c_void_p(-1).value):
        res("sysv", False, "shmat: " + err())
    else:
        res("sysv", True, ctypes.string_at(addr, 15).decode())
# A signal to the test's process.
try:
    os.kill($TARGET_PID, signal.SIGUSR1)
    res("signal", True)
except OSError as e:
    res("signal", False, e.strerror)
PY
}

# contained NAME: the probe says NAME was contained.
contained() {
    local line
    line=$(grep "^R $1 " <<<"$LOGS" | head -1)
    like "$line" "R $1 contained" "$MODE: $2${line:+ (${line#R $1 })}"
}

n=0
for m in $RMS_MODES; do
    n=$((n + 1))
    mode_enter $m || { skip "$m: $MODE_SKIP"; continue; }
    TOK=$(new_token)
    MD=$T/targets-$m
    start_targets "$MD"
    # The configuration files with a fake token, the mode's user's.
    printf 'auth_token = fake-%s\n' "$TOK" >"$MD/conf-0600.conf"
    printf 'auth_token = fake-%s\n' "$TOK" >"$MD/conf-0644.conf"
    chmod 600 "$MD/conf-0600.conf"
    chmod 644 "$MD/conf-0644.conf"
    [ -n "${MODE_RUNAS[*]}" ] && chown $RMS_NOBODY:$RMS_NOBODY "$MD/conf-0600.conf" "$MD/conf-0644.conf"
    # The host's /tmp and /dev/shm, files of the test's (world-readable).
    echo "host tmp $TOK" >/tmp/rms-fb-$TOK
    echo "host shm $TOK" >/dev/shm/rms-fb-$TOK
    chmod 644 /tmp/rms-fb-$TOK /dev/shm/rms-fb-$TOK
    SYSV_KEY=$((0x524d5300 + n))
    sysv_segment remove $SYSV_KEY
    sysv_segment make $SYSV_KEY

    # A run before, and a session's run, each leaving a file behind.
    # In output/: what else a run writes in its directory is gone after it.
    printf 'import os\nopen(os.environ["SCRIPT_OUTPUT"] + "/victim-%s.txt", "w").write("victim data\\n")\n' "$TOK" >$T/victim.py
    printf 'open("session-%s.txt", "w").write("session data\\n")\n' "$TOK" >$T/session.py
    mode_file $T/victim.py $T/session.py
    mode_rms run $T/victim.py --json >$T/victim-$m.json 2>$T/victim-$m.err
    VICTIM_FILE=$MODE_STATE/runs/$(jget $T/victim-$m.json 'r["run_id"]')/output/victim-$TOK.txt
    mode_rms run $T/session.py --session "$MODE_STATE/sessions/victim" --json >$T/session-$m.json 2>$T/session-$m.err
    SESSION_FILE=$MODE_STATE/sessions/victim/workspace/session-$TOK.txt
    [ -f "$VICTIM_FILE" ] && [ -f "$SESSION_FILE" ]
    ok $? "$m: the victims left their files ($(jget $T/victim-$m.json 'r["isolation"]'))"

    CANARY=canary-$TOK
    write_probe $T/probe-$m.py
    mode_file $T/probe-$m.py
    if [ -n "${RMS_FALLBACK_CELL:-}" ]; then
        # The probe as a cell of a kernel of the mode's (the test's shell
        # stands for the server the kernel ends with), the kernel ended after.
        W=$T/ws-$m
        mkdir -p $W
        [ -n "${MODE_RUNAS[*]}" ] && chown $RMS_NOBODY:$RMS_NOBODY $W
        RMS_MODE_ENV="RMS_CANARY=$CANARY RMS_TEST_SERVER=$$" mode_cell cell $W "$(cat $T/probe-$m.py)" >$T/probe-$m.json 2>$T/probe-$m.err
        RMS_MODE_ENV="RMS_TEST_SERVER=$$" mode_cell end $W >/dev/null 2>&1
    else
        RMS_MODE_ENV="RMS_CANARY=$CANARY" mode_rms run $T/probe-$m.py --json >$T/probe-$m.json 2>$T/probe-$m.err
    fi
    LOGS=$(jget $T/probe-$m.json 'r["logs"]' 2>/dev/null)
    [ -n "$LOGS" ] || diag "$m: no logs: $(head -c 400 $T/probe-$m.err)"
    is "$(jget $T/probe-$m.json 'r["status"]' 2>/dev/null)" ok "$m: the probe ran to its end ($(jget $T/probe-$m.json 'r["isolation"]' 2>/dev/null))"
    contained environ "the server's /proc/PID/environ"
    ! grep -q "R canary True" <<<"$LOGS"
    ok $? "$m: no variable of the server's environment reached the script"
    contained mem "the server's /proc/PID/mem"
    contained process_vm_readv "process_vm_readv of the server"
    contained pidfd_getfd "pidfd_getfd of the server's descriptors"
    contained ptrace "ptrace of a process of the same uid"
    contained prlimit "prlimit of the server"
    contained other-run "another run's workspace"
    contained session "a session's workspace"
    contained config-0600 "a 0600 configuration file"
    contained config-0644 "a 0644 configuration file"
    contained pth "a .pth written into the shared environment"
    contained tcp "TCP to a loopback listener"
    contained abstract "an abstract unix socket of the host"
    contained path "a unix socket by path of the host"
    contained tmp-read "the host's /tmp"
    contained shm-read "the host's /dev/shm"
    [ ! -e /tmp/rms-fb-$TOK-w ] && [ ! -e /dev/shm/rms-fb-$TOK-w ]
    ok $? "$m: no file appeared in the host's /tmp or /dev/shm"
    contained sysv "System V shared memory of the host"
    contained signal "a signal to a process of the test's"
    is "$(fence_targets "$MD")" "" "$m: nothing reached the listener (TCP, UDP, unix sockets, signal)"
    kill $LISTENER 2>/dev/null
    wait $LISTENER 2>/dev/null

    # A later run with the same environment runs none of the attacker's code.
    printf 'print("later run")\n' >$T/later.py
    mode_file $T/later.py
    mode_rms run $T/later.py --json >$T/later-$m.json 2>&1
    LATER=$(jget $T/later-$m.json 'r["logs"]' 2>/dev/null)
    like "$LATER" "later run" "$m: a later run runs"
    ! grep -q "PWNED-$TOK" <<<"$LATER"
    ok $? "$m: and runs no .pth the attacker left"
    is "$(find "$MODE_STATE/envs" -name "rms-evil-$TOK.pth" 2>/dev/null)" "" "$m: no .pth in the environment"
    find "$MODE_STATE/envs" -name "rms-evil-$TOK.pth" -delete 2>/dev/null
    rm -f /tmp/rms-fb-$TOK /tmp/rms-fb-$TOK-w /dev/shm/rms-fb-$TOK /dev/shm/rms-fb-$TOK-w
    sysv_segment remove $SYSV_KEY
done

# The Landlock path is the one taken where the kernel has Landlock.
mode_enter fallback-user || mode_enter fallback-root
CS=$(mode_rms check-sandbox 2>&1)
if grep -q '^landlock: *ABI' <<<"$CS"; then
    cat >$T/ll.py <<PY
import os
print("R seccomp", [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")])
try:
    open("$T/ll.py").read()
    print("R outside read")
except OSError as e:
    print("R outside", e.errno)
PY
    mode_file $T/ll.py
    mode_rms run $T/ll.py --json >$T/ll.json 2>$T/ll.err
    LOGS=$(jget $T/ll.json 'r["logs"]' 2>/dev/null)
    is "$(jget $T/ll.json 'r["isolation"]')" landlock+seccomp "$MODE: the result says landlock+seccomp"
    like "$LOGS" "R seccomp ['2']" "$MODE: /proc/self/status says Seccomp: 2"
    like "$LOGS" "R outside 13" "$MODE: a read outside the rules fails with EACCES"
    like "$CS" "isolation landlock+seccomp" "$MODE: check-sandbox says the fallback gets landlock+seccomp"
    # landlock = on: the same here (it refuses only a kernel without it).
    RMS_MODE_ENV="RUNMYSCRIPT_LANDLOCK=on" mode_rms run $T/ll.py --json >$T/ll-on.json 2>$T/ll-on.err
    is "$(jget $T/ll-on.json 'r["status"], r["isolation"]' 2>/dev/null)" '["ok", "landlock+seccomp"]' \
        "$MODE: landlock = on runs with Landlock where the kernel has it"
else
    skip "this kernel has no Landlock (check-sandbox: $(grep '^landlock' <<<"$CS"))"
fi

# landlock = off: the plain fallback still runs a script, and says so.
printf 'print("plain fallback")\n' >$T/plain.py
mode_file $T/plain.py
RMS_MODE_ENV="RUNMYSCRIPT_LANDLOCK=off" mode_rms run $T/plain.py --json >$T/plain.json 2>$T/plain.err
is "$(jget $T/plain.json 'r["status"], r["isolation"], r["logs"]' 2>/dev/null)" '["ok", "rlimits", "plain fallback\n"]' \
    "$MODE: landlock = off runs the script in the plain fallback, which says rlimits"
like "$(RMS_MODE_ENV="RUNMYSCRIPT_LANDLOCK=off" mode_rms check-sandbox 2>&1)" "isolation rlimits (the fallback" \
    "$MODE: check-sandbox says rlimits under landlock = off"
done_testing
