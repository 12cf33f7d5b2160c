#!/bin/bash
# Warm starts: runs forked from a zygote of a running server's pool
# (tests/lib/warm.sh). That no state passes between warm runs, concurrent
# or one after the other; that a script gives the same result warm and
# cold (exit codes, signals, tracebacks, argv and the environment, output
# order, stdin, the limits and their statuses, the seed example); and that
# every call still gets its result when the pool fails: a zygote killed
# (while runs come), a zygote that hangs, a full memory budget, the server
# restarted; the last expression's value shown the same warm and cold. The
# attack suite's warm passes are attacks-warm.sh and
# attacks-warm-unprivileged.sh; warm-unprivileged.sh runs this suite again
# with the server and every run an unprivileged user's.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/warm.sh"
T=$TEST_TMP
# Who runs the program, the server included: this user, or (root, the
# unprivileged pass) nobody, with a state directory of its own.
RUNAS=()
if [ "${RMS_WARM_AS:-self}" = unprivileged ]; then
    [ "$(id -u)" = 0 ] || skip_all "the tests run unprivileged already: warm.sh is this pass"
    command -v setpriv >/dev/null || skip_all "setpriv is missing: cannot drop to an unprivileged user"
    RUNAS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    mkdir -p "$RUNMYSCRIPT_STATE_DIR" && chown 65534:65534 "$RUNMYSCRIPT_STATE_DIR"
    chmod 755 "$T"
    run_json() {
        local out=$1
        shift
        RC=0
        "${RUNAS[@]}" "$RUNMYSCRIPT" run "$@" --json >"$out" 2>"$out.err" || RC=$?
    }
fi
diag "pass: $([ ${#RUNAS[@]} = 0 ] && id -un || echo nobody)"
export RUNMYSCRIPT_ISOLATION=namespaces
# Runs that must be warm may wait long on a slow machine (a sanitizer
# build); the hung zygote's case sets its own.
export RUNMYSCRIPT_WARM_WAIT=60s
warm_serve || { echo "Bail out! the warm pool did not start"; exit 1; }

start_of() { jget "$1" 'r["start"]' 2>/dev/null; }

# --- concurrent warm runs cannot see each other ---
for who in a b; do
    cat >$T/conc-$who.py <<PY
