#!/bin/bash
# Where requirements come from and what is refused: explicit lists (--with,
# -r) and PEP 723 win over detection, earlier sources win per
# distribution, invalid or smuggling requirements are refused before
# anything runs, a failed install is install_failed with the requirement
# that failed and the script not run; the installer choice (uv or pip).
# Runs in the jail where the host has it, in the rlimits fallback elsewhere.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
ST=$RUNMYSCRIPT_STATE_DIR
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"

# --- an explicit requirement wins over detection ---
# rms_gamma is provided by the distribution rms-gamma-dist; detection alone
# would ask for "rms-gamma", which exists nowhere.
cat >$T/gamma.py <<'PY'
import rms_gamma
print(rms_gamma.whoami())
PY
run_json $T/g0.json $T/gamma.py
is "$RC" 120 "detection alone asks for rms-gamma, which does not exist: exit 120"
is "$(jget $T/g0.json 'r["status"]')" install_failed "status install_failed"
is "$(jget $T/g0.json 'r["failed_requirement"]')" rms-gamma "failed_requirement names it"
run_json $T/g1.json $T/gamma.py --with rms-gamma-dist
is "$RC" 0 "--with rms-gamma-dist: the import needs nothing more"
like "$(jget $T/g1.json 'r["logs"]')" "rms_gamma from rms-gamma-dist" "the script ran with it"
is "$(jget $T/g1.json 'r["requirements"]')" '["rms-gamma-dist==1.0"]' "requirements: only the declared distribution"

# --- PEP 723 wins over detection ---
cat >$T/gamma723.py <<'PY'
# /// script
# requires-python = ">=3.8"
# dependencies = [
#   "rms_gamma_dist",  # provides rms_gamma
# ]
# ///
import rms_gamma
print(rms_gamma.whoami())
PY
run_json $T/g2.json $T/gamma723.py
is "$RC" 0 "a PEP 723 block declaring rms-gamma-dist"
is "$(jget $T/g2.json 'r["requirements"]')" '["rms-gamma-dist==1.0"]' "requirements from the block"
is "$(jget $T/g2.json 'r["env_cache"]')" hit "the same set as --with rms-gamma-dist: the same environment"
is "$(jget $T/g2.json 'r["env"]')" "$(jget $T/g1.json 'r["env"]')" "one key for one set, whatever the source"

# --- explicit wins over PEP 723 for the same distribution ---
cat >$T/pinned.py <<'PY'
# /// script
# dependencies = ["rms-alpha>=5"]
# ///
import rms_alpha
print(rms_alpha.greet("you"))
PY
run_json $T/p0.json $T/pinned.py
is "$(jget $T/p0.json 'r["status"]')" install_failed "the block alone asks for rms-alpha>=5, which does not exist"
is "$(jget $T/p0.json 'r["failed_requirement"]')" "rms-alpha>=5" "failed_requirement is the block's requirement"
run_json $T/p1.json $T/pinned.py --with 'rms_alpha==1.0'
is "$RC" 0 "--with rms_alpha==1.0 wins over the block's rms-alpha>=5"
is "$(jget $T/p1.json 'r["requirements"]')" '["rms-alpha==1.0"]' "requirements"
grep -qx 'want rms-alpha==1.0' "$ST/envs/$(jget $T/p1.json 'r["env"]')/runmyscript-env.txt"
ok $? "the environment was built for the explicit spelling"

# --- dependencies pulled in, several requirements, -r ---
cat >$T/beta.py <<'PY'
import rms_beta
print(rms_beta.combine("x"))
PY
run_json $T/b.json $T/beta.py
is "$RC" 0 "import rms_beta: detected, installed with its dependency"
is "$(jget $T/b.json 'r["requirements"]')" '["rms-alpha==1.0", "rms-beta==2.0"]' "requirements list both"
like "$(jget $T/b.json 'r["logs"]')" "beta+alpha says hello to x" "and it works"
printf '# a comment\n\nrms-beta>=2  # trailing comment\n   rms_gamma_dist\n' >$T/reqs.txt
run_json $T/r.json $T/beta.py -r $T/reqs.txt --no-auto-deps
is "$RC" 0 "-r requirements.txt with comments and blank lines"
is "$(jget $T/r.json 'r["requirements"]')" '["rms-alpha==1.0", "rms-beta==2.0", "rms-gamma-dist==1.0"]' \
    "everything in the file"

