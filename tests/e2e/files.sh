#!/bin/bash
# Files from and to the outside over MCP: mount_file, run_code's files and
# persist_artifact, with curl and with the official SDK client
# (sdk-client.mjs files), through nginx in front of `runmyscript serve`,
# against a second nginx on loopback that serves the fixtures
# (tests/lib/fixture-server.sh) and takes PUTs. The server allowlists the
# fixtures' address:port only; every other address, loopback included, is
# refused (and never connected to). files-rlimits.sh runs it again in the
# rlimits fallback.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/e2e/lib.sh" || exit 99
. "$top_srcdir/tests/lib/nginx.sh" || exit 99
. "$top_srcdir/tests/lib/fixture-server.sh" || exit 99
need "$NGINX" curl
NGINX_PREFIX=$T/fixtures
NGINX_ON_EXIT=stack_exit
fixture_server_start
U=http://127.0.0.1:$PORT1
FIX_LOG=$NGINX_PREFIX/logs/access.log
# A small fetch_timeout for the slow endpoint (200 KiB at 2 KiB/s), a
# fetch_bytes below data/big.bin and chunked/big.txt (1 MiB each).
STACK_CONF="fetch_allow = 127.0.0.1:$PORT1\nfetch_timeout = 5s\nfetch_bytes = 512K\nmount_root = $T/root\nwrite_bytes = 1K"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
init
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
WS=$T/state/sessions/$SID/workspace
ISO=${RMS_ISOLATION:-namespaces}

# call TOOL ARGS_JSON: tools/call in the session with a progress token; the
# response in $T/b (jb reads the last SSE message: the result).
N=100
call() {
    N=$((N + 1))
    post "{\"jsonrpc\":\"2.0\",\"id\":$N,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2,\"_meta\":{\"progressToken\":\"p$N\"}}}" \
        "${H[@]}"
}
# J PY...: a JSON value built in Python (URLs and paths quoted for us).
J() { "$PYTHON3" -c 'import json, sys; print(json.dumps(eval(sys.argv[1])))' "$1"; }
sc() { jb "r['result']['structuredContent']$1"; }
text() { jb 'r["result"]["content"][0]["text"]'; }
iserr() { jb 'r["result"]["isError"]'; }
no_parts() { ! find "$1" -name '.fetch-*' 2>/dev/null | grep -q .; }
fix_hits() { grep -c "$1" "$FIX_LOG"; }

# --- tools/list
post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${H[@]}"
is "$(jb '[t["name"] for t in r["result"]["tools"]]')" \
    '["run_code", "run_cell", "reset_kernel", "save_kernel", "run_my_script", "list_dir", "preview_file", "mount_file", "write_file", "persist_artifact"]' \
    "tools/list: mount_file and persist_artifact (and serve's kernel tools)"
is "$(jb '[(t["inputSchema"]["required"], sorted(t["outputSchema"]["required"]), t["annotations"]["openWorldHint"]) for t in r["result"]["tools"] if t["name"] in ("mount_file", "persist_artifact")]')" \
    '[[["url", "mount_path"], ["bytes", "mime", "mounted_as", "sha256"], true], [["relative_path", "presigned_url"], ["status", "uploaded_bytes"], true]]' \
    "their input and output schemas, open world"
is "$(jb 'all(p.get("description") for t in r["result"]["tools"] if t["name"] in ("mount_file", "persist_artifact") for p in t["inputSchema"]["properties"].values())')" \
    true "every argument has a description"
is "$(jb '[(f["items"]["required"], f["maxItems"]) for t in r["result"]["tools"] if t["name"] == "run_code" for f in [t["inputSchema"]["properties"]["files"]]][0]')" \
    '[["url", "mountPath"], 1000]' "run_code's files: [{url, mountPath}], at most mount_files"

# --- mount_file: the bytes intact, the result, progress
call mount_file "$(J "{'url': '$U/data/small.bin', 'mount_path': 'data/small.bin'}")"
is "$(iserr):$(sc '["mounted_as"]'):$(sc '["bytes"]'):$(sc '["mime"]')" \
    "false:mounts/data/small.bin:5000:application/octet-stream" "mount_file: {mounted_as, bytes, mime}"
