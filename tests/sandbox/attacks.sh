#!/bin/bash
# The attack suite: hostile scripts run through `runmyscript run` in the
# namespace jail, each asserting the contained outcome and the status, and
# that nothing of the run is left. tests/sandbox/attacks-unprivileged.sh runs
# it again with the program running as an unprivileged user;
# attacks-cell.sh and attacks-cell-unprivileged.sh run each attack as a
# cell of a kernel.
#
# Every attack is written so that, were the jail broken, it still could not
# harm the machine that runs the tests: kill(-1) only after check-sandbox has
# confirmed a PID namespace, no mount onto a real path, ptrace only with
# PTRACE_SEIZE on a process the script itself started, files written outside
# the workspace removed at once, bombs capped (a fork bomb stops at 2000
# processes, a memory bomb at 3 GiB), network traffic only to a listener the
# test runs on 127.0.0.1.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
unset RUNMYSCRIPT_ISOLATION RUNMYSCRIPT_REQUIRE_ISOLATION
export RUNMYSCRIPT_ISOLATION=namespaces

# Who runs the program: this user, or (root, unprivileged pass) nobody.
RUNAS=()
if [ "${RMS_ATTACK_AS:-self}" = unprivileged ]; then
    if [ "$(id -u)" = 0 ]; then
        command -v setpriv >/dev/null || skip_all "setpriv is missing: cannot drop to an unprivileged user"
        RUNAS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        mkdir -p "$T/state" && chown 65534:65534 "$T/state"
        chmod 755 "$T"
    fi
    PASS="unprivileged"
else
    [ "$(id -u)" = 0 ] || skip_all "the root pass needs root (the unprivileged pass runs as this user)"
    PASS="root"
fi
diag "pass: $PASS"
# The network passes (attacks-network.sh, attacks-network-unprivileged.sh):
# every attack with script_network = on and an allow-list that names the
# host's loopback and private and link-local ranges, which stay out of
# reach all the same; no name is allowed, so no query and no packet leaves
# the machine.
if [ "${RMS_ATTACK_NETWORK:-}" = on ]; then
    export RUNMYSCRIPT_SCRIPT_NETWORK=on RUNMYSCRIPT_EGRESS_ALLOW="127.0.0.0/8,::1,10.0.0.0/8,169.254.0.0/16"
    diag "pass: network on"
fi

if ! "${RUNAS[@]}" "$RUNMYSCRIPT" check-sandbox >$T/check.txt 2>&1; then
    skip_all "this host cannot make the namespaces: $(grep -A1 '^namespaces and mounts' $T/check.txt | tr -s ' \n' ' ')"
fi
grep -q '^pid namespace: *yes' $T/check.txt && PIDNS=1 || PIDNS=0
# The cell passes (attacks-cell.sh, attacks-cell-unprivileged.sh): every
# attack a cell of a kernel of its own (tests/sandbox/cell, as serve's
# workers run cells), the kernel ended after it, so that what it left is
# looked for as a run's is; a running server (its pool: kernels start warm
# where they may) is the process the kernels end with.
CELL=
if [ -n "${RMS_ATTACK_CELL:-}" ]; then
    CELL=$top_builddir/tests/sandbox/cell
    . "$top_srcdir/tests/lib/warm.sh"
    export RUNMYSCRIPT_WARM_WAIT=60s
    warm_serve || { echo "Bail out! the server did not start"; exit 1; }
    diag "pass: cells"
fi
# The warm passes (attacks-warm.sh, attacks-warm-unprivileged.sh): every
# run forked from a zygote of a running server's pool, the server run as
# the pass's user (RUNAS), and each result says so.
if [ -n "${RMS_ATTACK_WARM:-}" ]; then
    . "$top_srcdir/tests/lib/warm.sh"
    # A slow machine (a sanitizer build) must not make a run cold: this
    # pass is about warm runs (warm.sh tests the fall back to cold).
    export RUNMYSCRIPT_WARM_WAIT=60s
    warm_serve || { echo "Bail out! the warm pool did not start"; exit 1; }
fi