# --- refused before anything runs ---
refuse() { # refuse DESC WANT-IN-MESSAGE ARGS...
    local desc=$1 want=$2
    shift 2
    local before
    before=$(ls $ST/runs | wc -l)
    "$RUNMYSCRIPT" run "$@" --json >$T/ref.out 2>$T/ref.err
    is "$?" 65 "refused with exit 65: $desc"
    like "$(cat $T/ref.err)" "$want" "  saying why"
    is "$(ls $ST/runs | wc -l)" "$before" "  and no run was made"
}
printf 'print("ran")\n' >$T/p.py
envs_before=$(env_dirs $ST)
refuse "an installer option" "installer options are not accepted" $T/p.py --with '--index-url=http://127.0.0.1:1/simple'
refuse "-e" "installer options" $T/p.py --with '-e git+https://127.0.0.1/x.git'
refuse "a local path" "local paths are not accepted" $T/p.py --with ./pkg
refuse "a wheel path" "local paths" $T/p.py --with "$WHEELHOUSE/rms_alpha-1.0-py3-none-any.whl"
refuse "a URL" "URLs are not accepted" $T/p.py --with 'https://127.0.0.1/x.whl'
refuse "a direct reference" "direct references" $T/p.py --with "rms-alpha @ file://$WHEELHOUSE/rms_alpha-1.0-py3-none-any.whl"
refuse "not PEP 508" "not a valid PEP 508 requirement" $T/p.py --with 'pillow >= 9 <<'
refuse "an option after a name" "not accepted" $T/p.py --with 'rms-alpha --index-url=http://127.0.0.1:1/'
many=()
for i in $(seq 1 65); do many+=(--with "pkg$i"); done
refuse "more than 64 requirements" "more than 64 requirements" $T/p.py "${many[@]}"
refuse "a bad marker" "unknown marker variable" $T/p.py --with 'pillow; os == "posix"'
printf 'rms-alpha\n--extra-index-url http://127.0.0.1:1/\n' >$T/smuggle.txt
refuse "an option inside -r" "installer options" $T/p.py -r $T/smuggle.txt
cat >$T/url723.py <<'PY'
# /// script
# dependencies = ["rms-alpha @ https://127.0.0.1:1/rms_alpha-1.0-py3-none-any.whl"]
# ///
print("ran")
PY
refuse "a URL in the PEP 723 block" "PEP 723 dependencies" $T/url723.py
cat >$T/newpy.py <<'PY'
# /// script
# requires-python = ">=3.99"
# ///
print("ran")
PY
refuse "requires-python the interpreter does not meet" "requires Python >=3.99" $T/newpy.py
printf '# /// script\n# dependencies = [\n' >$T/open723.py
refuse "an unclosed PEP 723 block" "no closing" $T/open723.py
is "$(env_dirs $ST)" "$envs_before" "no refused call made an environment"
run_json $T/direct.json $T/beta.py --no-auto-deps --set requirement_urls=on \
    --with "rms-alpha @ file://$WHEELHOUSE/rms_alpha-1.0-py3-none-any.whl" --with rms-beta
is "$RC" 0 "requirement_urls = on allows a direct reference"
is "$(jget $T/direct.json 'r["requirements"]')" '["rms-alpha==1.0", "rms-beta==2.0"]' "  installed from it"