import os, time
open("/work/mine-$who", "w").write("x")
open("/tmp/mine-$who", "w").write("x")
time.sleep(1.5)
other = "b" if "$who" == "a" else "a"
print("R files", os.path.exists("/work/mine-" + other), os.path.exists("/tmp/mine-" + other))
print("R tmp", sorted(os.listdir("/tmp")))
print("R pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
PY
done
run_json $T/conc-a.json $T/conc-a.py &
conc=$!
run_json $T/conc-b.json $T/conc-b.py
wait $conc
for who in a b; do
    is "$(start_of $T/conc-$who.json)" warm "concurrent run $who started warm"
    L=$(jget $T/conc-$who.json 'r["logs"]')
    like "$L" "R files False False" "run $who sees neither the other's workspace file nor its /tmp file"
    like "$L" "R tmp ['home', 'mine-$who']" "run $who's /tmp holds only its own"
    like "$L" "R pids [1, 2]" "run $who sees only its init and itself"
done

# --- five warm runs in a row: fresh randomness each ---
cat >$T/rand.py <<'PY'
import os, random, uuid
print("R", random.random(), uuid.uuid4(), os.urandom(8).hex())
PY
seen=""
all_warm=1
for i in 1 2 3 4 5; do
    run_json $T/rand$i.json $T/rand.py
    [ "$(start_of $T/rand$i.json)" = warm ] || all_warm=0
    seen="$seen$(jget $T/rand$i.json 'r["logs"]')"$'\n'
done
ok $((1 - all_warm)) "five runs in a row started warm"
is "$(printf '%s' "$seen" | grep -c '^R ')" 5 "five runs printed their values"
is "$(printf '%s' "$seen" | grep '^R ' | awk '{print $2}' | sort -u | wc -l)" 5 "random.random() differs in each"
is "$(printf '%s' "$seen" | grep '^R ' | awk '{print $3}' | sort -u | wc -l)" 5 "uuid.uuid4() differs in each"
is "$(printf '%s' "$seen" | grep '^R ' | awk '{print $4}' | sort -u | wc -l)" 5 "os.urandom differs in each"

# --- numpy's global generator, reseeded in each warm run; BLAS's threads ---
if ls "${WHEELHOUSE:-/nonexistent}"/numpy-*.whl >/dev/null 2>&1; then
    cat >$T/nprand.py <<'PY'
import ctypes, os, numpy
def blas_threads():
    for lib in {l.split()[-1] for l in open("/proc/self/maps") if "blas" in l and ".so" in l}:
        fn = getattr(ctypes.CDLL(lib), "openblas_get_num_threads", None)
        if fn is not None:
            return fn()
print("R", numpy.random.rand(), "blas", blas_threads())
PY
    run_json $T/np0.json $T/nprand.py --with numpy
    is "$(jget $T/np0.json 'r["status"]')" ok "a numpy environment is built"
    np_warm() { run_json $T/np-w.json $T/nprand.py --with numpy; [ "$(start_of $T/np-w.json)" = warm ]; }
    wait_until np_warm
    seen=""
    all_warm=1
    for i in 1 2 3 4 5; do
        run_json $T/np$i.json $T/nprand.py --with numpy
        [ "$(start_of $T/np$i.json)" = warm ] || all_warm=0
        seen="$seen$(jget $T/np$i.json 'r["logs"]')"$'\n'
    done
    ok $((1 - all_warm)) "five numpy runs in a row started warm"
    is "$(printf '%s' "$seen" | grep '^R ' | awk '{print $2}' | sort -u | wc -l)" 5 "numpy.random.rand() differs in each"
    run_json $T/npcold.json $T/nprand.py --with numpy --set warm=off
    is "$(jget $T/np1.json 'r["logs"]' | sed 's/.* blas/blas/')" "$(jget $T/npcold.json 'r["logs"]' | sed 's/.* blas/blas/')" \
        "OpenBLAS has as many threads warm as cold: the zygote's one is given back ($(jget $T/npcold.json 'r["logs"]' | sed 's/.* blas/blas/'); None: not OpenBLAS)"
    # BLAS's threads start once the script's process has dropped
    # everything (a spare made that process ahead): each thread of it has
    # the filter, no capabilities and no_new_privs.
    cat >$T/npthreads.py <<'PY'
import os, numpy
numpy.ones((400, 400)) @ numpy.ones((400, 400))
def field(st, key):
    return [l.split()[1] for l in st.splitlines() if l.startswith(key + ":")][0]
seen = set()
for t in os.listdir("/proc/self/task"):
    st = open("/proc/self/task/%s/status" % t).read()
    seen.add((field(st, "Seccomp"), field(st, "CapEff"), field(st, "NoNewPrivs")))
print("R", len(os.listdir("/proc/self/task")), sorted(seen))
PY
    run_json $T/npth.json $T/npthreads.py --with numpy
    is "$(jget $T/npth.json '[r["start"], r["status"]]') $(jget $T/npth.json 'r["logs"]' | sed -n 's/^R [0-9]* //p')" \
        "[\"warm\", \"ok\"] [('2', '0000000000000000', '1')]" \
        "a warm numpy run: each of its threads ($(jget $T/npth.json 'r["logs"]' | awk '/^R/ {print $2}'): BLAS's, where BLAS starts any, and its own) has the filter, no capabilities and no_new_privs"
else
    skip "no numpy wheel (python3-numpy is not installed): numpy's generator warm"
fi

# --- the pool learns whole module paths, and skips what is unsafe ---
# (STATE/.warm/learned: per environment, what its runs import, what its
# zygote imported, what it skipped and why)
learned_of() { # learned_of ENVKEY FIELD: that line of the environment's block
    awk -v env="$RUNMYSCRIPT_STATE_DIR/envs/$1" -v f="$2" '$1 == "env" { on = ($2 == env) } on && $1 == f { $1 = ""; print substr($0, 2) }' \
        "$RUNMYSCRIPT_STATE_DIR/.warm/learned" 2>/dev/null
}
if ls "${WHEELHOUSE:-/nonexistent}"/matplotlib-*.whl >/dev/null 2>&1; then
    cat >$T/plt.py <<'PY'
import os, sys
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.bar(["a", "b"], [1, 2])
fig.savefig(os.path.join(os.environ["SCRIPT_OUTPUT"], "bar.png"), dpi=40)
print("R pyplot", "matplotlib.pyplot" in sys.modules, plt.get_backend())
PY
    run_json $T/plt0.json $T/plt.py
    is "$(jget $T/plt0.json '[r["status"], r["start"]]')" '["ok", "cold"]' "import matplotlib.pyplot: the environment's first run is cold"
    pkey=$(jget $T/plt0.json 'r["env"]')
    has_pyplot() { learned_of "$pkey" imported | grep -qw 'matplotlib\.pyplot'; }
    wait_until has_pyplot
    ok $? "its zygote imported matplotlib.pyplot, not only matplotlib ($(learned_of "$pkey" imported))"
    run_json $T/plt1.json $T/plt.py
    is "$(jget $T/plt1.json '[r["status"], r["start"]]')" '["ok", "warm"]' "the second run of the pyplot script is warm"
    is "$(jget $T/plt1.json 'r["logs"]')" "$(jget $T/plt0.json 'r["logs"]')" "and prints what the cold one printed (the Agg backend)"
    # The font cache: built with the environment, read-only there, and
    # seen by a cold and a warm run alike through their HOME, which neither
    # writes a thing to.
    cat >$T/font.py <<'PY'
import os
def tree(d):
    return sorted((os.path.relpath(os.path.join(r, f), d), os.path.islink(os.path.join(r, f)))
                  for r, ds, fs in os.walk(d) for f in ds + fs)
before = tree(os.environ["HOME"])
import matplotlib, matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.set_title("fonts")
fig.savefig(os.path.join(os.environ["SCRIPT_OUTPUT"], "t.png"), dpi=30)
cache = [os.path.join(matplotlib.get_cachedir(), f) for f in os.listdir(matplotlib.get_cachedir()) if f.startswith("fontlist-")]
real = os.path.realpath(cache[0]) if cache else ""
st = os.stat(real) if real else None
print("R cache", len(cache), real.startswith("/env/.rms-cache/"), os.access(real, os.W_OK))
print("R home unchanged", tree(os.environ["HOME"]) == before)
print("R id", st and (st.st_ino, st.st_mtime_ns))
PY
    run_json $T/font-cold.json $T/font.py --set warm=off
    font_warm() { run_json $T/font-warm.json $T/font.py; [ "$(start_of $T/font-warm.json)" = warm ]; }
    wait_until font_warm
    for k in cold warm; do
        L=$(jget $T/font-$k.json 'r["logs"]')
        like "$L" "R cache 1 True False" "$k: matplotlib's font list is the environment's, read-only"
        like "$L" "R home unchanged True" "$k: the run wrote nothing under its HOME"
    done
    is "$(jget $T/font-cold.json 'r["logs"]' | grep '^R id')" "$(jget $T/font-warm.json 'r["logs"]' | grep '^R id')" \
        "cold and warm see the same cache file"
    fkey=$(jget $T/font-cold.json 'r["env"]')
    ls "$RUNMYSCRIPT_STATE_DIR"/envs/$fkey/.rms-cache/home/.cache/matplotlib/fontlist-*.json >/dev/null 2>&1
    ok $? "the cache lives in the environment (STATE/envs/KEY/.rms-cache), not in a store entry"
    # The environment rebuilt (as after its eviction): a new cache with it.
    chmod -R u+w "$RUNMYSCRIPT_STATE_DIR/envs/$fkey" && rm -rf "$RUNMYSCRIPT_STATE_DIR/envs/$fkey"
    run_json $T/font-rebuilt.json $T/font.py --set warm=off
    is "$(jget $T/font-rebuilt.json '[r["status"], r["env_cache"]]')" '["ok", "built"]' "the environment is built again"
    like "$(jget $T/font-rebuilt.json 'r["logs"]')" "R cache 1 True False" "with a font list of its own"
    [ "$(jget $T/font-rebuilt.json 'r["logs"]' | grep '^R id')" != "$(jget $T/font-cold.json 'r["logs"]' | grep '^R id')" ]
    ok $? "a new one: not the file the environment before it had"
else
    skip "no matplotlib wheel (python3-matplotlib is not installed): the pool learns matplotlib.pyplot; the font cache"
fi
if ls "${WHEELHOUSE:-/nonexistent}"/rms_thread-*.whl "${WHEELHOUSE:-/nonexistent}"/rms_display-*.whl >/dev/null 2>&1; then
    printf 'import json\nimport rms_thread\nimport rms_display\nprint("R threads", rms_thread.threads(), rms_display.connected())\n' >$T/thread.py
    run_json $T/th0.json $T/thread.py
    tkey=$(jget $T/th0.json 'r["env"]')
    skipped0=$(warm_stats | sed -n 's/^skipped //p')
    is_skipped() { learned_of "$tkey" skipped | grep -q '^rms_thread a thread' && learned_of "$tkey" skipped | grep -q '^rms_display a socket'; }
    wait_until is_skipped
    ok $? "a module that starts a thread and one that keeps a socket (a display's) are skipped, and why is remembered ($(learned_of "$tkey" skipped | tr '\n' ';'))"
    th_warm() { run_json $T/th1.json $T/thread.py; [ "$(start_of $T/th1.json)" = warm ]; }
    wait_until th_warm
    ok $? "its environment's zygote stays usable: the next run is warm"
    is "$(jget $T/th1.json '[r["status"], r["logs"]]')" "$(jget $T/th0.json '[r["status"], r["logs"]]')" \
        "the warm run imports the module itself and sees its thread as a cold run does"
    like "$(learned_of "$tkey" imported)" "json" "the zygote imported the rest (json)"
    [ "$(warm_stats | sed -n 's/^skipped //p')" -ge 1 ] 2>/dev/null
    ok $? "the pool's stats count the skipped module"
else
    skip "the wheelhouse lacks rms-thread or rms-display: modules a zygote cannot import safely"
fi

# --- spares: runs' inits made ahead, one fresh set of namespaces each ---
# (a zygote that served a run keeps warm_spares of them: children of its
# own named rms-spare, until each is handed one run)
spares_of_zygotes() {
    local z c n=0
    for z in $(warm_zygotes); do
        for c in $(cat /proc/$z/task/$z/children 2>/dev/null); do
            [ "$(cat /proc/$c/comm 2>/dev/null)" = rms-spare ] && n=$((n + 1))
        done
    done
    echo $n
}
cat >$T/ns.py <<'PY'
import os
print("R ns", sorted(os.readlink("/proc/self/ns/" + n) for n in ("user", "mnt", "pid", "net", "ipc", "uts")))
print("R tmp", sorted(os.listdir("/tmp")), os.listdir("/tmp/home"), os.getpid(), os.getppid())
st = os.statvfs("/tmp")
print("R tmpsize", st.f_blocks * st.f_frsize, st.f_files)
PY
has_spares() { [ "$(spares_of_zygotes)" -ge 2 ]; }
run_json $T/ns0.json $T/ns.py
wait_until has_spares
ok $? "a zygote that served a run keeps its spares ($(spares_of_zygotes) made ahead)"
# The pool counts them for /healthz and /metrics, as it looks once a second.
stats_spares_match() { [ "$(warm_stats | sed -n 's/^spares //p')" = "$(spares_of_zygotes)" ]; }
wait_until stats_spares_match
ok $? "the pool's counters say the spares it holds ($(warm_stats | sed -n 's/^spares //p') of $(spares_of_zygotes))"
# Each spare makes its run's script process ahead: its one child, pid 2 of
# its namespaces, named as the spare, holding nothing but its socket.
aheads() {
    local z c k n=0
    for z in $(warm_zygotes); do
        for c in $(cat /proc/$z/task/$z/children 2>/dev/null); do
            [ "$(cat /proc/$c/comm 2>/dev/null)" = rms-spare ] || continue
            k=$(cat /proc/$c/task/$c/children 2>/dev/null)
            [ "$(echo $k | wc -w)" = 1 ] || continue
            k=${k%% *}
            [ "$(cat /proc/$k/comm 2>/dev/null)" = rms-spare ] &&
                [ "$(awk '/^NSpid/ {print $NF}' /proc/$k/status 2>/dev/null)" = 2 ] &&
                [ "$(ls /proc/$k/fd 2>/dev/null | wc -l)" = 1 ] && echo $k
        done
    done
}
aheads_all() { [ "$(aheads | wc -l)" = "$(spares_of_zygotes)" ]; }
wait_until aheads_all
ok $? "each spare made its run's script process ahead: one child, pid 2 of its namespaces, holding only its socket ($(aheads | wc -l) of $(spares_of_zygotes))"
# The three are alive at once (each holds its namespaces a while after it
# printed them): a namespace's number is the kernel's to give again once it
# is freed, so only runs alive together tell shared numbers from reused ones
# (three slots: the default is one a CPU).
sed 's/^st = os.statvfs/__import__("time").sleep(5)\n&/' $T/ns.py >$T/ns-hold.py
# While they sleep, each script's process (made ahead with its spare) is
# seen from here in its init's memory and pids cgroups, not left in the
# zygote's (where runs have cgroups: as root).
cg_of() { grep -E '^[0-9]+:(memory|pids):' /proc/$1/cgroup 2>/dev/null | sort | tr '\n' ' '; }
in_run_cgroups() {
    local z c k
    for z in $(warm_zygotes); do
        for c in $(cat /proc/$z/task/$z/children 2>/dev/null); do
            [ "$(cat /proc/$c/comm 2>/dev/null)" = rms-spare ] && continue
            for k in $(cat /proc/$c/task/$c/children 2>/dev/null); do
                [ -n "$(cg_of $k)" ] && [ "$(cg_of $k)" = "$(cg_of $c)" ] &&
                    { [ ${#RUNAS[@]} != 0 ] || [ "$(cg_of $c)" != "$(cg_of $z)" ]; } && echo $k
            done
        done
    done
}
held=()
for i in 1 2 3; do
    run_json $T/ns$i.json $T/ns-hold.py --set max_concurrent_runs=4 &
    held+=($!)
    sleep 0.3
done
# (looked at until all three are seen or their runs are over, however slow
# their starts: a sanitizer build's; each script process counted once it is
# seen there, since one look at a loaded machine may take longer than the
# runs hold, and the kernel lists a process under its parent only once the
# fork that made it has returned)
seen=0 pids=""
while [ "$seen" -lt 3 ] && kill -0 "${held[@]}" 2>/dev/null; do
    pids=$(printf '%s\n' $pids $(in_run_cgroups) | sort -u)
    seen=$(printf '%s\n' $pids | grep -c .)
    [ "$seen" -ge 3 ] || sleep 0.1
done
wait "${held[@]}"
is "$seen" 3 "the three runs' script processes are each in its init's cgroups$([ ${#RUNAS[@]} = 0 ] && echo ", not the zygote's")"
is "$(jget $T/ns1.json 'r["start"]') $(jget $T/ns2.json 'r["start"]') $(jget $T/ns3.json 'r["start"]')" "warm warm warm" \
    "three runs one after another, alive together, from spares: warm"
nsl() { jget $1 'r["logs"]' | sed -n 's/^R ns //p'; }
[ "$(nsl $T/ns1.json)" != "$(nsl $T/ns2.json)" ] && [ "$(nsl $T/ns2.json)" != "$(nsl $T/ns3.json)" ] &&
    [ "$(nsl $T/ns1.json)" != "$(nsl $T/ns3.json)" ]
ok $? "each has namespaces of its own (user, mount, pid, network, ipc, uts), none another's"
shared=$(python3 -c 'import ast, sys; a, b, c = (set(ast.literal_eval(l)) for l in sys.argv[1:]); print(len(a & b) + len(b & c) + len(a & c))' \
    "$(nsl $T/ns1.json)" "$(nsl $T/ns2.json)" "$(nsl $T/ns3.json)")
is "$shared" 0 "not one namespace is shared between two of them"
like "$(jget $T/ns2.json 'r["logs"]')" "R tmp ['home'] [] 2 1" "a spare's run: its /tmp and HOME empty, itself pid 2 under its init"
# A spare whose script's process is gone forks one at its run, as before.
wait_until aheads_all
for k in $(aheads); do kill -KILL $k; done
run_json $T/ns-noahead.json $T/ns.py
is "$(jget $T/ns-noahead.json '[r["status"], r["start"]]')" '["ok", "warm"]' \
    "the script's processes made ahead killed: the next run is still warm and ok (its script forked at the handover)"
run_json $T/tmpsz-cold.json $T/ns.py --set tmp_bytes=3M --set tmp_files=500 --set warm=off
run_json $T/tmpsz-warm.json $T/ns.py --set tmp_bytes=3M --set tmp_files=500
is "$(start_of $T/tmpsz-warm.json)" warm "a run with a /tmp of its own size starts warm from a spare"
is "$(jget $T/tmpsz-warm.json 'r["logs"]' | grep '^R tmpsize')" "$(jget $T/tmpsz-cold.json 'r["logs"]' | grep '^R tmpsize')" \
    "and its /tmp is bounded as the cold run's ($(jget $T/tmpsz-cold.json 'r["logs"]' | grep '^R tmpsize'))"

# --- what a run changes, the next one does not see ---
cat >$T/dirty.py <<'PY'
import builtins, json, sys, threading, time, os
json.dumps = lambda *a, **k: "patched"
builtins.LEFT_BEHIND = 1
sys.modules["left_behind"] = type(sys)("left_behind")
sys.path.insert(0, "/nowhere")
os.environ["LEFT_BEHIND"] = "1"
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
open("/tmp/left", "w").write("x")
print("dirty done")
PY
cat >$T/clean.py <<'PY'
import builtins, json, sys, threading, os
print("R dumps", json.dumps([1]))
print("R builtin", hasattr(builtins, "LEFT_BEHIND"))
print("R module", "left_behind" in sys.modules)
print("R path", "/nowhere" in sys.path)
print("R environ", "LEFT_BEHIND" in os.environ)
print("R threads", threading.active_count())
print("R tmp", os.path.exists("/tmp/left"))
PY
run_json $T/dirty.json $T/dirty.py
run_json $T/clean.json $T/clean.py
is "$(start_of $T/dirty.json) $(start_of $T/clean.json)" "warm warm" "the dirty run and the next one started warm"
L=$(jget $T/clean.json 'r["logs"]')
like "$L" "R dumps [1]" "a module the last run monkey-patched is whole"
like "$L" "R builtin False" "a global the last run set is gone"
like "$L" "R module False" "what the last run put in sys.modules is gone"
like "$L" "R path False" "the last run's sys.path change is gone"
like "$L" "R environ False" "the last run's environment change is gone"
like "$L" "R threads 1" "the thread the last run left is gone"
like "$L" "R tmp False" "the last run's /tmp is gone"

# --- a warm run's binds are its own: no mount crosses them ---
# The run (the CLI, which hands the binds to the zygote) in a mount
# namespace of the test's own whose mounts are all shared, as a systemd
# host's are: a tmpfs the test mounts in the session's workspace while the
# run runs must not appear in the run's /work, and the run's own mounts
# (its mounts/) must not appear outside. Only the test's own namespace is
# touched: it ends with the test's shell.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
    S=$T/prop-session
    mkdir -p $S/workspace/sub
    [ ${#RUNAS[@]} = 0 ] || chown -R 65534:65534 $S
    cat >$T/prop.py <<'PY'
import os, time
open("/work/ready", "w").close()
for _ in range(400):
    if os.path.exists("/work/go"):
        break
    time.sleep(0.05)
tags = {l.split()[4]: " ".join(l.split()[6:l.split().index("-")]) for l in open("/proc/self/mountinfo")}
print("R sub mounted", os.path.ismount("/work/sub"))
print("R tags", sorted((m, t) for m, t in tags.items() if m in ("/work", "/work/mounts", "/job") and ("shared" in t or "master" in t)))
PY
    # A session's runs have a zygote of their own (with /job): the pool
    # starts the base environment's at its start.
    ses_prop_warm() { run_json $T/prop-w.json $T/warming.py --session $S; [ "$(start_of $T/prop-w.json)" = warm ]; }
    wait_until ses_prop_warm
    cat >$T/prop.sh <<SH
mount --make-rshared /
"\$@" "$RUNMYSCRIPT" run $T/prop.py --session $S --json >$T/prop.json 2>$T/prop.err &
run=\$!
for i in \$(seq 400); do [ -e $S/workspace/ready ] && break; sleep 0.05; done
mount -t tmpfs -o size=64k rms-prop $S/workspace/sub && touch $S/workspace/go
wait \$run
grep -c " $S/" /proc/self/mountinfo >$T/prop.mounts
umount $S/workspace/sub
SH
    unshare --mount --propagation shared bash $T/prop.sh "${RUNAS[@]}"
    is "$(start_of $T/prop.json)" warm "the shared-mounts run started warm"
    L=$(jget $T/prop.json 'r["logs"]')
    like "$L" "R sub mounted False" "a mount made outside in the workspace during the run does not reach the run's /work"
    like "$L" "R tags []" "/work, /work/mounts and /job are private mounts in the run (no peer, no master)"
    is "$(cat $T/prop.mounts)" 1 "the run's mounts/ did not appear outside (only the test's tmpfs is under the session)"
else
    skip "the shared-mounts case needs root and unshare"
fi

# --- the same result warm and cold ---
mkdir -p $T/eq
cat >$T/eq/ident.py <<'PY'
import os, sys, signal
print("argv", sys.argv, "file", __file__, "name", __name__)
print("path0", sys.path[0], "cwd", os.getcwd(), "exe", sys.executable)
print("env", sorted(os.environ.items()))
print("sig", [str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGPIPE, signal.SIGTERM, signal.SIGXFSZ, signal.SIGCHLD)])
print("mask", sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
print("stdin", sys.stdin.read())
print("flags", sys.flags, sys.stdout.line_buffering, sys.stdout.encoding)
print("ids", os.getpid(), os.getppid(), os.getuid(), os.getgid(), os.getgroups())
print("main", sorted(k for k in vars(sys.modules["__main__"]) if k.startswith("__")))
print("fds", sorted(os.listdir("/proc/self/fd")))
print("comm", open("/proc/self/comm").read().strip(), open("/proc/1/comm").read().strip())
PY
# (writes to the two streams a reader's wake-up apart: closer ones may come
# grouped by stream, warm or cold: doc/architecture.md, "The result")
printf 'import sys, time\nprint("out"); time.sleep(0.2); print("err", file=sys.stderr); time.sleep(0.2); print("out2")\nsys.exit(3)\n' >$T/eq/exit3.py
printf 'def f():\n    raise ValueError("boom")\nf()\n' >$T/eq/raise.py
printf 'import os\nprint("x", flush=True)\nos._exit(5)\n' >$T/eq/osexit.py
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n' >$T/eq/sigterm.py
printf 'raise KeyboardInterrupt\n' >$T/eq/kbint.py
printf 'import atexit\natexit.register(print, "at exit")\nprint("body")\n' >$T/eq/atexit.py
printf 'import sys, time\nsys.stdout.write("no newline")\ntime.sleep(0.2)\nsys.stderr.write("e1\\n")\nprint(1/0)\n' >$T/eq/order.py
# The interpreter's end as a script sees it (a warm run skips only the
# teardown of what the zygote imported): its threads, atexit, __main__'s
# names, the script's __del__ and the files it left open, sys.exit's
# message, a stdout that cannot be flushed, an exit code past a C long.
cat >$T/eq/ending.py <<'PY'
import atexit, inspect, os, sys, threading, time
class D:
    def __del__(self): print("del ran")
d = D()
f = open(os.environ["SCRIPT_OUTPUT"] + "/left-open.txt", "w"); f.write("written, never closed")
atexit.register(lambda: print("atexit sees __file__:", "__file__" in globals()))
threading.Thread(target=lambda: (time.sleep(0.2), print("thread done"))).start()
print("main", __file__, type(__loader__).__name__, __cached__, len(inspect.stack()))
if sys.stdin.read().startswith("hello"):
    sys.exit("bye")
PY
sed 's/sys.exit("bye")/pass/' $T/eq/ending.py >$T/eq/ending-plain.py
printf 'def f(:\n    pass\n' >$T/eq/syntax.py
printf 'import sys\nsys.stdout = open("/dev/full", "w")\nprint("lost")\n' >$T/eq/full.py
printf 'def g():\n    raise KeyError("k")\ntry:\n    g()\nexcept KeyError as e:\n    raise ValueError("v") from e\n' >$T/eq/chained.py
printf 'import sys\nsys.exit(2 ** 70)\n' >$T/eq/bigexit.py
# The last expression shown (runner.py), cold and warm alike: a value, a
# traceback in it, sys.exit and KeyboardInterrupt after it, what the
# script sees of itself, a statement after ';', a value past value_bytes.
printf 'x = 40\nx + 2\n' >$T/eq/value.py
printf 'import sys\nprint(sys.argv, __file__, sys.path[0], __name__)\n{"a": [1, 2], "b": None}\n' >$T/eq/value-ident.py
printf 'def f():\n    raise ValueError("boom")\nf()\n' >$T/eq/value-raise.py
printf 'import inspect, sys\nprint(len(inspect.stack()), sorted(k for k in vars() if k.startswith("__")))\nsys.flags\n' >$T/eq/value-frames.py
printf 'import sys\nsys.exit("bye")\n"never"\n' >$T/eq/value-exit.py
printf 'raise KeyboardInterrupt\n1\n' >$T/eq/value-kbint.py
printf 'print(1); 1/0\n' >$T/eq/value-semicolon.py
printf '"x" * 70000\n' >$T/eq/value-long.py
printf 'import atexit\natexit.register(print, "at exit")\n"value"\n' >$T/eq/value-atexit.py
# The end of a run through the runner, cold as warm: the interpreter's end
# as the script sees it, a stdout that cannot be flushed said once, and
# (cold, the interpreter's own exit after it) C's stdio flushed.
{ cat $T/eq/ending-plain.py; printf '"end"\n'; } >$T/eq/value-ending.py
printf 'import sys\nsys.stdout = open("/dev/full", "w")\nprint("lost")\n1\n' >$T/eq/value-full.py
printf 'import ctypes\nctypes.CDLL(None).printf(b"from C, no newline")\n1\n' >$T/eq/value-cstdio.py
cp "$top_srcdir"/tests/fixtures/scripts/seed-stdlib.py $T/eq/seed-stdlib.py 2>/dev/null
printf 'hello input\n' >$T/input.txt
for f in $T/eq/*.py; do
    n=$(basename $f .py)
    run_json $T/eq/$n.cold.json $f --input $T/input.txt --set warm=off
    run_json $T/eq/$n.warm.json $f --input $T/input.txt
    is "$(start_of $T/eq/$n.cold.json) $(start_of $T/eq/$n.warm.json)" "cold warm" "$n: one run cold, one warm"
    same='[r["status"], r["exit_code"], r["signal"], r["limit"], r["logs"], sorted((a["path"], a["size"]) for a in r["artifacts"]), r["value"], r["value_truncated"]]'
    is "$(jget $T/eq/$n.warm.json "$same")" "$(jget $T/eq/$n.cold.json "$same")" "$n: the same status, exit, signal, log, artifacts and value warm and cold"
done
is "$(jget $T/eq/value.cold.json 'r["value"]')" 42 "a script's last expression is its value"
is "$(jget $T/eq/value-ident.cold.json '[r["value"], r["logs"]]')" \
    "[\"{'a': [1, 2], 'b': None}\", \"['/job/script.py'] /job/script.py /job __main__\\n\"]" \
    "a script shown runs as python3 SCRIPT: argv, __file__, sys.path[0], __main__"
is "$(jget $T/eq/value-frames.cold.json 'r["logs"].split()[0]')" 4 "it sees three frames of the runner's below its own (inspect.stack())"
like "$(jget $T/eq/value-raise.cold.json 'r["logs"]')" 'File "/job/script.py", line 3, in <module>' "its traceback is the script's"
is "$(jget $T/eq/value-raise.cold.json 'r["logs"].count("File ")')" 2 "without the runner's frames"
is "$(jget $T/eq/value-kbint.cold.json '[r["status"], r["signal"]]')" '["error", "SIGINT"]' "KeyboardInterrupt still ends it by SIGINT"
is "$(jget $T/eq/value-exit.cold.json '[r["exit_code"], r["logs"], r["value"]]')" '[1, "bye\n", null]' "sys.exit: its message and status, no value"
is "$(jget $T/eq/value-long.cold.json '[r["value_truncated"], len(r["value"]) < 66000]')" "[true, true]" "a value past value_bytes is cut"
is "$(jget $T/eq/value-atexit.cold.json '[r["value"], r["logs"]]')" '["'"'"'value'"'"'", "at exit\n"]' "atexit runs after the value"
is "$(jget $T/eq/value-ending.cold.json '[r["exit_code"], r["value"], [l for l in r["logs"].splitlines() if not l.startswith("main ")], sorted((a["path"], a["size"]) for a in r["artifacts"])]')" \
    "[0, \"'end'\", [\"thread done\", \"atexit sees __file__: False\", \"del ran\"], [[\"left-open.txt\", 21]]]" \
    "a script shown ends as python3's does: its thread, atexit, its __del__, the file it left open"
is "$(jget $T/eq/value-full.cold.json '[r["exit_code"], r["logs"].count("Exception ignored")]')" "[120, 1]" \
    "a stdout that cannot be flushed: status 120, said once"
like "$(jget $T/eq/value-cstdio.cold.json 'r["logs"]')" "from C, no newline" "what C's stdio holds at the end is written"

# --- the seed example (pillow from the wheelhouse), with its own input ---
S=$top_srcdir/tests/fixtures
if [ -f "${WHEELHOUSE:-/nonexistent}/.no-pillow" ] || ! ls "${WHEELHOUSE:-/nonexistent}"/[Pp]illow-*.whl >/dev/null 2>&1; then
    skip "no pillow wheel (python3-pil is not installed): the seed example warm"
else
    seed=("$S/seeds/run_my_script_test.py" --input "$S/seeds/run_my_script_test_input.json")
    run_json $T/seed0.json "${seed[@]}"
    seed_warm() { run_json $T/seed-w.json "${seed[@]}"; [ "$(start_of $T/seed-w.json)" = warm ]; }
    wait_until seed_warm
    run_json $T/seed.warm.json "${seed[@]}"
    run_json $T/seed.cold.json "${seed[@]}" --set warm=off
    is "$(start_of $T/seed.cold.json) $(start_of $T/seed.warm.json)" "cold warm" "the seed example: one run cold, one warm"
    seedsame='[r["status"], r["exit_code"], r["logs"], sorted((a["path"], a["size"]) for a in r["artifacts"])]'
    is "$(jget $T/seed.warm.json "$seedsame")" "$(jget $T/seed.cold.json "$seedsame")" \
        "the seed example: the same status, log and artifacts warm and cold ($(jget $T/seed.warm.json 'r["logs"]' | head -1))"
fi

# --- a warm run sees the store entries its environment links, no other ---
# (the zygote's root binds each at its own path: tests/sandbox/store-view.sh
# asks the same of cold runs in the four modes)
if ls "${WHEELHOUSE:-/nonexistent}"/rms_alpha-*.whl "${WHEELHOUSE:-/nonexistent}"/rms_beta-*.whl >/dev/null 2>&1; then
    printf 'import rms_beta\nprint("beta")\n' >$T/beta.py
    run_json $T/beta.json $T/beta.py --no-auto-deps --with rms-beta
    cat >$T/sview.py <<'PY'
import os, rms_alpha
entry = os.path.dirname(os.path.dirname(os.path.realpath(os.path.dirname(rms_alpha.__file__))))
print("R listing", sorted(os.listdir(os.path.dirname(entry))))
PY
    sv_warm() { run_json $T/sv.json $T/sview.py --no-auto-deps --with rms-alpha; [ "$(start_of $T/sv.json)" = warm ]; }
    wait_until sv_warm
    ok $? "a run of an environment of the store starts warm"
    alpha=$(basename "$(dirname "$(dirname "$(ls -d "$RUNMYSCRIPT_STATE_DIR"/store/py*/*/site/rms_alpha | head -1)")")")
    is "$(jget $T/sv.json 'r["logs"]' | sed -n 's/^R listing //p')" "['$alpha']" \
        "warm: the store's directory shows only the entry the environment links, not rms-beta's"
else
    skip "the wheelhouse lacks rms-alpha or rms-beta: the store seen warm"
fi

# --- a session run past workspace_bytes loses all it wrote, its first file too ---
# (the run's start is marked before the script can write: a warm script
# writes within microseconds of its start)
SES=$T/session
mkdir -p $SES
[ ${#RUNAS[@]} = 0 ] || chown 65534:65534 $SES
printf 'open("first.txt", "w").write("x")\nopen("big.bin", "wb").write(b"x" * (8 << 20))\n' >$T/cross.py
printf 'print("in the session")\n' >$T/ses.py
ses_warm() { run_json $T/ses.json $T/ses.py --session $SES; [ "$(start_of $T/ses.json)" = warm ]; }
wait_until ses_warm
ok $? "a session's runs start warm"
bad=0
for i in 1 2 3 4 5; do
    run_json $T/cross$i.json $T/cross.py --session $SES --set workspace_bytes=4M
    [ "$(jget $T/cross$i.json '[r["start"], r["status"], r["limit"]]')" = '["warm", "workspace_limit", "workspace_bytes"]' ] &&
        [ ! -e $SES/workspace/first.txt ] && [ ! -e $SES/workspace/big.bin ] || bad=$((bad + 1))
done
is "$bad" 0 "five warm session runs past workspace_bytes: each loses its first file as well as the big one"

# --- the limits hold warm and say the same ---
printf 'import time\ntime.sleep(30)\n' >$T/eq/sleep.py
printf 'b = bytearray(400 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint("survived")\n' >$T/eq/mem.py
printf 'import os, time\nn = 0\ntry:\n    for i in range(200):\n        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError as e:\n    print("fork refused", e.errno)\nprint("forked", n >= 200)\n' >$T/eq/procs.py
printf 'import os\nwith open(os.environ["SCRIPT_OUTPUT"] + "/big", "wb") as f:\n    for i in range(64): f.write(b"x" * 65536)\n' >$T/eq/out.py
while read -r n args; do
    run_json $T/eq/$n.cold.json $T/eq/$n.py $args --set warm=off
    run_json $T/eq/$n.warm.json $T/eq/$n.py $args
    is "$(start_of $T/eq/$n.warm.json)" warm "$n: started warm"
    lim='[r["status"], r["limit"]]'
    is "$(jget $T/eq/$n.warm.json "$lim")" "$(jget $T/eq/$n.cold.json "$lim")" "$n: the same status and limit warm and cold ($(jget $T/eq/$n.warm.json "$lim"))"
done <<EOF
sleep --timeout 1
mem --set memory=128M
procs --set processes=16
out --set output_bytes=1M
EOF

# --- faults: every call still gets its result ---
# A zygote killed while runs come.
printf 'print("alive")\n' >$T/alive.py
for i in 1 2 3 4 5 6; do run_json $T/f$i.json $T/alive.py; done &
loop=$!
sleep 0.3
zs=$(warm_zygotes)
[ -n "$zs" ]
ok $? "the test's zygotes are found (their pool is the test's)"
for z in $zs; do kill -KILL $z 2>/dev/null; done
wait $loop
bad=0
for i in 1 2 3 4 5 6; do [ "$(jget $T/f$i.json 'r["status"]' 2>/dev/null)" = ok ] || bad=$((bad + 1)); done
is "$bad" 0 "zygotes killed while runs came: every run still ok"
run_json $T/after-kill.json $T/alive.py
is "$(jget $T/after-kill.json 'r["status"]')" ok "the first run after the kill is ok"
wait_until warm_has 1
run_json $T/rewarm.json $T/alive.py
is "$(start_of $T/rewarm.json)" warm "the pool has a new zygote and runs start warm again"
# A zygote killed under a warm run in flight: its outcome is unknown, and
# the result says so (sandbox_error, the service's), not the script's
# error with a SIGKILL it never got.
printf 'import time\nprint("long", flush=True)\ntime.sleep(8)\nprint("never")\n' >$T/under.py
run_json $T/under.json $T/under.py &
under=$!
sleep 2
for z in $(warm_zygotes); do kill -KILL $z 2>/dev/null; done
wait $under
is "$(jget $T/under.json 'r["start"], r["status"], "zygote died" in (r["error"] or "")')" '["warm", "sandbox_error", true]' \
    "a zygote killed under its warm run: sandbox_error saying so, not the script's error"
run_json $T/after-under.json $T/alive.py
wait_until warm_has 1
run_json $T/rewarm2.json $T/alive.py
is "$(start_of $T/rewarm2.json)" warm "and after it, runs start warm again"

# The worker dies mid-run: its warm run goes with it, as a cold run goes
# with its init's parent-death signal (a warm run is the zygote's child).
TOK=$(new_token)
{ mark_py "$TOK"; printf 'import time\ntime.sleep(120)\n'; } >$T/orphan.py
has_process() { ! no_process_named "$1"; }
"${RUNAS[@]}" "$RUNMYSCRIPT" run $T/orphan.py --json >/dev/null 2>&1 &
cli=$!
wait_until has_process "$TOK"
script_pid=$(for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = "$TOK" ] && echo ${p#/proc/}; done | head -1)
parent=$(awk '{print $4}' /proc/$script_pid/stat 2>/dev/null)
like "$(tr '\0' ' ' </proc/$parent/cmdline 2>/dev/null)" "--sandbox-zygote" "the orphan test's run is warm (its init is a zygote's fork)"
kill -KILL $cli
wait $cli 2>/dev/null
wait_until no_process_named "$TOK"
ok $? "the worker killed: no process of its warm run is left"

# The pool killed: calls are still answered, and the server starts another,
# which starts the zygotes of the environments most used before it
# (STATE/.warm/learned) without waiting for a run of them.
top_env() { # the environment (not the base one) whose runs came most often
    awk '$1 == "env" { e = $2 } $1 == "uses" && e !~ /\/base-/ { n = $2 + $3; if (n > best) { best = n; top = e } } END { print top }' \
        "$RUNMYSCRIPT_STATE_DIR/.warm/learned" 2>/dev/null
}
top=$(top_env)
starts_of() { grep -c "a zygote for $1 is starting" $T/warm-serve.log; }
top_starts=$(starts_of "$top")
pool=$(warm_pool_pid)
[ -n "$pool" ]
ok $? "the test's pool is found ($pool)"
kill -KILL $pool
run_json $T/nopool1.json $T/alive.py
is "$(jget $T/nopool1.json 'r["status"]')" ok "the pool killed: the next run is ok"
newpool() { p=$(warm_pool_pid); [ -n "$p" ] && [ "$p" != "$pool" ]; }
wait_until newpool
ok $? "the server started another pool"
if [ -n "$top" ]; then
    top_again() { [ "$(starts_of "$top")" -gt "$top_starts" ]; }
    wait_until top_again
    ok $? "the new pool starts a zygote for the environment most used before it, before any run of it ($(basename "$top"))"
else
    skip "no environment but the base one was used: the most used after a restart"
fi
warm_again() { run_json $T/again.json $T/alive.py; [ "$(jget $T/again.json 'r["start"]')" = warm ]; }
wait_until warm_again
ok $? "and runs start warm again"

# A zygote that hangs: the run goes cold.
zs=$(warm_zygotes)
[ -n "$zs" ]
ok $? "the new pool's zygotes are found"
for z in $zs; do kill -STOP $z; done
run_json $T/hung.json $T/alive.py --set warm_wait=2s
is "$(jget $T/hung.json '[r["status"], r["start"], r["logs"]]')" '["ok", "cold", "alive\n"]' "a hung zygote: the run starts cold and is ok"
for z in $zs; do kill -CONT $z; done

# A full memory budget: no zygote, runs start cold.
warm_stop
rm -rf "$RUNMYSCRIPT_STATE_DIR/.warm"
"${RUNAS[@]}" "$RUNMYSCRIPT" serve --listen "unix:$T/warm-sock/fcgi.sock" --workers 1 --set warm_memory=1 --set log_level=info >$T/warm-serve.log 2>&1 &
WARM_SERVE_PID=$!
wait_until test -S "$RUNMYSCRIPT_STATE_DIR/.warm/pool.sock"
run_json $T/budget1.json $T/alive.py
wait_until grep -q "past warm_memory" $T/warm-serve.log
run_json $T/budget2.json $T/alive.py
is "$(jget $T/budget2.json '[r["status"], r["start"]]')" '["ok", "cold"]' "warm_memory full: runs start cold and are ok"

# The server restarted: the next calls get their results, and warm again.
warm_stop
run_json $T/nopool.json $T/alive.py
is "$(jget $T/nopool.json '[r["status"], r["start"]]')" '["ok", "cold"]' "no server: the CLI runs cold"
warm_serve || diag "the pool did not come back"
run_json $T/restarted.json $T/alive.py
is "$(jget $T/restarted.json '[r["status"], r["start"]]')" '["ok", "warm"]' "the server restarted: runs start warm again"

# Replaced after warm_runs runs, gone after warm_idle: and every run ok.
warm_stop
rm -rf "$RUNMYSCRIPT_STATE_DIR/.warm"
warm_serve --set warm_runs=2 --set warm_idle=2s || diag "the pool did not start"
bad=0
for i in 1 2 3 4 5 6; do
    run_json $T/r$i.json $T/alive.py
    [ "$(jget $T/r$i.json 'r["status"]')" = ok ] || bad=$((bad + 1))
done
is "$bad" 0 "warm_runs = 2: six runs, all ok"
started=$(warm_stats | sed -n 's/^started //p')
[ "${started:-0}" -ge 3 ]
ok $? "warm_runs = 2: the zygote was replaced ($started started for six runs)"
wait_until sh -c "grep -q '^envs 0' '$RUNMYSCRIPT_STATE_DIR/.warm/stats'"
ok $? "warm_idle = 2s: an idle zygote goes"

# Off: warm = off on the server has no pool at all.
warm_stop
rm -rf "$RUNMYSCRIPT_STATE_DIR/.warm"
: >$T/warm-serve.log # (the last server's "serving on" is not this one's: see tests/e2e/lib.sh)
"${RUNAS[@]}" "$RUNMYSCRIPT" serve --listen "unix:$T/warm-sock/fcgi.sock" --workers 1 --set warm=off --set log_level=info >$T/warm-serve.log 2>&1 &
WARM_SERVE_PID=$!
wait_until grep -q "serving on" $T/warm-serve.log
test ! -e "$RUNMYSCRIPT_STATE_DIR/.warm/pool.sock"
ok $? "warm = off: no pool listens"
warm_stop
# --- a figure left open, a PIL image as the value: PNG artifacts, warm and cold ---
# (a server of its own: two environments more would take the others'
# zygotes, within warm_envs)
if ls "${WHEELHOUSE:-/nonexistent}"/matplotlib-*.whl >/dev/null 2>&1; then
    warm_stop
    warm_serve || diag "the pool did not start"
    printf 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\nprint("drawn")\n' >$T/fig.py
    printf 'from PIL import Image\nimport matplotlib\nImage.new("RGB", (20, 10), "red")\n' >$T/pil.py
    for n in fig pil; do
        run_json $T/$n.cold.json $T/$n.py --set warm=off
        is_warm() { run_json $T/$n.warm.json $T/$n.py; [ "$(start_of $T/$n.warm.json)" = warm ]; }
        wait_until is_warm
        is "$(jget $T/$n.warm.json '[r["start"]] + [(a["path"], a["size"]) for a in r["artifacts"]]')" \
            "$(jget $T/$n.cold.json '["warm"] + [(a["path"], a["size"]) for a in r["artifacts"]]')" "$n: the same PNG warm and cold"
    done
    is "$(jget $T/fig.cold.json '[(a["path"], a["mime"]) for a in r["artifacts"]]')" '[["figure-1.png", "image/png"]]' \
        "a figure open at the end of a run is output/figure-1.png"
    is "$(jget $T/pil.cold.json '[(a["path"], a["summary"]) for a in r["artifacts"]] + [r["value"]]')" \
        '[["value.png", "PNG image 20x10"], null]' "a PIL image as the value is output/value.png, and no text"
    warm_stop
else
    skip "no matplotlib wheel: the figures and images of a run"
fi

done_testing