is "$(sc '["sha256"]')" "$(sha $F/data/small.bin)" "sha256 of what was downloaded"
cmp -s $F/data/small.bin $WS/mounts/data/small.bin
ok $? "the bytes landed intact in the session's mounts/"
is "$(stat -c %a $WS/mounts/data/small.bin)" 444 "read-only on disk"
like "$(text)" "mounted $U/data/small.bin as mounts/data/small.bin" "the text says where"
like "$(jb '[m["params"]["message"] for m in msgs if m.get("method") == "notifications/progress"]')" \
    "downloading $U/data/small.bin" "a progress notification names the download"
hits=$(fix_hits "GET /data/small.bin")
call mount_file "$(J "{'url': '$U/data/small.bin', 'mount_path': 'data/small.bin'}")"
is "$(iserr):$(sc '["sha256"]')" "false:$(sha $F/data/small.bin)" "the same URL to the same path again"
is "$(fix_hits "GET /data/small.bin")" "$hits" "is a no-op: no request"
like "$(text)" "already mounted" "and says so"
call mount_file "$(J "{'url': '$U/slow/mid.bin', 'mount_path': 'slow/mid.bin'}")"
is "$(sc '["sha256"]')" "$(sha $F/slow/mid.bin)" "a slow download (4 KiB at 2 KiB/s) lands"
is "$(jb 'len([m for m in msgs if m.get("method") == "notifications/progress" and m["params"]["progress"] > 0])>=1')" \
    true "with byte counts as progress while it comes"

# --- write_file: the client's bytes into mounts/, capped, guarded; and
# mount_file's file://, which only stdio takes (stdio.sh), refused here
# although mount_root is set.
mkdir -p $T/root $T/elsewhere
echo local >$T/root/local.txt
call mount_file "$(J "{'url': 'file://$T/root/local.txt', 'mount_path': 'local.txt'}")"
is "$(iserr)" true "over HTTP mount_file refuses a file:// URL, even beneath mount_root"
like "$(text)" "file:// URLs are taken only over stdio" "saying where it is taken and what to use instead"
[ ! -e "$WS/mounts/local.txt" ]
ok $? "and copies nothing"
call write_file "$(J "{'path': 'client/notes.txt', 'content': 'from the client'}")"
is "$(jb '[r["result"].get("isError", False), r["result"]["structuredContent"]["mounted_as"], r["result"]["structuredContent"]["bytes"]]')" \
    '[false, "mounts/client/notes.txt", 15]' "write_file writes text into mounts/, with its result"
is "$(cat "$WS/mounts/client/notes.txt")" "from the client" "the bytes as sent"
call write_file "$(J "{'path': 'client/one.bin', 'content': 'AAEC/w==', 'encoding': 'base64'}")"
is "$(od -An -tx1 "$WS/mounts/client/one.bin" | tr -d ' ')" "000102ff" "base64, decoded to the bytes"
call write_file "$(J "{'path': 'big.txt', 'content': 'x' * 1025}")"
is "$(iserr)" true "a file past write_bytes is refused"
like "$(text)" "more than write_bytes (1.0 KiB)" "naming the key and its value"
[ ! -e "$WS/mounts/big.txt" ] && no_parts "$WS"
ok $? "and nothing is left of it"
call write_file "$(J "{'path': '../escape.txt', 'content': 'x'}")"
is "$(iserr)" true "a path with '..' is refused"
is "$(text)" "write_file: the path '../escape.txt' is not inside mounts/: give a relative path such as 'data/sales.csv', with no '..' or '.' parts, no empty parts and no leading '/'; nothing was written" \
    "saying what to change"
ln -s $T/elsewhere "$WS/mounts/esc" 2>/dev/null
call write_file "$(J "{'path': 'esc/x.txt', 'content': 'x'}")"
is "$(iserr)" true "a symlink on the way is not followed (a script's, say)"
[ ! -e $T/elsewhere/x.txt ]
ok $? "nothing is written where it points"
rm -f "$WS/mounts/esc"
call write_file "$(J "{'path': 'x.txt', 'content': 'x', 'encoding': 'hex'}")"
is "$(iserr)" true "an unknown encoding is refused"
call write_file "$(J "{'path': 'x.txt', 'content': 'not base64!', 'encoding': 'base64'}")"
like "$(text)" "content is not base64" "and content that is not base64"

