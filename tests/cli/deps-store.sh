#!/bin/bash
# The package store (STATE/store): an environment assembled from it is the
# one pip would install (distributions and versions, modules, console
# scripts, .data/ files, a namespace package in two halves, .pth files,
# the script's results); a kill at each step of a build leaves nothing
# half made and the next run succeeds; a damaged wheel is refused and
# never enters the store; concurrent builds of sets that share wheels
# unpack each once; environments share one copy of a wheel's files
# (inodes); a set resolved before is not resolved again; store_bytes
# evicts environments, then entries no environment links, never one in
# use; a source distribution is built once; package_store = off installs
# with pip as before.
# Runs in the jail where the host has it, in the rlimits fallback elsewhere.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
ST=$RUNMYSCRIPT_STATE_DIR
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"
ls "$WHEELHOUSE"/rms_pth-*.whl >/dev/null 2>&1 || skip_all "the wheelhouse lacks the store's test wheels (make check rebuilds it)"
ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1 || skip_all "no pillow wheel (python3-pil is not installed)"
"$PYTHON3" -c 'import ensurepip' 2>/dev/null || "$PYTHON3" -m pip --version >/dev/null 2>&1 ||
    skip_all "no pip for the comparison venv"

# Only what entries and environments are made of, never a .tmp- or trash.
store_entries() { ls "$1/store/"py*/ 2>/dev/null | grep -E '^[0-9a-f]{64}$' | sort | tr '\n' ' '; }
half_entries() { # entries without their mark: must never be
    local d n=0
    for d in "$1"/store/py*/*; do
        [ -d "$d" ] || continue
        case "${d##*/}" in .*) continue ;; esac
        [ -f "$d/runmyscript-wheel.txt" ] || n=$((n + 1))
    done
    echo $n
}
leftovers() { ls -a "$1/store/"py*/ "$1/envs/" 2>/dev/null | grep -cE '^\.(tmp|trash)-'; }

SET=(--with rms-alpha --with rms-beta --with rms-data --with rms-ns-one --with rms-ns-two --with rms-pth --with pillow)
PIPSET=(rms-alpha rms-beta rms-data rms-ns-one rms-ns-two rms-pth pillow)

# The probe: what an environment holds and does, printed as JSON with no
# path of its own in it.
cat >$T/probe.py <<'PY'
import importlib.metadata as md, json, os, pkgutil, subprocess, sys, sysconfig
site = sysconfig.get_paths()["purelib"]
dists = sorted((md.Distribution.at(d._path).metadata["Name"].lower().replace("_", "-"), d.version)
               for d in md.distributions() if str(d._path).startswith(site))
files = {}
for d in md.distributions():
    if str(d._path).startswith(site):
        n = d.metadata["Name"].lower().replace("_", "-")
        files[n] = sorted(str(f) for f in (d.files or []) if "__pycache__" not in str(f)
                          and not str(f).endswith(("REQUESTED", "direct_url.json")))
mods = sorted(m.name for m in pkgutil.iter_modules([site]))
import rms_beta, rms_ns.one, rms_ns.two, rms_pth_mod, rms_data
from PIL import Image
im = Image.new("RGB", (4, 2), "red").transpose(Image.Transpose.ROTATE_90)
def tool(name):
    r = subprocess.run([name], capture_output=True, text=True)
    return r.returncode, r.stdout.strip()
prefix = sys.prefix
print(json.dumps({
    "dists": dists, "files": files, "modules": mods,
    "beta": rms_beta.combine("probe"), "ns": [rms_ns.one.NAME, rms_ns.two.NAME],
    "pth": [os.environ.get("RMS_PTH_LOADED"), rms_pth_mod.WHERE],
    "tools": [tool("rms-alpha"), tool("rms-data-tool")],
    "data": open(os.path.join(prefix, "share/rms_data/table.txt")).read(),
    "header": os.path.isfile(os.path.join(prefix, "include/site/python%d.%d/rms-data/rms_data.h" % sys.version_info[:2])),
    "pillow": im.size, "version": sys.version_info[:2],
}, sort_keys=True))
PY