# --- a failed install ---
cat >$T/broken.py <<'PY'
print("SCRIPT RAN")
import rms_broken
PY
run_json $T/f.json $T/broken.py
is "$RC" 120 "an install that fails: exit 120"
is "$(jget $T/f.json 'r["status"]')" install_failed "status install_failed"
is "$(jget $T/f.json 'r["failed_requirement"]')" rms-broken "failed_requirement: rms-broken"
like "$(jget $T/f.json 'r["error"]')" "rms-missing" "error: the installer's reason (rms-missing is missing)"
like "$(jget $T/f.json 'r["install_log"]')" "No matching distribution found for rms-missing" "install_log: its output"
like "$(jget $T/f.json 'r["logs"]')" "[runmyscript] installing rms-broken failed" "the log says so"
like "$(jget $T/f.json 'r["logs"]')" "[install] ERROR: No matching distribution found for rms-missing" \
    "with the installer's last lines"
case "$(jget $T/f.json 'r["logs"]')" in *"SCRIPT RAN"*) ok 1 "the script did not run" ;; *) ok 0 "the script did not run" ;; esac
is "$(jget $T/f.json 'r["exit_code"]')" null "exit_code null"
is "$(jget $T/f.json 'r["env_cache"]')" none "env_cache none"
key=$(cd $ST/envs && ls -a | grep -c '^\.tmp-')
is "$key" 0 "nothing half-built is left"
run_json $T/f2.json $T/p.py --with rms-alpha --with rms-broken
is "$(jget $T/f2.json 'r["failed_requirement"]')" rms-broken "of two requirements, the one that failed"
run_json $T/f3.json $T/p.py --with rms-alpha --with nosuchpkg
is "$(jget $T/f3.json 'r["failed_requirement"]')" nosuchpkg "a distribution the index does not have"
"$RUNMYSCRIPT" run $T/broken.py >$T/f4.out 2>$T/f4.err
is "$?" 120 "the terminal view exits 120"
like "$(cat $T/f4.err)" "--- install_failed" "and its summary says install_failed"

# --- console scripts of installed packages run (their shebang survives the
# rename into place, and the jail's /env) ---
cat >$T/cli.py <<'PY'
import shutil, subprocess
print("WHICH", shutil.which("rms-alpha"))
print("OUT", subprocess.run(["rms-alpha"], capture_output=True, text=True).stdout.strip())
PY
run_json $T/cli.json $T/cli.py --with rms-alpha
is "$RC" 0 "a script that runs a package's console script"
like "$(jget $T/cli.json 'r["logs"]')" "OUT alpha says hello to the command line" "the console script works"
key=$(jget $T/cli.json 'r["env"]')
is "$(head -1 $ST/envs/$key/bin/rms-alpha)" "#!/usr/bin/env python3" "its shebang names no build directory"

# --- a session's own modules are not installed ---
mkdir -p $T/sess/workspace/mounts $T/sess/workspace/mypkg
printf 'def hi():\n    return "helpers here"\n' >$T/sess/workspace/helpers.py
: >$T/sess/workspace/mypkg/__init__.py
printf 'X = "mounted"\n' >$T/sess/workspace/mounts/mounted_mod.py
cat >$T/own.py <<'PY'
import sys
import helpers, mypkg
sys.path.insert(0, "mounts")
import mounted_mod
print(helpers.hi(), mounted_mod.X)
PY
run_json $T/own.json $T/own.py --session $T/sess
is "$RC" 0 "helpers.py, a package and a mounted module of the session's workspace"
is "$(jget $T/own.json 'r["env_cache"]')" none "need no environment"
is "$(jget $T/own.json 'r["install_log"]')" null "and no installer"
like "$(jget $T/own.json 'r["logs"]')" "helpers here mounted" "the script imported them"