# --- run_code files[]: mounted before the run, read-only to the script,
# not artifacts
cat >$T/reader.py <<'PY'
import hashlib, os
print("R csv", open("mounts/in/table.csv").read().replace("\n", "|"))
print("R sha", hashlib.sha256(open("mounts/data/small.bin", "rb").read()).hexdigest())
for name, f in [("append", lambda: open("mounts/data/small.bin", "ab").write(b"x")),
                ("create", lambda: open("mounts/new.txt", "w").write("x")),
                ("unlink", lambda: os.unlink("mounts/in/table.csv"))]:
    try:
        f()
        print("R", name, "succeeded")
    except OSError as e:
        print("R", name, "failed", e.errno)
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "ok.txt"), "w").write("done\n")
PY
hits=$(fix_hits "GET /data/table.csv")
call run_code "$(J "{'code': open('$T/reader.py').read(), 'files': [{'url': '$U/data/table.csv', 'mountPath': 'in/table.csv'}]}")"
is "$(iserr):$(sc '["status"]')" "false:ok" "run_code with files: ran"
LOGS=$(sc '["logs"]')
like "$LOGS" "R csv x,y|1,2|3,4|" "the script reads the file files[] mounted"
like "$LOGS" "R sha $(sha $F/data/small.bin)" "and the one mount_file mounted earlier"
is "$(fix_hits "GET /data/table.csv")" $((hits + 1)) "downloaded once"
is "$(jb '[a["path"] for a in r["result"]["structuredContent"]["artifacts"]]')" '["ok.txt"]' \
    "mounted files are not artifacts"
FB=$("$RUNMYSCRIPT" check-sandbox --set isolation=rlimits --set require_isolation=off |
    sed -n 's/^runs get: *isolation \([^ ]*\) (the fallback.*/\1/p')
is "$(sc '["isolation"]')" "$([ "$ISO" = rlimits ] && echo "$FB" || echo namespaces+seccomp)" "isolation: $ISO"
if [ "$ISO" = rlimits ] && [ "$(id -u)" != 0 ]; then
    skip "the fallback run unprivileged has the server's uid: read-only is not enforced (doc/isolation.md)"
else
    # The jail binds mounts/ read-only (EROFS, 30: the mount refuses,
    # whoever owns the files); the fallback as root runs the script as a uid
    # of its own on 0444 files in directories the server owns (EACCES, 13).
    is "$(grep -c "^R .* failed" <<<"$LOGS")" 3 "append, create and unlink in mounts/ fail"
    if [ "$ISO" = rlimits ]; then
        is "$(grep -c "^R .* failed 13" <<<"$LOGS")" 3 "with EACCES"
    else
        is "$(grep -cE "^R (create|unlink) failed 30" <<<"$LOGS")" 2 "create and unlink with EROFS"
    fi
fi
is "$(sha $WS/mounts/data/small.bin)" "$(sha $F/data/small.bin)" "the mounted file is unchanged"
call run_code "$(J "{'code': 'print(open(\"mounts/in/table.csv\").read())', 'files': [{'url': '$U/data/table.csv', 'mountPath': 'in/table.csv'}]}")"
is "$(iserr):$(fix_hits "GET /data/table.csv")" "false:$((hits + 1))" "files[] again: kept, not fetched again"

# --- persist_artifact
call run_code "$(J "{'code': 'import os\nos.makedirs(os.environ[\"SCRIPT_OUTPUT\"] + \"/plots\", exist_ok=True)\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/plots/plot.bin\", \"wb\").write(os.urandom(30000))'}")"
is "$(iserr)" false "a run writes output/plots/plot.bin"
call persist_artifact "$(J "{'relative_path': 'plots/plot.bin', 'presigned_url': '$U/put/s1/plot.bin?X-Amz-Signature=SECRET1'}")"
is "$(iserr):$(sc '["uploaded_bytes"]'):$(sc '["status"]')" "false:30000:201" "persist_artifact: {uploaded_bytes, status}"
cmp -s $WS/output/plots/plot.bin $DAV/put/s1/plot.bin
ok $? "the PUT landed intact"
like "$(text)" "uploaded output/plots/plot.bin (29.3 KiB) to $U/put/s1/plot.bin: HTTP 201" "the text"
[[ "$(cat $T/b)" != *SECRET1* ]]
ok $? "the presigned URL's query is not echoed"
head -c 100000 /dev/urandom >$WS/output/big.bin
call persist_artifact "$(J "{'relative_path': 'big.bin', 'presigned_url': '$U/put/s1/big.bin?sig=SECRET2'}")"
is "$(iserr)" true "a PUT the server refuses (413): isError"
like "$(text)" "persist_artifact: upload $U/put/s1/big.bin: HTTP 413" "naming the URL and the status"
[[ "$(cat $T/b)" != *SECRET2* ]]
ok $? "without the query"
call persist_artifact "$(J "{'relative_path': 'output/plots/plot.bin', 'presigned_url': '$U/put/s1/x.bin'}")"
like "$(iserr):$(text)" "true:" "a path that is not under output/: isError"
like "$(text)" "leave 'output/' out" "with a hint"