# --- an environment from the store is the one pip installs ---
run_json $T/s1.json $T/probe.py --no-auto-deps "${SET[@]}"
is "$RC" 0 "the probe runs in an environment assembled from the store"
is "$(jget $T/s1.json 'r["env_cache"]')" built "a new environment"
[ -n "$(store_entries $ST)" ]
ok $? "its wheels are in the store: $(store_entries $ST | wc -w) entries"
jget $T/s1.json 'r["logs"]' >$T/store.out
"$PYTHON3" -m venv --without-pip $T/venv >/dev/null 2>&1
PIP="$PYTHON3 -m pip"
$PIP --python $T/venv/bin/python3 install -q --no-index --find-links "$WHEELHOUSE" "${PIPSET[@]}" >$T/pip.log 2>&1
ok $? "pip installs the same set into a fresh venv"
(cd $T && PATH=$T/venv/bin:/usr/bin:/bin $T/venv/bin/python3 $T/probe.py) >$T/pip.out 2>$T/pip.err
ok $? "the probe runs in pip's environment"
for k in dists modules files beta ns pth tools data header pillow; do
    a=$("$PYTHON3" -c 'import json,sys; print(json.dumps(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]], sort_keys=True))' $T/store.out $k 2>&1)
    b=$("$PYTHON3" -c 'import json,sys; print(json.dumps(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]], sort_keys=True))' $T/pip.out $k 2>&1)
    is "$a" "$b" "the same $k as with pip"
done
like "$(jget $T/s1.json 'r["logs"]')" '"tools": [[0, "alpha says hello to the command line"], [0, "rms-data-tool says data-1"]]' \
    "the console script and the .data/ script work"
like "$(jget $T/s1.json 'r["logs"]')" '"ns": ["one", "two"]' "both halves of the namespace package import"
like "$(jget $T/s1.json 'r["logs"]')" '"pth": ["yes", "found through the .pth path line"]' "both .pth files took effect"
is "$(jget $T/s1.json 'r["requirements"]')" "$(jget $T/s1.json 'sorted(r["requirements"])')" \
    "requirements: what the environment holds, sorted"
like "$(jget $T/s1.json 'r["install_log"]')" "Successfully installed" "the install log says what it holds"
env1=$ST/envs/$(jget $T/s1.json 'r["env"]')
f=$(ls $env1/lib/python3*/site-packages/rms_alpha/__init__.py)
e=$(ls $ST/store/py*/*/site/rms_alpha/__init__.py)
is "$(stat -c %i "$f")" "$(stat -c %i "$e")" "the environment's file is the store's"
is "$(readlink $env1/lib/python3*/site-packages/rms_alpha)" "$(dirname "$e")" \
    "rms_alpha/ is a symlink to its directory in the store entry (its host path)"
