#!/bin/bash
# The seed script end to end with auto-detection alone: `import PIL` is
# detected, mapped to pillow, installed from the wheelhouse into a new
# environment, imported from it, and flipped.png is the input mirrored.
# The second run is a cache hit on the same directory; a stdlib-only
# script never creates an environment.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
S=$top_srcdir/tests/fixtures
T=$TEST_TMP
ST=$RUNMYSCRIPT_STATE_DIR
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"
PILLOW=$(cd "$WHEELHOUSE" && ls pillow-*.whl 2>/dev/null | head -1)
[ -n "$PILLOW" ] || skip_all "no pillow wheel: $(cat "$WHEELHOUSE/.no-pillow" 2>/dev/null) (apt-get install python3-pil)"
PV=${PILLOW#pillow-}
PV=${PV%%-*}

"$PYTHON3" - "$S/seeds/run_my_script_test_input.json" $T/orig.png <<'PY'
import base64, json, sys
open(sys.argv[2], "wb").write(base64.b64decode(json.load(open(sys.argv[1]))["img"]))
PY

# --- first run: detect, install, run ---
"$RUNMYSCRIPT" run "$S/seeds/run_my_script_test.py" --input "$S/seeds/run_my_script_test_input.json" \
    --out $T/out >$T/first.txt 2>$T/first.err
is "$?" 0 "the seed script exits 0 through runmyscript run"
like "$(cat $T/first.txt)" "Image flipped and saved as flipped.png." "it printed its line"
like "$(cat $T/first.err)" "[runmyscript] installing pillow" "the CLI shows the installing phase with the name"
like "$(cat $T/first.err)" "[install] Successfully installed pillow-$PV" "and the installer's output"
like "$(cat $T/first.err)" "environment (built): pillow==$PV" "the summary names the environment"
id=$(sed -n 's/.*, run \([0-9a-f]*\).*/\1/p' $T/first.err)
"$PYTHON3" "$top_srcdir/tests/lib/check_png.py" mirror $T/orig.png "$T/out/$id/flipped.png"
ok $? "flipped.png is the input mirrored, pixel for pixel"
r1=$ST/runs/$id/result.json
is "$(jget $r1 'r["status"]')" ok "status ok"
is "$(jget $r1 'r["requirements"]')" "[\"pillow==$PV\"]" "requirements: what the environment holds"
is "$(jget $r1 'r["env_cache"]')" built "env_cache built"
like "$(jget $r1 'r["install_log"]')" "Successfully installed pillow-$PV" "install_log holds the installer's output"
is "$(jget $r1 'r["failed_requirement"]')" null "no failed requirement"
key=$(jget $r1 'r["env"]')
envdir=$ST/envs/$key
[ -d "$envdir" ] && [ -f "$envdir/runmyscript-env.txt" ]
ok $? "the environment is published at STATE/envs/KEY with its manifest"
is "$(env_dirs $ST)" "$key " "exactly one environment"
is "$(ls -a $ST/envs | grep -c '^\.tmp-')" 0 "no temporary build left"
is "$(find "$envdir" ! -type l -perm /222 | wc -l)" 0 "the environment is read-only (no write bit anywhere)"
ino1=$(stat -c %i "$envdir")

# --- second run: a cache hit on the same directory, no installer ---
run_json $T/second.json "$S/seeds/run_my_script_test.py" --input "$S/seeds/run_my_script_test_input.json" --out $T/out2
is "$RC" 0 "the second run exits 0"
is "$(jget $T/second.json 'r["env_cache"]')" hit "env_cache hit"
is "$(jget $T/second.json 'r["install_log"]')" null "the installer did not run"
is "$(jget $T/second.json 'r["env"]')" "$key" "the same environment key"
is "$(stat -c %i "$envdir")" "$ino1" "the same directory (inode unchanged)"
is "$(jget $T/second.json 'r["requirements"]')" "[\"pillow==$PV\"]" "requirements again"
id2=$(jget $T/second.json 'r["run_id"]')
"$PYTHON3" "$top_srcdir/tests/lib/check_png.py" mirror $T/orig.png "$T/out2/$id2/flipped.png"
ok $? "the second flipped.png is right too"

# --- the script sees the environment, and only it ---
cat >$T/where.py <<'PY'
import os, sys
import PIL
print("PREFIX", sys.prefix)
print("PIL", os.path.dirname(PIL.__file__))
try:
    open(PIL.__file__, "a").close()
    print("WRITABLE", True)
except OSError:
    print("WRITABLE", False)
PY
run_json $T/where.json $T/where.py
logs=$(jget $T/where.json 'r["logs"]')
is "$(jget $T/where.json 'r["env_cache"]')" hit "another script importing PIL hits the same environment"
seen=$envdir
[ "$(jget $T/where.json 'r["isolation"]')" = "namespaces+seccomp" ] && seen=/env
is "$(echo "$logs" | sed -n 's/^PREFIX //p')" "$seen" "sys.prefix is the environment ($seen as the script sees it)"
like "$(echo "$logs" | sed -n 's/^PIL //p')" "$seen/lib/" "PIL is imported from it"
# Read-only by the jail's mount, or in the fallback by Landlock.
case $(jget $T/where.json 'r["isolation"]') in
namespaces+seccomp | landlock*) like "$logs" "WRITABLE False" "the environment is read-only to the script" ;;
*) skip "the read-only mount is the jail's, the rule Landlock's (this run: $(jget $T/where.json 'r["isolation"]'))" ;;
esac

# --- stdlib only: no environment, ever ---
export RUNMYSCRIPT_STATE_DIR=$T/state2
run_json $T/std.json "$S/scripts/seed-stdlib.py" --input "$S/seeds/run_my_script_test_input.json"
is "$RC" 0 "a stdlib-only script runs"
is "$(jget $T/std.json 'r["env_cache"]')" none "env_cache none"
is "$(jget $T/std.json 'r["requirements"]')" "[]" "no requirements"
is "$(jget $T/std.json 'r["install_log"]')" null "no installer"
is "$(jget $T/std.json 'r["env"]')" null "no environment key"
is "$(env_dirs $T/state2)" "" "no dependency environment was created"
is "$(ls -a $T/state2/envs | grep -v -E '^(\.|\.\.|base-[0-9a-f]+|\.base-[0-9a-f]+\.lock)$' | wc -l)" 0 \
    "STATE/envs holds only the base environment"
export RUNMYSCRIPT_STATE_DIR=$ST

# --- auto-detection off ---
run_json $T/off.json "$S/seeds/run_my_script_test.py" --input "$S/seeds/run_my_script_test_input.json" --no-auto-deps
is "$(jget $T/off.json 'r["status"]')" error "--no-auto-deps: the script fails"
like "$(jget $T/off.json 'r["logs"]')" "No module named 'PIL'" "because nothing was installed"
is "$(jget $T/off.json 'r["env_cache"]')" none "and it ran in the base environment"
run_json $T/off2.json "$S/seeds/run_my_script_test.py" --set auto_deps=off
like "$(jget $T/off2.json 'r["logs"]')" "No module named 'PIL'" "auto_deps = off does the same"
run_json $T/on.json "$S/seeds/run_my_script_test.py" --input "$S/seeds/run_my_script_test_input.json" \
    --set auto_deps=off --auto-deps
is "$(jget $T/on.json 'r["status"]')" ok "--auto-deps turns it back on for one call"

done_testing