# attack NAME [ARGS...] <<PY: runs the script (stdin) with a process marker;
# sets LOGS (the log) and J (the result file).
attack() {
    local name=$1
    shift
    TOK=$(new_token)
    { mark_py "$TOK"; cat; } >$T/$name.py
    chmod 644 $T/$name.py
    J=$T/$name.json
    RC=0
    if [ -n "$CELL" ]; then
        attack_cell "$name" "$@"
    else
        "${RUNAS[@]}" env RUNMYSCRIPT_STATE_DIR="$RUNMYSCRIPT_STATE_DIR" RMS_CANARY=canary-"$TOK" \
            "$RUNMYSCRIPT" run $T/$name.py --json "$@" >$J 2>$J.err || RC=$?
    fi
    LOGS=$(jget $J 'r["logs"]' 2>/dev/null)
    [ -s $J ] || diag "$name: no result: $(head -c 300 $J.err)"
    # (a line each, checked at the end: an attack may run in the background)
    if [ -n "${RMS_ATTACK_WARM:-}" ]; then
        echo "$name $(jget $J 'r["start"]' 2>/dev/null)" >>$T/starts
        grep -q '"start":"warm"' $J || diag "$name started cold: $(head -c 300 $J.err) $(grep -v 'is starting\|is ready' $T/warm-serve.log | tail -8)"
    fi
}
# attack_cell NAME [--timeout S] [--set K=V]...: the attack as a cell of a
# workspace of its own, then its kernel ended.
attack_cell() {
    local name=$1 args=()
    shift
    while [ $# -gt 0 ]; do
        case $1 in
        --timeout) args+=(--set "timeout=$2") ;;
        --set) args+=(--set "$2") ;;
        esac
        shift 2
    done
    local w=$T/ws-$name
    mkdir -p $w
    [ ${#RUNAS[@]} = 0 ] || chown 65534:65534 $w
    "${RUNAS[@]}" env RUNMYSCRIPT_STATE_DIR="$RUNMYSCRIPT_STATE_DIR" RMS_CANARY=canary-"$TOK" \
        RMS_TEST_SERVER=$WARM_SERVE_PID "$CELL" cell "${args[@]}" $w "$(cat $T/$name.py)" >$J 2>$J.err || RC=$?
    "${RUNAS[@]}" env RUNMYSCRIPT_STATE_DIR="$RUNMYSCRIPT_STATE_DIR" RMS_TEST_SERVER=$WARM_SERVE_PID \
        "$CELL" end $w >/dev/null 2>&1
}
# gone DESCRIPTION: no process of the last attack is left.
gone() {
    no_process_named "$TOK"
    ok $? "$1: no process of the run is left"
}
says() { like "$LOGS" "$1" "$2"; }
status_is() { is "$(jget $J 'r["status"]' 2>/dev/null)" "$1" "$2: status $1"; }

# --- what the script can see of the host ---
mkdir -p $T/secret-dir && echo "host secret" >$T/secret-dir/secret.txt
attack view <<PY
import os
def exists(p):
    try:
        os.stat(p)
        return True
    except OSError:
        return False
print("R shadow", exists("/etc/shadow"))
print("R root", exists("/root"))
print("R state", exists("$RUNMYSCRIPT_STATE_DIR"))
print("R testdir", exists("$T/secret-dir/secret.txt"))
print("R sys", exists("/sys/kernel"))
print("R proc", sorted(p for p in os.listdir("/proc") if p.isdigit()))
print("R ppid", os.getppid())
print("R uid", os.getuid(), os.geteuid(), os.getgid(), os.getgroups())
print("R canary", os.environ.get("RMS_CANARY", "absent"))
caps = {l.split(":")[0]: l.split()[1] for l in open("/proc/self/status") if l.startswith(("Cap", "NoNewPrivs", "Seccomp:"))}
print("R caps", caps["CapEff"], caps["CapPrm"], caps["CapBnd"], caps["CapAmb"], "nnp", caps["NoNewPrivs"], "seccomp", caps["Seccomp"])
print("R root-entries", sorted(os.listdir("/")))
try:
    open("/job/planted", "w").write("x")
    print("R job writable")
except OSError as e:
    print("R job", sorted(os.listdir("/job")), e.strerror)
PY
status_is ok "looking around"
says "R shadow False" "/etc/shadow is not there"
says "R root False" "/root is not there"
says "R state False" "the state directory is not there"
says "R testdir False" "the test's own files are not there"
says "R sys False" "/sys is not there"
says "R proc ['1', '2']" "/proc lists only the run's own processes (init and the script)"
says "R ppid 1" "the parent is the namespace's init"
says "R uid 1000 1000 1000 []" "uid and gid 1000, no supplementary groups"
says "R canary absent" "a variable of the server's environment does not reach the script"
says "R caps 0000000000000000 0000000000000000 0000000000000000 0000000000000000 nnp 1 seccomp 2" \
    "no capabilities at all, no_new_privs, a seccomp filter"
# The jail's root: its own entries, and those of the host's /bin, /lib...
# (links into /usr on a merged /usr) that the host has: Debian's slim
# image, for one, has no /lib32.
ROOT_WANT=$("$PYTHON3" -c 'import os
print(sorted(["dev", "env", "etc", "job", "proc", "tmp", "usr", "work"]
             + [d for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32") if os.path.lexists("/" + d)]))')
says "R root-entries $ROOT_WANT" \
    "the root holds only what Python needs (and /job, the run directory the script or the kernel's loop runs from)"
if [ -z "$CELL" ]; then
    says "R job ['input', 'output', 'script.py'] Read-only file system" "/job holds the run's own script and input, read-only"
else
    says "] Read-only file system" "/job, the kernel's loop, is read-only"
fi
gone "looking around"

# --- writes outside the workspace ---
attack writes <<'PY'
import os
for p in ["/usr/rms-evil", "/etc/rms-evil", "/env/rms-evil", "/rms-evil", "/root/rms-evil", "/dev/rms-evil",
          "/proc/rms-evil", "/usr/lib/python3.11/os.py"]:
    try:
        with open(p, "a") as f:
            f.write("x")
        print("R wrote", p)
    except OSError as e:
        print("R refused", p, e.errno)
os.makedirs("/tmp/home/ok", exist_ok=True)
open(os.path.expanduser("~/ok/x"), "w").write("home is private and writable\n")
print("R home ok")
PY
status_is ok "writes"
! grep -q "R wrote" <<<"$LOGS"
ok $? "no write outside the workspace succeeded"
for p in /usr/rms-evil /etc/rms-evil /rms-evil /root/rms-evil /dev/rms-evil; do
    if [ -e $p ]; then rm -f $p; ok 1 "host $p was written (removed now)"; fi
done
ok 0 "no file appeared on the host"
says "R home ok" "HOME is writable (on the private /tmp)"
gone "writes"

# --- the dependency environment is read-only; /usr too ---
attack envwrite <<'PY'
import os, sys
try:
    os.mkdir(os.path.join(sys.prefix, "lib", "evil"))
    print("R env writable")
except OSError as e:
    print("R env refused", e.errno)
PY
says "R env refused 30" "the environment is mounted read-only (EROFS)"

# --- another concurrent run's workspace ---
attack victim --timeout 20 <<'PY' &
import os, time
open("victim-secret-0c4f.txt", "w").write("victim data\n")
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "victim-out-0c4f.txt"), "w").write("victim data\n")
time.sleep(3)
PY
victim_pid=$!
sleep 1
attack thief <<'PY'
import os
found = []
for top in ["/"]:
    for root, dirs, files in os.walk(top):
        if root in ("/proc", "/sys", "/dev"):
            dirs[:] = []
            continue
        found += [os.path.join(root, f) for f in files if "0c4f" in f]
print("R found", found)
PY
wait $victim_pid
says "R found []" "a concurrent run's files cannot be found from another run"

# --- the network ---
port_file=$T/port
conn_file=$T/connections
"$PYTHON3" - $port_file $conn_file <<'PY' &
import socket, sys, threading, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(5)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
u = socket.socket(socket.AF_UNIX)
u.bind(b"\0rms-attack-listener")
u.listen(5)
def watch(sock, label):
    while True:
        c, _ = sock.accept()
        open(sys.argv[2], "a").write(label + "\n")
        c.close()
threading.Thread(target=watch, args=(u, "unix"), daemon=True).start()
s.settimeout(60)
try:
    watch(s, "tcp")
except OSError:
    pass
PY
listener=$!
for i in $(seq 50); do [ -s $port_file ] && break; sleep 0.1; done
port=$(cat $port_file)
attack network <<PY
import socket
print("R ifaces", [n for _, n in socket.if_nameindex()])
routes = [l for l in open("/proc/net/route").read().splitlines()[1:] if l.strip()]
print("R routes", routes)
try:
    socket.create_connection(("127.0.0.1", $port), timeout=2)
    print("R tcp connected")
except OSError as e:
    print("R tcp refused", e.errno)
u = socket.socket(socket.AF_UNIX)
try:
    u.connect(b"\0rms-attack-listener")
    print("R unix connected")
except OSError as e:
    print("R unix refused", e.errno)
PY
status_is ok "network"
if [ "${RMS_ATTACK_NETWORK:-}" = on ]; then
    # A network of the run's own: none of the host's interfaces.
    host_ifaces=$(ls /sys/class/net | grep -vx lo)
    seen=$(for i in $host_ifaces; do case "$LOGS" in *"R ifaces"*"'$i'"*) echo "$i" ;; esac; done)
    is "$seen" "" "network on: the run sees none of the host's interfaces"
else
    says "R ifaces ['lo']" "the run sees no interface but lo"
    says "R routes []" "and no IPv4 route at all"
fi
says "R tcp refused" "a connection to the host's 127.0.0.1 listener fails"
says "R unix refused" "the host's abstract unix socket is out of reach"
[ ! -s $conn_file ]
ok $? "the host's listeners saw no connection"
kill $listener 2>/dev/null
wait $listener 2>/dev/null

# --- syscalls the filter denies ---
attack syscalls <<'PY'
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(*args)
    e = ctypes.get_errno()
    print("R", name, "ok" if r >= 0 else errno.errorcode.get(e, e))
os.makedirs("mnt", exist_ok=True)   # an empty directory inside our own workspace
call("mount", 165, b"none", b"mnt", b"tmpfs", 0, None)
call("umount2", 166, b"/work", 2)
call("pivot_root", 155, b".", b".")
call("unshare", 272, 0x10000000)             # CLONE_NEWUSER
call("unshare_mnt", 272, 0x00020000)         # CLONE_NEWNS
call("setns", 308, 0, 0)
call("clone_newuser", 56, 0x10000000 | 17, 0, 0, 0, 0)
call("clone3", 435, 0, 0)
call("keyctl", 250, 0, 0, 0, 0, 0)
call("add_key", 248, b"user", b"k", b"v", 1, 0)
call("request_key", 249, b"user", b"k", 0, 0)
call("bpf", 321, 0, 0, 0)
call("perf_event_open", 298, 0, 0, -1, -1, 0)
call("ptrace", 101, 16, 1, 0, 0)             # PTRACE_ATTACH to init
call("process_vm_readv", 310, 1, 0, 0, 0, 0, 0)
call("kexec_load", 246, 0, 0, 0, 0)
call("init_module", 175, 0, 0, b"")
call("reboot", 169, 0xfee1dead, 672274793, 0x4321fedc, 0)
call("swapoff", 168, b"/dev/null")
call("io_uring_setup", 425, 1, 0)
call("userfaultfd", 323, 0)
call("open_by_handle_at", 304, -100, 0, 0)
call("acct", 163, None)
for fam, proto, name in [(40, 0, "vsock"), (16, 9, "netlink_audit"), (16, 12, "netlink_netfilter"), (16, 0, "netlink_route")]:
    try:
        socket.socket(fam, socket.SOCK_RAW if fam == 16 else socket.SOCK_STREAM, proto).close()
        print("R socket", name, "ok")
    except OSError as e:
        print("R socket", name, errno.errorcode.get(e.errno, e.errno))
try:
    os.mknod("output/dev-null", 0o666 | 0o020000, os.makedev(1, 3))
    print("R mknod ok")
except OSError as e:
    print("R mknod", errno.errorcode.get(e.errno))
PY
status_is ok "denied syscalls"
for c in mount umount2 pivot_root unshare unshare_mnt setns clone_newuser keyctl add_key request_key bpf \
         perf_event_open ptrace process_vm_readv kexec_load init_module reboot swapoff io_uring_setup \
         userfaultfd open_by_handle_at acct; do
    says "R $c EPERM" "$c is denied with EPERM"
done
says "R clone3 ENOSYS" "clone3 answers ENOSYS (the C library falls back to clone)"
says "R socket vsock EAFNOSUPPORT" "AF_VSOCK sockets are refused"
says "R socket netlink_audit EAFNOSUPPORT" "netlink audit sockets are refused"
says "R socket netlink_netfilter EAFNOSUPPORT" "netlink netfilter sockets are refused"
says "R socket netlink_route ok" "netlink routing queries stay allowed"
says "R mknod EPERM" "device nodes cannot be made"
gone "denied syscalls"

# The x32 ABI (syscall numbers with bit 30): killed, or unknown to the kernel.
attack x32 <<'PY'
import subprocess, sys
child = subprocess.run([sys.executable, "-c", "import ctypes; print(ctypes.CDLL(None).syscall(0x40000000 | 39))"],
                       capture_output=True, text=True)
print("R x32", child.returncode, child.stdout.strip())
PY
if grep -q "R x32 -31 " <<<"$LOGS" || grep -q "R x32 0 -1" <<<"$LOGS"; then
    ok 0 "an x32 syscall is killed (SIGSYS) or fails"
else
    ok 1 "an x32 syscall is killed (SIGSYS) or fails: $(grep 'R x32' <<<"$LOGS")"
fi

# --- ptrace of a child of its own, with PTRACE_SEIZE; the parent is init ---
attack ptrace <<'PY'
import ctypes, errno, os, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    time.sleep(5)
    os._exit(0)
r = libc.ptrace(0x4206, pid, 0, 0)          # PTRACE_SEIZE
print("R seize", "ok" if r == 0 else errno.errorcode[ctypes.get_errno()])
os.kill(pid, 9)
os.waitpid(pid, 0)
PY
says "R seize EPERM" "PTRACE_SEIZE of its own child is denied"
gone "ptrace"

# --- signals: init cannot be killed from inside; kill(-1) stays inside ---
sleep 60 &
sentinel=$!
attack kill <<PY
import os, signal, time
try:
    os.kill(1, signal.SIGKILL)
    print("R kill-init sent")
except OSError as e:
    print("R kill-init", e.errno)
time.sleep(0.2)
print("R init alive", os.path.exists("/proc/1"))
if $PIDNS:
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    os.kill(-1, signal.SIGKILL)
    _, st = os.waitpid(pid, 0)
    print("R kill-all reached own child", os.WIFSIGNALED(st))
print("R survived")
PY
says "R init alive True" "SIGKILL to init from inside does nothing"
says "R survived" "the script survives its own kill(-1)"
if [ $PIDNS = 1 ]; then
    says "R kill-all reached own child True" "kill(-1) reaches the run's own processes"
else
    skip "kill(-1) runs only where check-sandbox confirms a PID namespace"
fi
kill -0 $sentinel
ok $? "a process of the host outside the run is untouched"
kill $sentinel
wait $sentinel 2>/dev/null
gone "signals"

# --- setsid + double fork ---
attack daemon --timeout 20 <<'PY'
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(1000)
    os._exit(0)
time.sleep(0.3)
print("R parent done")
PY
status_is ok "setsid + double fork"
gone "setsid + double fork"

# --- bombs (capped) ---
attack forkbomb --set processes=64 --timeout 30 <<'PY'
import os, time
n = 0
try:
    for i in range(2000):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    print("R fork stopped at", n, e.__class__.__name__)
print("R forked", n)
PY
n=$(sed -n 's/^R forked //p' <<<"$LOGS")
[ -n "$n" ] && [ "$n" -lt 64 ]
ok $? "a fork bomb stops below processes = 64 (forked $n)"
gone "fork bomb"

attack membomb --set memory=256M <<'PY'
blocks = []
for i in range(30):                 # at most 3 GiB
    blocks.append(bytearray(100 * 1024 * 1024))
    print("R allocated", (i + 1) * 100, "MiB", flush=True)
PY
status_is memory "a memory bomb"
is "$(jget $J 'r["limit"]')" memory "limit memory"
is "$(jget $J 'r["exit_code"] == 0')" false "the memory bomb did not complete"
gone "memory bomb"

attack spin --timeout 1 <<'PY'
while True:
    pass
PY
status_is timeout "a CPU spin"
gone "CPU spin"

attack sleeper --timeout 1 <<'PY'
import time
time.sleep(10 ** 6)
PY
status_is timeout "sleep forever"
gone "sleep forever"

# --- filling things ---
attack filltmp --set tmp_bytes=4M --set tmp_files=200 <<'PY'
import errno, os
n = 0
try:
    with open("/tmp/fill", "wb") as f:
        for i in range(100):
            f.write(b"x" * 1024 * 1024)
            f.flush()
            n += 1
except OSError as e:
    print("R tmp bytes stopped", n, errno.errorcode[e.errno])
os.remove("/tmp/fill")
k = 0
try:
    for i in range(10000):
        open("/tmp/f%d" % i, "w").close()
        k += 1
except OSError as e:
    print("R tmp inodes stopped", errno.errorcode[e.errno])
print("R files", k)
try:
    with open("/dev/shm/fill", "wb") as f:
        for i in range(100):
            f.write(b"x" * 1024 * 1024)
            f.flush()
except OSError as e:
    print("R shm stopped", errno.errorcode[e.errno])
PY
says "R tmp bytes stopped" "/tmp fills up at tmp_bytes"
says "ENOSPC" "with ENOSPC"
says "R tmp inodes stopped ENOSPC" "/tmp runs out of inodes at tmp_files"
k=$(sed -n 's/^R files //p' <<<"$LOGS")
[ -n "$k" ] && [ "$k" -le 200 ]
ok $? "no more than tmp_files files ($k)"
says "R shm stopped ENOSPC" "/dev/shm fills up too"

attack filloutput --set output_bytes=1M --timeout 30 <<'PY'
import os, time
out = os.environ["SCRIPT_OUTPUT"]
for i in range(100):
    with open(os.path.join(out, "chunk%03d" % i), "wb") as f:
        f.write(b"x" * 512 * 1024)
time.sleep(20)
PY
status_is output_limit "filling output/"
gone "filling output/"

attack fillinodes --set output_files=100 --timeout 30 <<'PY'
import os, time
out = os.environ["SCRIPT_OUTPUT"]
for i in range(5000):
    open(os.path.join(out, "f%05d" % i), "w").close()
time.sleep(20)
PY
status_is output_limit "filling output/ with files"
is "$(jget $J 'r["limit"]')" output_files "limit output_files"

# --- output without newlines, binary output ---
attack binary <<'PY'
import os, sys
sys.stdout.buffer.write(os.urandom(4096))
sys.stdout.buffer.write(b"no newline at the end")
PY
status_is ok "binary output"
"$PYTHON3" -c 'import json,sys; json.load(open(sys.argv[1]))' $J
ok $? "binary output still gives valid JSON"

# --- odd files in output/ ---
attack oddfiles <<'PY'
import os
out = os.environ["SCRIPT_OUTPUT"]
os.symlink("/etc/passwd", os.path.join(out, "link"))
os.mkfifo(os.path.join(out, "fifo"))
open("outside", "w").write("x")
os.link("outside", os.path.join(out, "hard"))
open(os.path.join(out, "real.txt"), "w").write("real\n")
PY
is "$(jget $J '[a["path"] for a in r["artifacts"]]')" '["real.txt"]' "symlinks, FIFOs and shared hard links are not artifacts"

# --- core dumps ---
attack core <<'PY'
import os
os.abort()
PY
is "$(jget $J 'r["signal"]')" SIGABRT "an abort ends the script with SIGABRT"
rd=$(jget $J 'r["workdir"]')
cores=$(find "$rd" -name 'core*' 2>/dev/null | wc -l)
is "$cores" 0 "no core dump is written"

# --- a setuid-root binary does not make the script root (root pass) ---
# The probe is a setuid-root copy of id(1), which prints the effective uid
# (no compiler needed: the image has none).
if [ $PASS = root ]; then
    env=$(ls -d "$RUNMYSCRIPT_STATE_DIR"/envs/base-*/ | head -n1)
    cp "$(command -v id)" "$env/bin/rms-euid-probe"
    chown 0:0 "$env/bin/rms-euid-probe" && chmod 4755 "$env/bin/rms-euid-probe"
    attack setuid <<'PY'
import subprocess, sys, os
print("R euid=" + subprocess.run([os.path.join(sys.prefix, "bin", "rms-euid-probe"), "-u"], capture_output=True, text=True).stdout.strip())
PY
    rm -f "$env/bin/rms-euid-probe"
    says "R euid=1000" "a setuid-root binary runs with the sandbox uid (nosuid, no_new_privs)"
else
    skip "the setuid probe needs root to install a setuid-root file"
fi

# --- packages given to a live kernel: it cannot change them (cell passes) ---
if [ -n "$CELL" ] && ls "${WHEELHOUSE:-/nonexistent}"/rms_alpha-*.whl >/dev/null 2>&1; then
    w=$T/ws-site
    mkdir -p $w
    [ ${#RUNAS[@]} = 0 ] || chown 65534:65534 $w
    site_cell() {
        J=$T/site-$1.json
        "${RUNAS[@]}" env RUNMYSCRIPT_STATE_DIR="$RUNMYSCRIPT_STATE_DIR" RMS_TEST_SERVER=$WARM_SERVE_PID \
            "$CELL" cell --set install_time=600s $w "$2" >$J 2>$J.err
    }
    site_cell 1 'x = 1'
    site_cell 2 'import rms_alpha'
    is "$(jget $J 'r["kernel"]["state"]')" kept "site: rms_alpha was added to the live kernel"
    site_cell 3 'import os, rms_alpha
d = "/job/site"
f = rms_alpha.__file__
def t(name, fn):
    try:
        fn()
        print("R", name, "done")
    except OSError as e:
        print("R", name, "refused", e.errno)
t("create", lambda: open(d + "/planted.py", "w").write("x"))
t("append", lambda: open(f, "a").write("x"))
t("truncate", lambda: os.truncate(f, 0))
t("mkdir", lambda: os.mkdir(d + "/planted"))
t("unlink", lambda: os.unlink(f))
t("rename", lambda: os.rename(d + "/rms_alpha", d + "/moved"))
t("chmod", lambda: os.chmod(f, 0o666))
t("utime", lambda: os.utime(f, (0, 0)))
t("symlink", lambda: os.symlink("/work", d + "/planted-link"))
t("link-out", lambda: os.link(f, "/work/linked.py"))
t("remount", lambda: __import__("ctypes").CDLL(None, use_errno=True).mount(None, d.encode(), None, 0x20 | 0x1000, None) == 0 or (_ for _ in ()).throw(OSError(__import__("ctypes").get_errno(), "mount")))
t("tools", lambda: open("/job/tools/planted", "w"))
print("R sees", sorted(os.listdir("/job")), sorted(os.listdir(d)))
print("R file", f)'
    LOGS=$(jget $J 'r["logs"]')
    for op in create append truncate mkdir unlink rename chmod utime symlink link-out remount; do
        like "$LOGS" "R $op refused" "site: $op in the kernel's extra directory is refused"
    done
    like "$LOGS" "R tools refused" "site: the kernel's own tools (its pickler, /job/tools) are read-only"
    says "R sees ['input', 'script.py', 'site', 'tools'] ['rms_alpha', 'rms_alpha-1.0.dist-info']" \
        "site: the kernel sees its own extra directory and tools, and nothing of another's"
    says "R file /job/site/rms_alpha/__init__.py" "site: the package was imported from it"
    key=$(printf %s "$(cd $w && pwd -P)" | sha256sum | cut -c1-32)
    hs=$RUNMYSCRIPT_STATE_DIR/kernels/$key/site
    is "$(cd $hs && ls | tr '\n' ' ')" "rms_alpha rms_alpha-1.0.dist-info " "site: nothing was planted in it"
    like "$(cat $hs/rms_alpha/__init__.py)" "alpha says hello" "site: its files are intact"
    is "$(stat -c '%u %a' $hs/rms_alpha/__init__.py)" "$(stat -c %u $RUNMYSCRIPT_STATE_DIR) 444" \
        "site: they keep the server's owner and their read-only mode"
    "${RUNAS[@]}" env RUNMYSCRIPT_STATE_DIR="$RUNMYSCRIPT_STATE_DIR" RMS_TEST_SERVER=$WARM_SERVE_PID \
        "$CELL" end $w >/dev/null 2>&1
elif [ -n "$CELL" ]; then
    skip "site: no rms_alpha wheel in the test wheelhouse"
fi

if [ -n "${RMS_ATTACK_WARM:-}" ]; then
    while read -r name start; do
        is "$start" warm "$name: started warm"
    done <$T/starts
fi
done_testing