[ -d $env1/lib/python3*/site-packages/rms_ns ] && [ ! -L $env1/lib/python3*/site-packages/rms_ns ]
ok $? "rms_ns/, which two wheels share, is a real directory of the environment"
[ -L $env1/lib/python3*/site-packages/rms_ns/one ] && [ -L $env1/lib/python3*/site-packages/rms_ns/two ]
ok $? "and its two halves are symlinks, one into each wheel's entry"
[ -f $env1/lib/python3*/site-packages/rms_pth.pth ] && [ ! -L $env1/lib/python3*/site-packages/rms_pth.pth ]
ok $? "a .pth file is a file of the environment (a hard link), not a symlink"
is "$(stat -c %a "$e")" 444 "store files are 0444"
ls $ST/store/py*/*/site/rms_alpha/__pycache__/*.pyc >/dev/null 2>&1
ok $? "its bytecode was compiled once, in the store"
# Python reads that bytecode through the environment's symlinks, and never
# compiles a module again nor tries to write a .pyc into the store: the
# interpreter's audit events say which files it opened, how.
cat >$T/pyc.py <<'PY'
import os, sys
seen = []
def hook(event, args):
    if event == "open" and isinstance(args[0], str):
        seen.append((args[0], args[1], args[2] if len(args) > 2 else 0))
sys.addaudithook(hook)
import rms_beta, rms_ns.one
site = os.path.dirname(os.path.dirname(rms_beta.__file__))
mods = [rms_beta, rms_ns.one]
writes = [p for p, m, f in seen if "__pycache__" in p and ((m and "r" not in m) or (isinstance(f, int) and f & (os.O_WRONLY | os.O_RDWR)))]
print("R files", all(m.__file__.startswith(sys.prefix + "/") for m in mods))
print("R pyc read", all(any(p == m.__spec__.cached for p, _, _ in seen) for m in mods))
print("R source read", any(p == m.__file__ for p, _, _ in seen for m in mods))
print("R pyc writes", len(writes))
PY
run_json $T/pyc.json $T/pyc.py --no-auto-deps "${SET[@]}"
L=$(jget $T/pyc.json 'r["logs"]')
like "$L" "R files True" "__file__ of a module stays under the environment's prefix"
like "$L" "R pyc read True" "its .pyc (the store's, compiled once) is what Python loads"
like "$L" "R source read False" "and the source is not read: nothing is compiled again"
like "$L" "R pyc writes 0" "no .pyc is written into the store"

# --- concurrent builds of different sets sharing wheels unpack each once ---
export RUNMYSCRIPT_STATE_DIR=$T/conc
printf 'import rms_alpha\nprint(rms_alpha.greet("c"))\n' >$T/c.py
pids=()
for extra in rms-beta rms-gamma-dist rms-data rms-ns-one; do
    "$RUNMYSCRIPT" run $T/c.py --with rms-alpha --with $extra --set log_level=info --json \
        >$T/c-$extra.json 2>$T/c-$extra.err &
    pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait $p || fails=$((fails + 1)); done
is "$fails" 0 "four concurrent builds of sets sharing rms-alpha all succeed"
is "$(cat $T/c-*.err | grep -c 'store: unpacking rms_alpha-')" 1 "rms-alpha was unpacked once"
inodes=$(for e in $T/conc/envs/[0-9a-f]*; do stat -c %i $e/lib/python3*/site-packages/rms_alpha/__init__.py; done | sort -u | wc -l)
is "$inodes" 1 "all four environments link the one copy"
is "$(half_entries $T/conc)" 0 "no half entry"
export RUNMYSCRIPT_STATE_DIR=$ST

# --- a set resolved before is not resolved again ---
run_json $T/r1.json $T/c.py --with rms-alpha --with rms-pth
is "$RC" 0 "a new set builds"
key=$(jget $T/r1.json 'r["env"]')
chmod -R u+w $ST/envs/$key && rm -rf $ST/envs/$key
run_json $T/r2.json $T/c.py --with rms-alpha --with rms-pth --set log_level=info
is "$RC" 0 "the same set after its environment went"
is "$(jget $T/r2.json 'r["env_cache"]')" built "built again"
like "$(cat $T/r2.json.err)" "the resolution of $key is known: no installer" "from the kept resolution, no installer"
is "$(jget $T/r2.json 'r["install_log"]' | grep -c 'Looking in links')" 0 "pip did not run"

# --- a kill at each step leaves nothing half made; the next run succeeds ---
printf 'import rms_gamma\nprint(rms_gamma.whoami())\n' >$T/g.py
for step in download unpack compile link publish; do
    export RUNMYSCRIPT_STATE_DIR=$T/kill-$step
    RMS_FAULT_KILL_AT=$step "$RUNMYSCRIPT" run $T/g.py --with rms-gamma-dist --with rms-data \
        --json >$T/k.json 2>$T/k.err
    is "$?" 137 "killed at $step (SIGKILL)"
    is "$(half_entries $T/kill-$step)" 0 "$step: no half entry in the store"
    is "$(env_dirs $T/kill-$step)" "" "$step: no environment published"
    run_json $T/k2.json $T/g.py --with rms-gamma-dist --with rms-data
    is "$RC" 0 "$step: the next run succeeds"
    like "$(jget $T/k2.json 'r["logs"]')" "rms_gamma from rms-gamma-dist" "$step: with the package"
    is "$(leftovers $T/kill-$step)" 0 "$step: nothing of the killed build is left"
    is "$(half_entries $T/kill-$step)" 0 "$step: every entry whole"
done
export RUNMYSCRIPT_STATE_DIR=$ST