# --- failures: isError with the URL (no query) and the reason; no file
call mount_file "$(J "{'url': '$U/data/big.bin?sig=SECRET3', 'mount_path': 'big.bin'}")"
is "$(iserr)" true "a download over fetch_bytes (Content-Length): isError"
like "$(text)" "fetch $U/data/big.bin: larger than fetch_bytes (512.0 KiB)" "naming the limit"
call mount_file "$(J "{'url': '$U/chunked/big.txt', 'mount_path': 'big.txt'}")"
is "$(iserr)" true "a download that passes fetch_bytes mid-stream (no Content-Length): isError"
like "$(text)" "larger than fetch_bytes" "naming the limit"
[ ! -e $WS/mounts/big.bin ] && [ ! -e $WS/mounts/big.txt ] && no_parts $WS/mounts
ok $? "no file, no partial file is left"
call mount_file "$(J "{'url': '$U/data/missing.bin?X-Amz-Signature=SECRET4&token=SECRET5', 'mount_path': 'm.bin'}")"
is "$(iserr)" true "404: isError"
like "$(text)" "mount_file: fetch $U/data/missing.bin: HTTP 404" "naming the URL and the status"
[[ "$(cat $T/b)" != *SECRET* ]]
ok $? "the query string is in no message"
call mount_file "$(J "{'url': '$U/r5', 'mount_path': 'r5.bin'}")"
is "$(iserr):$(sc '["sha256"]')" "false:$(sha $F/data/small.bin)" "five redirects (fetch_redirects) are followed"
call mount_file "$(J "{'url': '$U/r6', 'mount_path': 'r6.bin'}")"
is "$(iserr)" true "six are not"
like "$(text)" "more than 5 redirects (fetch_redirects)" "naming the limit"
: >$NGINX_PREFIX/logs/port2.log
call mount_file "$(J "{'url': '$U/to-port2', 'mount_path': 'p2.bin'}")"
is "$(iserr)" true "a redirect to a loopback port not in fetch_allow: isError"
like "$(text)" "refused: 127.0.0.1 port $PORT2 is a loopback address" "refused by the guard"
[ ! -s $NGINX_PREFIX/logs/port2.log ] && [ ! -e $WS/mounts/p2.bin ]
ok $? "the other port saw no request; no file"
call mount_file "$(J "{'url': '$U/slow/big.bin', 'mount_path': 'slow.bin'}")"
is "$(iserr)" true "the slow endpoint past fetch_timeout: isError"
like "$(text)" "timed out (fetch_timeout = 5 s)" "naming the limit"
[ ! -e $WS/mounts/slow.bin ] && no_parts $WS/mounts
ok $? "no file, no partial file"
call mount_file "$(J "{'url': 'ftp://127.0.0.1:$PORT1/data/small.bin', 'mount_path': 'f.bin'}")"
like "$(iserr):$(text)" "true:mount_file: ftp://127.0.0.1:$PORT1/data/small.bin" "ftp: isError"
call run_code "$(J "{'code': 'print(1)', 'files': [{'url': '$U/data/table.csv', 'mountPath': 'ok.csv'}, {'url': '$U/data/missing.bin?sig=SECRET6', 'mountPath': 'gone.bin'}]}")"
is "$(iserr)" true "run_code with a file that cannot be fetched: isError"
like "$(text)" "run_code: files[1]: fetch $U/data/missing.bin: HTTP 404; nothing was run" "naming the entry, the URL and the status"
[[ "$(cat $T/b)" != *SECRET6* ]] && [ "$(jb '"structuredContent" in r["result"]')" = false ]
ok $? "no query, and no run result"

