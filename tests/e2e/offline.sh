#!/bin/bash
# The tour as a new user takes it on a machine without a package index,
# with a wheelhouse configured the way the Quick start says: the command
# line with RUNMYSCRIPT_FIND_LINKS and RUNMYSCRIPT_INDEX_URL=none, and
# `FIND_LINKS=DIR ./quickstart serve` (its page's door and MCP), which
# shares the command line's state directory. An install that fails says
# where the installer looked and which keys say so (to the command line,
# whose user is the operator; a client of the page or MCP is told only that
# the server's sources lack it, and no path of the server), and its log is
# shown once. No index is ever reached: every index or link here is the
# wheelhouse, a loopback port, or none.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
R=$RUNMYSCRIPT
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"
ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1 || skip_all "no pillow wheel in the wheelhouse (python3-pil is missing)"
# Nothing of the test environment's own index settings: only what the
# Quick start says to set.
unset RUNMYSCRIPT_INDEX_URL RUNMYSCRIPT_EXTRA_INDEX_URL RUNMYSCRIPT_FIND_LINKS
SEED=(--input "$SEEDS_DIR/run_my_script_test_input.json")

# --- the command line, offline ---
RUNMYSCRIPT_FIND_LINKS=$WHEELHOUSE RUNMYSCRIPT_INDEX_URL=none \
    "$R" run "$SEEDS_DIR/run_my_script_test.py" "${SEED[@]}" --out $T/out >$T/seed.out 2>$T/seed.err
is "$?" 0 "the seed example (Pillow) runs from the wheelhouse alone"
like "$(cat $T/seed.err)" "environment (built): pillow==" "its environment was built from it"
like "$(cat $T/seed.err)" "flipped.png" "and it lists flipped.png"

# A requirement the wheelhouse lacks (rms-broken needs rms-missing, which
# is in no wheelhouse).
printf 'import rms_broken\n' >$T/broken.py
RUNMYSCRIPT_FIND_LINKS=$WHEELHOUSE RUNMYSCRIPT_INDEX_URL=none \
    "$R" run $T/broken.py --with rms-broken >$T/broken.out 2>$T/broken.err
is "$?" 120 "a requirement no source has: install_failed (exit 120)"
err=$(grep '^error: ' $T/broken.err)
like "$err" "No matching distribution found for rms-missing" "the error says what was not found"
like "$err" "it looked in no index (index_url = none) and find_links = $WHEELHOUSE" \
    "it names where the installer looked: the index and the links it tried"
like "$err" "point index_url at an index or find_links at a directory of wheels" "and points at the keys"
like "$(grep '^--- ' $T/broken.err)" "--- install_failed, after " "the summary says how long it took, not 0 ms"
all=$(cat $T/broken.out $T/broken.err)
is "$(printf '%s\n' "$all" | grep -c 'No matching distribution found for rms-missing>=1.0$')" 1 \
    "the installer's lines are shown once (on stderr as they came, not again in the log)"
RUNMYSCRIPT_FIND_LINKS=$WHEELHOUSE RUNMYSCRIPT_INDEX_URL=none "$R" run $T/broken.py --with rms-broken --json >$T/broken.json
like "$(jget $T/broken.json 'r["advice"]')" "find_links = $WHEELHOUSE" "the result's advice says so too (the operator's)"
like "$(jget $T/broken.json 'r["error"]')" "this server's package sources do not have it" "its error says what failed"
is "$(jget $T/broken.json 'r["logs"].count("[install] ERROR: No matching distribution found for rms-missing")')" 1 \
    "the log holds the installer's last lines once (for a reader of the log alone)"
# A private index's credentials are never shown (a refused loopback port:
# nothing is reached).
RUNMYSCRIPT_INDEX_URL=http://user:s3cret@127.0.0.1:$(free_port)/simple/ \
    "$R" run $T/broken.py --with rms-broken --json >$T/cred.json 2>/dev/null