# --- a damaged wheel is refused and never enters the store ---
mkdir -p $T/bad
"$PYTHON3" - "$WHEELHOUSE" $T/bad <<'PY'
import glob, os, shutil, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
alpha = glob.glob(os.path.join(src, "rms_alpha-*.whl"))[0]
def rewrite(dst_name, change):
    with zipfile.ZipFile(alpha) as z, zipfile.ZipFile(os.path.join(out, dst_name), "w") as w:
        for i in z.infolist():
            data = z.read(i.filename)
            name, data = change(i.filename, data)
            i.filename = name
            w.writestr(i, data)
os.makedirs(os.path.join(out, "altered"))
os.makedirs(os.path.join(out, "escape"))
os.makedirs(os.path.join(out, "short"))
rewrite("altered/" + os.path.basename(alpha),
        lambda n, d: (n, d.replace(b"alpha says", b"ALPHA SAYS") if n.endswith("__init__.py") else d))
# A member that climbs out of the entry: RECORD names it too, so only the
# path check stands in its way (it would land in the state directory).
def climb(n, d):
    if n.endswith("__init__.py"):
        return "../../../../escaped_by_wheel.py", d
    if n.endswith("RECORD"):
        return n, d.replace(b"rms_alpha/__init__.py", b"../../../../escaped_by_wheel.py")
    return n, d
rewrite("escape/" + os.path.basename(alpha), climb)
data = open(alpha, "rb").read()
open(os.path.join(out, "short", os.path.basename(alpha)), "wb").write(data[: len(data) // 2])
PY
for kind in altered escape short; do
    export RUNMYSCRIPT_STATE_DIR=$T/bad-$kind
    run_json $T/b.json $T/c.py --with rms-alpha --set find_links=file://$T/bad/$kind
    is "$RC" 120 "$kind wheel: exit 120"
    is "$(jget $T/b.json 'r["status"]')" install_failed "$kind wheel: install_failed"
    is "$(store_entries $T/bad-$kind)" "" "$kind wheel: nothing entered the store"
    is "$(leftovers $T/bad-$kind)" 0 "$kind wheel: nothing left of it"
    case $kind in
    altered) like "$(jget $T/b.json 'r["error"]')" "does not match its hash in RECORD" "the error says why" ;;
    escape) like "$(jget $T/b.json 'r["error"]')" "unsafe" "the error says why"
        [ ! -e $T/escaped_by_wheel.py ] && [ ! -e $T/bad-$kind/escaped_by_wheel.py ] &&
            ! ls $T/bad-$kind/store/escaped_by_wheel.py >/dev/null 2>&1
        ok $? "nothing was written outside the store" ;;
    short) like "$(jget $T/b.json 'r["error"]')" "rms-alpha" "the error names the requirement" ;;
    esac
done
export RUNMYSCRIPT_STATE_DIR=$ST

# --- store_bytes: environments first, then entries nobody links ---
export RUNMYSCRIPT_STATE_DIR=$T/evict
# One environment and its entry fit, two do not.
CAP=(--no-auto-deps --set store_bytes=150K)
printf 'print("ok")\n' >$T/ok.py
run_json $T/e1.json $T/ok.py "${CAP[@]}" --with rms-ns-one
e1=$(jget $T/e1.json 'r["env"]')
is "$(env_dirs $T/evict)" "$e1 " "over store_bytes, the environment just built stays"
ns1=$(store_entries $T/evict)
run_json $T/e2.json $T/ok.py "${CAP[@]}" --with rms-ns-two
e2=$(jget $T/e2.json 'r["env"]')
is "$(env_dirs $T/evict)" "$e2 " "the next build evicts the least recently used environment"
is "$(store_entries $T/evict | wc -w)" 1 "and the store entry only it linked: one entry left"
is "$(ls -a $T/evict/store/py*/ | grep -c '\.lock$')" 1 "and its unpack lock"
[ "$(store_entries $T/evict)" != "$ns1" ]
ok $? "the one left is the new environment's"
cat >$T/hold.py <<'PY'
import os, time
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "holding"), "w").close()
while not os.path.exists("release"):
    time.sleep(0.05)