# --- the import map: built in; data_dir names a directory whose map replaces it ---
printf 'import os, json\nprint(json.dumps(os.sep))\n' >$T/std.py
run_json $T/nomap1.json $T/std.py --set data_dir=$T/nowhere
is "$RC" 78 "a data_dir without import-names.tsv: a configuration error (exit 78), for any script"
[ -s $T/nomap1.json ]
ok $((!$?)) "and no result: nothing ran"
like "$(cat $T/nomap1.json.err)" "data_dir = $T/nowhere" "the message names the key"
like "$(cat $T/nomap1.json.err)" "$T/nowhere/import-names.tsv: No such file or directory" "and the file"
mkdir -p $T/map
printf 'b\tB\na\tA\n' >$T/map/import-names.tsv
run_json $T/nomap2.json $T/std.py --set data_dir=$T/map
is "$RC" 78 "a broken map: a configuration error too"
like "$(cat $T/nomap2.json.err)" "import-names.tsv:2: not sorted" "naming the line"
# A map of one's own: rms_gamma is provided by rms-gamma-dist, which
# detection alone does not know (above).
printf '# mine\nrms_gamma\trms-gamma-dist\n' >$T/map/import-names.tsv
run_json $T/ownmap.json $T/gamma.py --set data_dir=$T/map
is "$RC" 0 "data_dir's map replaces the built-in one"
is "$(jget $T/ownmap.json 'r["requirements"]')" '["rms-gamma-dist==1.0"]' "rms_gamma found in rms-gamma-dist"

# --- the installer: uv when it is on PATH (a stand-in here, uv is not
# installable on these machines), pip otherwise ---
mkdir -p $T/bin
RUNNER=$(/usr/bin/python3 -c 'import os, pip; print(os.path.join(os.path.dirname(pip.__file__), "__pip-runner__.py"))')
cat >$T/bin/uv <<UVEOF
#!/bin/bash
# A stand-in for uv: says its arguments (the installer runs in the jail,
# where only its output reaches the test, through install_log), installs
# with pip.
echo "uv-args: \$*"
echo "uv-find-links: \${UV_FIND_LINKS:-}"
[ "\$1 \$2" = "pip install" ] || exit 2
shift 2
py= specs=() fl=()
IFS=, read -ra links <<<"\${UV_FIND_LINKS:-}"
for l in "\${links[@]}"; do fl+=(--find-links "\$l"); done
while [ \$# -gt 0 ]; do
    case "\$1" in
    --python) py=\$2; shift 2 ;;
    --) shift; specs=("\$@"); break ;;
    *) shift ;;
    esac
done
exec "\$py" -I $RUNNER install --isolated --no-index "\${fl[@]}" -- "\${specs[@]}"
UVEOF
chmod +x $T/bin/uv
PATH=$T/bin:$PATH run_json $T/uv.json $T/beta.py
is "$RC" 0 "installer = auto with uv on PATH"
args=$(jget $T/uv.json 'r["install_log"]' | sed -n 's/^uv-args: //p')
[ -n "$args" ]
ok $? "uv was the installer"
args="$args "
like "$args" "pip install --python $ST/envs/.tmp-" "uv pip install --python TMP/bin/python3"
like "$args" "--only-binary :all: --no-index -- rms-beta" \
    "wheels only, no index, then the requirement after --"
is "$(jget $T/uv.json 'r["install_log"]' | sed -n 's/^uv-find-links: //p')" "file://$WHEELHOUSE" \
    "the find-links in UV_FIND_LINKS"
! grep -q -- "--find-links\|--index-url\|--extra-index-url" <<<"$args"
ok $? "no location on the installer's command line (one may carry credentials; a command line is public)"
like "$args" "--cache-dir $ST/cache/uv" "uv's cache is under the state directory"
uv_key=$(jget $T/uv.json 'r["env"]')
[ "$uv_key" != "$(jget $T/b.json 'r["env"]')" ]
ok $? "an environment made by another installer has another key"
PATH=$T/bin:$PATH run_json $T/pip.json $T/beta.py --set installer=pip
is "$(jget $T/pip.json 'r["env"]')" "$(jget $T/b.json 'r["env"]')" "installer = pip ignores uv on PATH"
! grep -q "uv-args" <<<"$(jget $T/pip.json 'r["install_log"] or ""')"
ok $? "and does not call it"
PATH=/usr/bin:/bin run_json $T/nouv.json $T/beta.py --set installer=uv
is "$(jget $T/nouv.json 'r["status"]')" sandbox_error "installer = uv without uv: the service's error"
like "$(jget $T/nouv.json 'r["error"]')" "uv is not on PATH" "saying so"

done_testing