e=$(jget $T/cred.json 'r["error"] + "; " + (r["advice"] or "")')
like "$e" "index_url = http://***@127.0.0.1:" "a private index is named without its user and password"
case "$e" in *s3cret*) ok 1 "the password is not in the error" ;; *) ok 0 "the password is not in the error" ;; esac

# --- FIND_LINKS=DIR ./quickstart serve ---
if [ "$(cd "$top_builddir" && pwd -P)" != "$(cd "$top_srcdir" && pwd -P)/build" ]; then
    skip "quickstart serve: it builds in ./build of the source tree, and this build is elsewhere"
    done_testing
    exit 0
fi
# quickstart installs missing Debian packages as root: here it must not
# (no network), so an apt-get on PATH that only says it was asked.
mkdir -p $T/bin
printf '#!/bin/sh\ntouch %s/apt-asked\nexit 1\n' "$T" >$T/bin/apt-get
chmod +x $T/bin/apt-get
# quickstart writes build/runmyscript.conf (unless a file of someone
# else's is there): the test takes away the one it made.
QCONF=$top_builddir/runmyscript.conf
QMARK="# Written by ./quickstart serve"
own_qconf=1
[ -e "$QCONF" ] && ! head -n 1 "$QCONF" | grep -q "^$QMARK" && own_qconf=""
[ -e "$QCONF" ] && cp -p "$QCONF" $T/conf-before
QPORT=$(free_port)
PATH=$T/bin:$PATH PORT=$QPORT QUICKSTART_RUN_DIR=$T/qs FIND_LINKS=$WHEELHOUSE \
    setsid "$top_srcdir/quickstart" serve >$T/qs.log 2>&1 &
QS=$!
stop_qs() {
    kill -TERM "$QS" 2>/dev/null
    wait "$QS" 2>/dev/null
    stack_stop 2>/dev/null
    if [ -n "$own_qconf" ]; then
        rm -f "$QCONF"
        [ -e $T/conf-before ] && cp -p $T/conf-before "$QCONF"
    fi
    cleanup_tmp
}
trap stop_qs EXIT
wait_for grep -q "^web page: http://127.0.0.1:$QPORT/" $T/qs.log
up=$?
if [ -e $T/apt-asked ]; then
    skip "quickstart serve: it wanted to install Debian packages (this machine lacks some)"
    done_testing
    exit 0
fi
ok $up "FIND_LINKS=DIR ./quickstart serve starts" || { diag "$(cat $T/qs.log)"; done_testing; exit 1; }
like "$(cat $T/qs.log)" "packages from index_url = none, find_links = $WHEELHOUSE" \
    "it says where packages come from: the wheelhouse, no index"
like "$(cat $T/qs.log)" "state in $RUNMYSCRIPT_STATE_DIR" "it serves the state directory the command line uses (RUNMYSCRIPT_STATE_DIR)"
"$PYTHON3" - "$SEEDS_DIR" >$T/seed-body.json <<'PY'
import json, sys
d = sys.argv[1]
print(json.dumps({"code": open(d + "/run_my_script_test.py").read(),
                  "input": open(d + "/run_my_script_test_input.json").read()}))
PY
curl -sS -o $T/page.json -H 'Content-Type: application/json' --data-binary @$T/seed-body.json \
    "http://127.0.0.1:$QPORT/api/run"
is "$(jget $T/page.json 'r["status"]')" ok "the page's example (the seed, Pillow) runs behind it"
is "$(jget $T/page.json 'r["env_cache"]')" hit "with the environment the command line built (one state directory)"
is "$(jget $T/page.json '[a["path"] for a in r["artifacts"]]')" '["flipped.png"]' "and gives back flipped.png"
url=$(jget $T/page.json 'r["artifacts"][0]["url"]')
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$QPORT$url")" 200 "whose link downloads"