print("released")
PY
"$RUNMYSCRIPT" run $T/hold.py "${CAP[@]}" --with rms-ns-two --json >$T/h.json 2>$T/h.err &
H=$!
holding() { ls $T/evict/runs/*/output/holding >/dev/null 2>&1; }
wait_until holding
ok $? "a run is using $e2"
run_json $T/e3.json $T/ok.py "${CAP[@]}" --with rms-pth
e3=$(jget $T/e3.json 'r["env"]')
is "$(env_dirs $T/evict)" "$(printf '%s\n' $e2 $e3 | sort | tr '\n' ' ')" "the environment in use is not evicted"
is "$(store_entries $T/evict | wc -w)" 2 "nor the store entry it links"
touch "$(dirname "$(dirname "$(ls $T/evict/runs/*/output/holding | head -1)")")/release"
wait $H
is "$?" 0 "the holding run ends well"
export RUNMYSCRIPT_STATE_DIR=$ST

run_json $T/big.json $T/ok.py --no-auto-deps --set store_bytes=1 --with rms-gamma-dist
is "$RC" 120 "a wheel that unpacks to more than store_bytes: exit 120"
like "$(jget $T/big.json 'r["error"]')" "more than store_bytes" "the error names the limit"
export RUNMYSCRIPT_STATE_DIR=$ST

