#!/bin/bash
# The environment cache under concurrency and failure: two first runs of
# one set build once; a build killed halfway leaves nothing a later run
# uses; install_time stops a hung installer; least-recently-used eviction
# past env_cache_size never takes an environment a run is using.
#
# The installer is held in the middle of a build by a PEP 503 index whose
# wheel downloads wait at a gate file (tests/lib/gate_index.py): the test
# knows where the build is without guessing at timings.
# Runs in the jail where the host has it, in the rlimits fallback elsewhere.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
ST=$RUNMYSCRIPT_STATE_DIR
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"

. "$top_srcdir/tests/lib/gate.sh"
gate_start
: >$T/gate.log
whl_requested() { grep -q "$1.*\.whl" $T/gate.log 2>/dev/null; }
printf 'import rms_alpha\nprint(rms_alpha.greet("c"))\n' >$T/alpha.py
printf 'import rms_beta\nprint(rms_beta.combine("c"))\n' >$T/beta.py

# --- two concurrent first runs build once ---
"$RUNMYSCRIPT" run $T/alpha.py "${INDEX[@]}" --set log_level=info --json >$T/a.json 2>$T/a.err &
A=$!
wait_until whl_requested rms_alpha
ok $? "run A is installing (its wheel download waits at the gate)"
"$RUNMYSCRIPT" run $T/alpha.py "${INDEX[@]}" --set log_level=info --json >$T/b.json 2>$T/b.err &
B=$!
wait_until grep -q "another run is building this environment" $T/b.err
ok $? "run B waits for A's build instead of building too"
touch $GATE
wait $A
is "$?" 0 "A exits 0"
wait $B
is "$?" 0 "B exits 0"
is "$(jget $T/a.json 'r["env_cache"]') $(jget $T/b.json 'r["env_cache"]')" "built hit" "A built it, B used it"
is "$(jget $T/a.json 'r["env"]')" "$(jget $T/b.json 'r["env"]')" "one environment"
is "$(jget $T/b.json 'r["install_log"]')" null "B never ran the installer"
is "$(grep -c 'rms_alpha.*\.whl' $T/gate.log)" 1 "the wheel was downloaded once"
is "$(env_dirs $ST | wc -w)" 1 "one environment on disk"
like "$(jget $T/b.json 'r["logs"]')" "alpha says hello to c" "B's script ran with it"

# --- a build killed halfway leaves nothing a later run uses ---
rm -f $GATE
"$RUNMYSCRIPT" run $T/beta.py "${INDEX[@]}" --json >$T/k.json 2>$T/k.err &
K=$!
wait_until whl_requested rms_beta
ok $? "run K is in the middle of its build"
tmpdir=$(ls -d $ST/envs/.tmp-* 2>/dev/null | head -1)
[ -n "$tmpdir" ] && [ -f "$tmpdir/pyvenv.cfg" ]
ok $? "its temporary environment exists: ${tmpdir##*/}"
kill -KILL $K
wait $K 2>/dev/null
# Its installer runs on in its own process group: end it too, by pid.
for p in /proc/[0-9]*; do
    if tr '\0' ' ' <$p/cmdline 2>/dev/null | grep -q -- "${tmpdir##*/}"; then
        kill -KILL "${p#/proc/}" 2>/dev/null
    fi
done
key=${tmpdir##*/.tmp-}
key=${key%-*}
[ ! -e "$ST/envs/$key" ]
ok $? "nothing was published under the key of the killed build"
touch $GATE
run_json $T/k2.json $T/beta.py "${INDEX[@]}"
is "$RC" 0 "a later run of the same set succeeds"
is "$(jget $T/k2.json 'r["env_cache"]')" built "it built the environment anew (the half-built one was not used)"
is "$(jget $T/k2.json 'r["env"]')" "$key" "under the same key"
[ ! -e "$tmpdir" ]
ok $? "the killed build's leftovers were removed"
is "$(ls -a $ST/envs | grep -c '^\.tmp-')" 0 "no temporary build is left"

# --- install_time stops an installer that hangs ---
rm -f $GATE
printf 'import rms_gamma\n' >$T/gamma.py
run_json $T/t.json $T/gamma.py --with rms-gamma-dist "${INDEX[@]}" --set install_time=2
is "$RC" 120 "a hung installer: exit 120"
is "$(jget $T/t.json 'r["status"]')" install_failed "status install_failed"
is "$(jget $T/t.json 'r["limit"]')" install_time "limit install_time"
like "$(jget $T/t.json 'r["error"]')" "longer than install_time" "error says so"
is "$(ls -a $ST/envs | grep -c '^\.tmp-')" 0 "its temporary environment is removed"
touch $GATE

# --- least-recently-used eviction, never an environment in use ---
export RUNMYSCRIPT_STATE_DIR=$T/lru
LRU=$T/lru
CAP=(--set env_cache_size=1 --no-auto-deps)
printf 'print("ok")\n' >$T/ok.py
run_json $T/e1.json $T/ok.py "${CAP[@]}" --with rms-alpha
e1=$(jget $T/e1.json 'r["env"]')
is "$(env_dirs $LRU)" "$e1 " "over the cap, the environment just built stays"
run_json $T/e2.json $T/ok.py "${CAP[@]}" --with rms-gamma-dist
e2=$(jget $T/e2.json 'r["env"]')
is "$(env_dirs $LRU)" "$e2 " "the next build evicts the least recently used one"
[ ! -e "$LRU/envs/.$e1.lock" ]
ok $? "and its lock file"
# A run holds e2 while e3 is built.
# The script says it holds by writing output/holding, and waits for the
# test to create "release" in its workspace (the jail shows it nothing else
# of the host).
cat >$T/hold.py <<'PY'
import os, time
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "holding"), "w").close()
while not os.path.exists("release"):
    time.sleep(0.05)
print("released")
PY
"$RUNMYSCRIPT" run $T/hold.py "${CAP[@]}" --with rms-gamma-dist --json >$T/h.json 2>$T/h.err &
H=$!
holding() { ls $LRU/runs/*/output/holding >/dev/null 2>&1; }
wait_until holding
ok $? "a run is using $e2"
hold_dir=$(dirname "$(dirname "$(ls $LRU/runs/*/output/holding | head -1)")")
run_json $T/e3.json $T/ok.py "${CAP[@]}" --with 'rms-alpha==1.0'
e3=$(jget $T/e3.json 'r["env"]')
is "$(env_dirs $LRU)" "$(printf '%s\n' $e2 $e3 | sort | tr '\n' ' ')" "an environment in use is not evicted"
touch $hold_dir/release
wait $H
is "$?" 0 "the holding run ends well"
like "$(jget $T/h.json 'r["logs"]')" "released" "with its environment intact"
run_json $T/e4.json $T/ok.py "${CAP[@]}" --with rms-beta
e4=$(jget $T/e4.json 'r["env"]')
is "$(env_dirs $LRU)" "$e4 " "once free, it is evicted like the others"
run_json $T/e5.json $T/ok.py --no-auto-deps --with rms-alpha --set env_cache_size=0
run_json $T/e6.json $T/ok.py --no-auto-deps --with rms-gamma-dist --set env_cache_size=0
is "$(env_dirs $LRU | wc -w)" 3 "env_cache_size = 0: no cap"
is "$(jget $T/e6.json 'r["status"]')" ok "and runs go on"

done_testing