# --- paths: no '..', no absolute paths, no symlink escapes
runs_before=$(ls $T/state/runs | wc -l)
for bad in ../escape.bin /etc/evil.bin a/../../escape.bin ./x.bin a//b.bin ""; do
    call mount_file "$(J "{'url': '$U/data/small.bin', 'mount_path': '$bad'}")"
    like "$(iserr):$(text)" "true:mount_file: mount $U/data/small.bin: '$bad' is not a safe relative path" \
        "mount_path '$bad': isError"
    call run_code "$(J "{'code': 'print(1)', 'files': [{'url': '$U/data/small.bin', 'mountPath': '$bad'}]}")"
    like "$(iserr):$(text)" "true:run_code: files[0]: mountPath '$bad' is not a safe path" "files[].mountPath '$bad': isError"
done
is "$(ls $T/state/runs | wc -l)" "$runs_before" "none of them ran anything"
[ ! -e $WS/escape.bin ] && [ ! -e $WS/../escape.bin ] && [ ! -e /etc/evil.bin ]
ok $? "nothing was written outside mounts/"
mkdir -p $T/outside
ln -s $T/outside $WS/mounts/link
call mount_file "$(J "{'url': '$U/data/small.bin', 'mount_path': 'link/x.bin'}")"
like "$(iserr):$(text)" "true:" "a symlink on the way (a script could make one): isError"
like "$(text)" "symlink" "says so"
[ -z "$(ls -A $T/outside)" ]
ok $? "nothing was written through it"
ln -s /etc/passwd $WS/output/passwd
ln -s /etc $WS/output/etc
for bad in passwd etc/passwd ../mounts/data/small.bin /etc/passwd; do
    call persist_artifact "$(J "{'relative_path': '$bad', 'presigned_url': '$U/put/s1/leak.bin'}")"
    is "$(iserr)" true "persist_artifact of '$bad': isError"
done
[ ! -e $DAV/put/s1/leak.bin ]
ok $? "none of them was sent"
call mount_file '{"url": 5, "mount_path": "x"}'
like "$(iserr):$(text)" "true:mount_file: url (an http or https URL) and mount_path" "a URL that is not a string"
call mount_file "$(J "{'url': '$U/data/small.bin', 'mountpath': 'x'}")"
like "$(text)" "unknown argument 'mountpath' (it takes: url, mount_path)" "a misspelt argument"
call run_code "$(J "{'code': 'print(1)', 'files': [{'url': '$U/data/small.bin', 'path': 'x'}]}")"
like "$(text)" "run_code: files[0]: unknown argument 'path' (it takes: url, mountPath)" "a misspelt files[] key"

# --- a notifications/cancelled stops a download in flight
curl -sS -N -o $T/cancel.out -X POST -H 'Content-Type: application/json' "${H[@]}" \
    --data-binary "$(J "{'jsonrpc': '2.0', 'id': 'dl-1', 'method': 'tools/call', 'params': {'name': 'mount_file', 'arguments': {'url': '$U/slow/big.bin', 'mount_path': 'cancelled.bin'}, '_meta': {'progressToken': 'c1'}}}")" \
    "$BASE/mcp" &
cpid=$!
wait_until grep -qs "downloading $U/slow/big.bin: " $T/cancel.out
ok $? "a slow download reports its bytes while it runs"
post '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"dl-1","reason":"changed my mind"}}' "${H[@]}"
wait $cpid
! grep -q '"result"' $T/cancel.out && wait_until grep -q "tools/call mount_file cancelled by the client" $T/serve.log
ok $? "the call ends without a result: the server stopped the transfer"
[ ! -e $WS/mounts/cancelled.bin ] && no_parts $WS/mounts
ok $? "no file, no partial file"

# --- concurrent mounts into one session: eight paths, and two URLs to one
# path
pids=()
for i in 1 2 3 4 5 6 7 8; do
    curl -sS -N -o $T/c$i.out -X POST -H 'Content-Type: application/json' "${H[@]}" \
        --data-binary "$(J "{'jsonrpc': '2.0', 'id': $((200 + i)), 'method': 'tools/call', 'params': {'name': 'mount_file', 'arguments': {'url': '$U/many/f$i.bin', 'mount_path': 'many/f$i.bin'}}}")" \
        "$BASE/mcp" &
    pids+=($!)
done
for i in 7 8; do
    curl -sS -N -o $T/s$i.out -X POST -H 'Content-Type: application/json' "${H[@]}" \
        --data-binary "$(J "{'jsonrpc': '2.0', 'id': $((300 + i)), 'method': 'tools/call', 'params': {'name': 'mount_file', 'arguments': {'url': '$U/many/f$i.bin', 'mount_path': 'same/one.bin'}}}")" \
        "$BASE/mcp" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
