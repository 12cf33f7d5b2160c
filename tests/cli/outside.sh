#!/bin/bash
# The program as a new user meets it: the freshly built binary run from a
# directory outside the source tree, with a clean environment (no
# RUNMYSCRIPT_* variable, no configuration file), copied into a cgi-bin
# with only a configuration file next to it, and with a state directory
# below /usr (where ./configure's default, PREFIX/var/lib/runmyscript,
# puts it). Each one runs a standard-library script and the seed example,
# whose `import PIL` needs the import map built into the program.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
S=$top_srcdir/tests/fixtures
T=$TEST_TMP
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"
PILLOW=$(cd "$WHEELHOUSE" && ls pillow-*.whl 2>/dev/null | head -1)
[ -n "$PILLOW" ] || skip_all "no pillow wheel: $(cat "$WHEELHOUSE/.no-pillow" 2>/dev/null) (apt-get install python3-pil)"

# Where a user would stand: an empty directory of their own, the program
# and the scripts copied there (nothing of the source or build tree).
W=$T/elsewhere
mkdir -p $W/bin $W/cgi-bin
cp "$RUNMYSCRIPT" $W/bin/runmyscript
cp "$S/seeds/run_my_script_test.py" "$S/seeds/run_my_script_test_input.json" $W/
printf 'import json, sys\nprint(json.dumps(sorted(sys.argv[1:])), "stdlib ok")\n' >$W/std.py
ISOLATION=()
"$W/bin/runmyscript" check-sandbox >/dev/null 2>&1 || ISOLATION=(--set isolation=rlimits --set require_isolation=off)

# rms ARGS...: the copied program, from W, with nothing but PATH (rms
# timeout ... PROGRAM ARGS: the same under timeout).
rms() {
    local prog=("$W/bin/runmyscript")
    [ "$1" = timeout ] && prog=()
    (cd $W && env -i PATH=/usr/bin:/bin HOME=$W "${prog[@]}" "$@")
}

# both STATE LABEL: the two scripts with the state directory STATE.
both() {
    local st=$1 label=$2
    local sets=(--set "state_dir=$st" --set index_url=none --set "find_links=file://$WHEELHOUSE" "${ISOLATION[@]}")
    rms run std.py "${sets[@]}" --json >$T/std.json 2>$T/std.err
    is "$?" 0 "$label: a standard-library script exits 0"
    like "$(jget $T/std.json 'r["logs"]')" "stdlib ok" "$label: and printed its line"
    rms run run_my_script_test.py --input run_my_script_test_input.json "${sets[@]}" --json \
        >$T/seed.json 2>$T/seed.err
    is "$?" 0 "$label: the seed example exits 0"
    is "$(jget $T/seed.json 'r["status"]')" ok "$label: status ok"
    like "$(jget $T/seed.json 'r["logs"]')" "Image flipped and saved as flipped.png." "$label: it flipped the image"
    like "$(jget $T/seed.json 'r["requirements"]')" "pillow==" "$label: pillow found through the built-in import map"
    [ "$(jget $T/seed.json 'r["status"]')" = ok ] || diag "$label: $(jget $T/seed.json 'r["error"]' 2>/dev/null) $(head -c 400 $T/seed.err)"
}

both $T/state "outside the tree, clean environment"

# Below /usr the jail reaches the state directory's bind targets through
# the host's /usr, as an unprivileged uid: every directory on the way must
# let it pass.
if [ "$(id -u)" = 0 ] && [ -d /usr/local/lib ]; then
    U=$(mktemp -d /usr/local/lib/rms-test.XXXXXX)
    chmod 755 $U
    both $U/state "a state directory below /usr"
    case "$U" in /usr/local/lib/rms-test.?*) rm -rf "$U" ;; esac
else
    skip "a state directory below /usr: needs root to make one there"
fi

# A CGI copy: the program in a cgi-bin with its configuration next to it,
# as a web server starts it (only the CGI variables in its environment).
cp "$RUNMYSCRIPT" $W/cgi-bin/runmyscript.cgi
printf 'state_dir = %s\nindex_url = none\nfind_links = file://%s\n' "$T/cgi-state" "$WHEELHOUSE" >$W/cgi-bin/runmyscript.conf
[ ${#ISOLATION[@]} = 0 ] || printf 'isolation = rlimits\nrequire_isolation = off\n' >>$W/cgi-bin/runmyscript.conf
body=$("$PYTHON3" -c 'import json, sys; print(json.dumps({"code": open(sys.argv[1]).read(), "input": open(sys.argv[2]).read()}))' \
    $W/run_my_script_test.py $W/run_my_script_test_input.json)
(cd $W/cgi-bin && printf '%s' "$body" | env -i PATH=/usr/bin:/bin GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
    REQUEST_URI=/api/run SCRIPT_FILENAME=$W/cgi-bin/runmyscript.cgi CONTENT_TYPE=application/json \
    CONTENT_LENGTH=${#body} HTTP_HOST=localhost HTTP_ACCEPT=application/json ./runmyscript.cgi) >$T/cgi.out 2>$T/cgi.err
like "$(head -1 $T/cgi.out)" "Status: 200" "a CGI copy in a cgi-bin answers /api/run"
sed '1,/^\r$/d' $T/cgi.out >$T/cgi.json
like "$(jget $T/cgi.json 'r["requirements"]')" "pillow==" "the CGI copy finds pillow through the built-in import map"
like "$(jget $T/cgi.json 'r["logs"]')" "Image flipped" "and runs the seed example" ||
    diag "$(head -c 600 $T/cgi.out) $(head -c 300 $T/cgi.err)"

# A data_dir that names nothing is the configuration's fault: the CLI and
# serve refuse to start, with the key's name, instead of failing each run.
rms run std.py --set "state_dir=$T/state" --set data_dir=$W/nowhere >$T/bad.out 2>$T/bad.err
is "$?" 78 "run with a data_dir that holds no import map: exit 78"
like "$(cat $T/bad.err)" "data_dir = $W/nowhere" "naming the key"
# (timeout: a program that took it would serve until stopped.)
rms timeout -s KILL 60 "$W/bin/runmyscript" serve --listen 127.0.0.1:0 --set "state_dir=$T/state" \
    --set data_dir=$W/nowhere >$T/serve.out 2>$T/serve.err
is "$?" 78 "serve with it: exit 78, nothing served"
like "$(cat $T/serve.err)" "import-names.tsv" "naming the file"

done_testing