# --- an environment whose store entry went missing is made again ---
export RUNMYSCRIPT_STATE_DIR=$T/gone
printf 'import rms_alpha\nprint(rms_alpha.greet("g"))\n' >$T/g.py
run_json $T/g1.json $T/g.py --no-auto-deps --with rms-alpha
is "$RC" 0 "an environment with rms-alpha"
e=$(dirname "$(dirname "$(ls -d $T/gone/store/py*/*/site/rms_alpha)")")
chmod -R u+w "$e" && rm -rf "$e"
run_json $T/g2.json $T/g.py --no-auto-deps --with rms-alpha
is "$RC" 0 "its store entry removed by hand, the next run still works"
is "$(jget $T/g2.json 'r["env_cache"]')" built "with the environment made again (its symlinks would lead nowhere)"
like "$(jget $T/g2.json 'r["logs"]')" "alpha says hello to g" "and the package imports"
export RUNMYSCRIPT_STATE_DIR=$ST

# --- ten environments that share numpy hold one copy of its files ---
if ls "$WHEELHOUSE"/numpy-*.whl >/dev/null 2>&1; then
    export RUNMYSCRIPT_STATE_DIR=$T/ten
    n=0
    for extra in none rms-alpha rms-beta rms-gamma-dist rms-data rms-ns-one rms-ns-two rms-pth six pytz; do
        w=(--with numpy)
        [ $extra = none ] || w+=(--with $extra)
        run_json $T/n.json $T/ok.py --no-auto-deps "${w[@]}"
        [ "$RC" = 0 ] && n=$((n + 1))
    done
    is "$n" 10 "ten environments with numpy built"
    is "$(env_dirs $T/ten | wc -w)" 10 "ten environments on disk"
    # Followed through the environments' symlinks (find -L), numpy's
    # files and directories are in each environment and have one copy;
    # a symlink is an inode of the environment, not a copy.
    first=$(ls -d $T/ten/envs/[0-9a-f]* | head -1)
    per=$(find -L $first/lib/python3*/site-packages/numpy -type f | wc -l)
    dirs=$(find -L $first/lib/python3*/site-packages/numpy -type d | wc -l)
    all=$(for e in $T/ten/envs/[0-9a-f]*; do find -L $e/lib/python3*/site-packages/numpy -type f; done | wc -l)
    distinct=$(for e in $T/ten/envs/[0-9a-f]*; do find -L $e/lib/python3*/site-packages/numpy -type f -printf '%D:%i\n'; done | sort -u | wc -l)
    ddistinct=$(for e in $T/ten/envs/[0-9a-f]*; do find -L $e/lib/python3*/site-packages/numpy -type d -printf '%D:%i\n'; done | sort -u | wc -l)
    [ "$per" -gt 100 ] && [ "$dirs" -gt 50 ]
    ok $? "numpy has $per files in $dirs directories"
    is "$all" "$((per * 10))" "each holds numpy's $per files"
    is "$distinct" "$per" "the ten hold one copy of them ($distinct inodes)"
    is "$ddistinct" "$dirs" "and one copy of its $dirs directories"
    # What an environment holds of its own (inodes not in the store: the
    # base environment's files, its directories, the symlinks): a tree of
    # hard links would have numpy's directories among them, ten times.
    find $T/ten/store -printf '%D:%i\n' | sort -u >$T/store-inodes
    own=$(find $T/ten/envs/[0-9a-f]* -printf '%D:%i\n' | sort -u | comm -23 - $T/store-inodes | wc -l)
    [ $((own / 10)) -lt "$dirs" ]
    ok $? "an environment holds $((own / 10)) inodes of its own, fewer than numpy's $dirs directories"
    # More new wheels than one compile takes (its binds): 13 at once.
    export RUNMYSCRIPT_STATE_DIR=$T/big
    run_json $T/pm.json $T/ok.py --no-auto-deps --with pandas --with matplotlib
    is "$RC" 0 "pandas and matplotlib: a build of $(store_entries $T/big | wc -w) new wheels"
    missing=0
    for e in $T/big/store/py*/[0-9a-f]*; do
        if find $e/site -name '*.py' | grep -q . && ! find $e/site -name '*.pyc' | grep -q .; then
            missing=$((missing + 1))
        fi
    done
    is "$missing" 0 "every one of them has its bytecode"
    # The test suites packages ship are left out of the compile (more than
    # half of pandas' files); they still import, compiled in memory.
    core=$(ls -d $T/big/store/py*/[0-9a-f]*/site/numpy/core)
    is "$(ls $core/__pycache__ | grep -c '\.pyc$')" "$(ls $core | grep -c '\.py$')" "numpy/core: a .pyc for each module"
    is "$(find $T/big/store/py*/[0-9a-f]*/site/pandas/tests -name '*.pyc' | wc -l)" 0 "pandas/tests: not compiled"
    printf 'import pandas.tests, numpy.core.tests\nprint("tests import")\n' >$T/tests.py
    run_json $T/tests.json $T/tests.py --no-auto-deps --with pandas --with matplotlib
    like "$(jget $T/tests.json 'r["logs"]')" "tests import" "a package's tests still import from the environment"
    export RUNMYSCRIPT_STATE_DIR=$ST
else
    skip "no numpy wheel (python3-numpy is not installed): the ten environments"
fi

# --- a source distribution: pip builds its wheel once, the store keeps it ---
export RUNMYSCRIPT_STATE_DIR=$T/sdist
printf 'import rms_sdist\nprint(rms_sdist.where())\n' >$T/sd.py
run_json $T/sd1.json $T/sd.py --no-auto-deps --with rms-sdist --set only_binary=off --set log_level=info
is "$RC" 0 "a set with a source distribution builds (only_binary = off)"
like "$(jget $T/sd1.json 'r["logs"]')" "rms_sdist, built from its sdist" "the script imports what was built"
like "$(cat $T/sd1.json.err)" "is a source distribution: pip builds its wheel, once" "pip built its wheel"
ls -d $T/sdist/store/py*/*/site/rms_sdist >/dev/null 2>&1
ok $? "the built wheel is in the store"
run_json $T/sd2.json $T/sd.py --no-auto-deps --with rms-sdist --with rms-alpha --set only_binary=off \
    --set log_level=info
is "$RC" 0 "another set with the same source distribution"
like "$(cat $T/sd2.json.err)" "was built before: its wheel is in the store" "uses the wheel built before"
is "$(grep -c 'pip builds its wheel' $T/sd2.json.err)" 0 "and builds nothing"
export RUNMYSCRIPT_STATE_DIR=$ST

# --- package_store = off: pip installs as before, nothing in the store ---
export RUNMYSCRIPT_STATE_DIR=$T/off
run_json $T/o.json $T/c.py --with rms-alpha --set package_store=off
is "$RC" 0 "package_store = off still installs"
like "$(jget $T/o.json 'r["install_log"]')" "Successfully installed rms-alpha-1.0" "with pip's install"
is "$(store_entries $T/off)" "" "and nothing in the store"
export RUNMYSCRIPT_STATE_DIR=$ST

done_testing