bad=0
for i in 1 2 3 4 5 6 7 8; do
    cp $T/c$i.out $T/b
    [ "$(iserr):$(sc '["sha256"]')" = "false:$(sha $F/many/f$i.bin)" ] || bad=$((bad + 1))
    [ "$(sha $WS/mounts/many/f$i.bin)" = "$(sha $F/many/f$i.bin)" ] || bad=$((bad + 1))
done
is $bad 0 "eight concurrent mounts to different paths: each intact, none clobbered"
bad=0
for i in 7 8; do
    cp $T/s$i.out $T/b
    [ "$(iserr)" = false ] || bad=$((bad + 1))
done
got=$(sha $WS/mounts/same/one.bin)
[ $bad = 0 ] && { [ "$got" = "$(sha $F/many/f7.bin)" ] || [ "$got" = "$(sha $F/many/f8.bin)" ]; }
ok $? "two concurrent mounts to one path: both succeed, one whole file is left"
no_parts $WS/mounts
ok $? "no temporary file is left"

# --- the SDK client
MODULES=$top_srcdir/tests/node_modules
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=$(command -v node || true)
if [ -d "$MODULES/@modelcontextprotocol/sdk" ] && [ -n "$NODE" ]; then
    MCP_URL=$BASE/mcp STATE_DIR=$T/state TOP=$top_srcdir FIX_URL=$U DAV=$DAV \
        SHA_MID=$(sha $F/slow/mid.bin) SHA_CSV=$(sha $F/data/table.csv) \
        "$NODE" "$top_srcdir/tests/e2e/sdk-client.mjs" files >$T/sdk.tap 2>&1
    rc=$?
    grep -E '^(not )?ok|^#' $T/sdk.tap | sed -e 's/^ok [0-9]* - /ok 0 - sdk: /' -e 's/^not ok [0-9]* - /not ok 0 - sdk: /' |
        while IFS= read -r l; do echo "# $l"; done
    ok $rc "the SDK client's files scenario ($(grep -c '^ok' $T/sdk.tap) passed, $(grep -c '^not ok' $T/sdk.tap) failed)"
else
    skip "the npm packages are not installed in tests/ (./quickstart test runs npm ci there)"
fi

# --- no fetch_allow: loopback is refused (the same session, a new server)
stack_stop
STACK_CONF="fetch_timeout = 5s\nmount_files = 2"
stack_start serve || { ok 1 "the server starts again"; done_testing; exit 1; }
OLD_SID=$SID
init
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
hits=$(grep -c "GET " "$FIX_LOG")
call mount_file "$(J "{'url': '$U/data/table.csv', 'mount_path': 'other.csv'}")"
is "$(iserr)" true "no fetch_allow: a loopback URL is refused"
like "$(text)" "refused: 127.0.0.1 port $PORT1 is a loopback address; only public addresses are fetched unless fetch_allow lists them" \
    "saying why"
call run_code "$(J "{'code': 'print(1)', 'files': [{'url': 'http://localhost:$PORT1/data/table.csv', 'mountPath': 'other.csv'}]}")"
like "$(iserr):$(text)" "true:run_code: files[0]: fetch http://localhost:$PORT1/data/table.csv: refused" "localhost in files[]: refused, nothing run"
is "$(grep -c "GET " "$FIX_LOG")" "$hits" "the fixture server saw no request"
# The first session again: its mounts outlive the server.
H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $OLD_SID" -H "MCP-Protocol-Version: 2025-11-25")
call run_code "$(J "{'code': 'print(open(\"mounts/in/table.csv\").read())'}")"
like "$(iserr):$(sc '["logs"]')" "false:x,y" "what was mounted before is still there"
call mount_file "$(J "{'url': '$U/data/table.csv', 'mount_path': 'one-more.csv'}")"
like "$(iserr):$(text)" "true:mount_file: mount $U/data/table.csv: the session already has" \
    "a session at mount_files: a new path is refused"
call run_code "$(J "{'code': 'print(1)', 'files': [{'url': '$U/a', 'mountPath': 'a'}, {'url': '$U/b', 'mountPath': 'b'}, {'url': '$U/c', 'mountPath': 'c'}]}")"
is "$(iserr):$(text)" "true:run_code: at most 2 files (mount_files); nothing was run" "more files than mount_files: refused"
is "$(grep -c "GET " "$FIX_LOG")" "$hits" "before anything is fetched"

done_testing