# The command line in the same checkout, with none of the variables: it
# reads build/runmyscript.conf, which quickstart wrote, and finds the same
# packages in the same state directory.
if [ -n "$own_qconf" ]; then
    like "$(head -n 1 "$QCONF")" "$QMARK" "quickstart wrote build/runmyscript.conf, its first line says so"
    is "$(env -u RUNMYSCRIPT_STATE_DIR "$R" config | grep -E '^(state_dir|index_url|find_links) = ')" \
        "$(printf 'state_dir = %s\nindex_url = none\nfind_links = %s' "$RUNMYSCRIPT_STATE_DIR" "$WHEELHOUSE")" \
        "build/runmyscript config: the server's state_dir, index_url and find_links, with no variable set"
    printf 'import PIL\nprint("pillow", PIL.__version__)\n' >$T/pil.py
    env -u RUNMYSCRIPT_STATE_DIR "$R" run $T/pil.py --json >$T/pil.json 2>$T/pil.err
    is "$(jget $T/pil.json 'r["status"], [q.split("==")[0] for q in r["requirements"]]')" '["ok", ["pillow"]]' \
        "build/runmyscript run finds the server's packages (pillow from the wheelhouse), no FIND_LINKS repeated"
else
    skip "build/runmyscript.conf is someone else's (its first line is not quickstart's): quickstart keeps it"
    skip "the command line's keys from quickstart's file"
    skip "the command line's packages from quickstart's file"
fi

# A failed install, as a client of the page and of MCP sees it: what
# failed and that the server cannot provide it; no path of the server
# (neither the wheelhouse nor the state directory) and no key of the
# operator's advice anywhere in the answers.
no_server_path() { # FILE WHAT
    local leak=""
    for w in "$WHEELHOUSE" "$RUNMYSCRIPT_STATE_DIR" "$top_srcdir" index_url find_links doc/configuration.md; do
        grep -qF -- "$w" "$1" && leak="$leak $w"
    done
    is "${leak:-none}" none "$2: names no path of the server and no key of the advice"
}
"$PYTHON3" -c 'import json; print(json.dumps({"code": "import rms_broken\n", "requirements": ["rms-broken"]}))' \
    >$T/broken-body.json
curl -sS -o $T/page-broken.json -H 'Content-Type: application/json' --data-binary @$T/broken-body.json \
    "http://127.0.0.1:$QPORT/api/run"
is "$(jget $T/page-broken.json 'r["status"]')" install_failed "the page's run of a requirement no source has: install_failed"
like "$(jget $T/page-broken.json 'r["error"]')" "No matching distribution found for rms-missing" "its error says what failed"
like "$(jget $T/page-broken.json 'r["error"]')" "this server's package sources do not have it" \
    "and that the server cannot provide it"
no_server_path $T/page-broken.json "/api/run's answer (error, log, installer's log)"
curl -sS -o $T/page-broken.sse -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
    --data-binary @$T/broken-body.json "http://127.0.0.1:$QPORT/api/run"
like "$(cat $T/page-broken.sse)" "install_failed" "the page's event stream of it ends install_failed"
no_server_path $T/page-broken.sse "/api/run's event stream (the installer's lines as they came)"
"$PYTHON3" -c 'import json; print(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run_code", "arguments": {"code": "import rms_broken\n", "requirements": ["rms-broken"]}}}))' \
    >$T/mcp-broken.json
BASE=http://127.0.0.1:$QPORT
init
post @$T/mcp-broken.json -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
is "$(jb 'r["result"]["structuredContent"]["status"]')" install_failed "MCP's run of it: install_failed"
like "$(jb 'r["result"]["content"][0]["text"]')" "this server's package sources do not have it" \
    "its text says that the server cannot provide it"
no_server_path $T/b "MCP's answer (its text, structuredContent and log notifications)"
grep -q "point index_url at an index or find_links at a directory of wheels" $T/qs.log
ok $? "the server's log has the operator's advice"

kill -TERM "$QS"
wait "$QS"
is "$?" 0 "Ctrl-C (SIGTERM) stops quickstart serve"
done_testing
