#!/bin/bash
# Files from and to the outside, end to end against a real nginx on
# 127.0.0.1 (and ::1 where the host has it): `runmyscript fetch`, `upload`,
# `run --input-url` and `run --session --mount`. Every byte of traffic stays
# on loopback; the addresses the guard refuses are never connected to.
# Transfers need no jail: where the host cannot make it, the runs here fall
# back to rlimits (and the jail's own checks say so).
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/nginx.sh" || exit 99
. "$top_srcdir/tests/lib/fixture-server.sh" || exit 99
T=$TEST_TMP
RMS=$RUNMYSCRIPT
fixture_server_start
U=http://127.0.0.1:$PORT1
ALLOW="127.0.0.1:$PORT1"
export RUNMYSCRIPT_FETCH_ALLOW=$ALLOW

# fetch URL DEST [ARGS...]: runs `runmyscript fetch`; OUT, ERR, RC.
fetch() {
    RC=0
    "$RMS" fetch "$@" >$T/out 2>$T/err || RC=$?
    OUT=$(cat $T/out)
    ERR=$(cat $T/err)
}
upload() {
    RC=0
    "$RMS" upload "$@" >$T/out 2>$T/err || RC=$?
    OUT=$(cat $T/out)
    ERR=$(cat $T/err)
}
j() { jget $T/out "$1"; }
no_parts() { ! find "$1" -name '.fetch-*' 2>/dev/null | grep -q .; }

# --- the guard: loopback is refused unless allowlisted ---
mkdir -p $T/dl
RUNMYSCRIPT_FETCH_ALLOW= fetch $U/data/small.bin $T/dl/a.bin
is $RC 66 "loopback, nothing allowlisted: refused (exit 66)"
like "$ERR" "refused: 127.0.0.1 port $PORT1 is a loopback address" "the error names the address and why"
[ ! -e $T/dl/a.bin ] && no_parts $T/dl
ok $? "nothing is written"
! grep -q "small.bin" $NGINX_PREFIX/logs/access.log
ok $? "and nginx never saw the request: the socket was refused before connecting"
RUNMYSCRIPT_FETCH_ALLOW= fetch "http://localhost:$PORT1/data/small.bin" $T/dl/a.bin
is $RC 66 "localhost (127.0.0.1 and ::1) is refused too"
like "$ERR" "loopback address" "as loopback"
fetch $U/data/small.bin $T/dl/a.bin --set fetch_allow=127.0.0.1:$((PORT1 == 65535 ? 1 : PORT1 + 1))
is $RC 66 "an allowlist entry for another port does not allow this one"

# --- downloads land intact ---
fetch $U/data/small.bin $T/dl/a.bin
is $RC 0 "allowlisted (address:port): fetched"
is "$(j 'r["sha256"]')" "$(sha $F/data/small.bin)" "sha256 computed while streaming matches"
is "$(j 'r["bytes"]')" 5000 "bytes"
cmp -s $F/data/small.bin $T/dl/a.bin
ok $? "the bytes landed intact"
fetch $U/data/pixel.png $T/dl/pixel.png
is "$(j 'r["mime"]')" image/png "MIME from the bytes (PNG)"
fetch $U/data/table.csv $T/dl/t.csv
is "$(j 'r["mime"]')" text/csv "MIME from the name (CSV)"
fetch $U/data/big.bin $T/dl/big.bin --set fetch_allow=127.0.0.0/8
is "$(j 'r["sha256"]'):$RC" "$(sha $F/data/big.bin):0" "a CIDR allowlist; 1 MiB intact"
fetch $U/data/small.bin $T/dl/a.bin --set "fetch_allow=10.0.0.0/8, 127.0.0.1"
is $RC 0 "an allowlisted address, any port"

# --- failures: the URL without its query, the status or the curl error ---
echo "old content" >$T/dl/keep.bin
fetch "$U/data/missing.bin?X-Amz-Signature=SECRET123&token=SECRET456" $T/dl/keep.bin
is $RC 66 "404: exit 66"
like "$ERR" "fetch $U/data/missing.bin: HTTP 404" "the error names the URL and the status"
[[ "$ERR" != *SECRET* ]]
ok $? "the query string is not in the error"
is "$(cat $T/dl/keep.bin)" "old content" "a failed download leaves the old file as it was"
no_parts $T/dl
ok $? "and no temporary file"
fetch "http://user:PASSWORD@127.0.0.1:$PORT1/data/missing.bin" $T/dl/x.bin
[[ "$ERR" == *"HTTP 404"* && "$ERR" != *PASSWORD* && "$ERR" != *user* ]]
ok $? "user info is not in the error either: $ERR"
fetch "ftp://127.0.0.1:$PORT1/data/small.bin" $T/dl/x.bin
is $RC 64 "an ftp URL: a usage error (64)"
like "$ERR" "only http:// and https://" "says why"
fetch "file:///etc/passwd" $T/dl/x.bin
is $RC 64 "a file URL is refused"
[ ! -e $T/dl/x.bin ]
ok $? "nothing written"

# --- redirects: bounded, each target checked again ---
fetch $U/r5 $T/dl/r.bin
is "$RC:$(j 'r["sha256"]' 2>/dev/null)" "0:$(sha $F/data/small.bin)" "5 redirects (the default limit) are followed"
fetch "$U/r6?sig=SECRET" $T/dl/r6.bin
is $RC 66 "6 redirects are refused"
like "$ERR" "more than 5 redirects (fetch_redirects)" "naming the limit"
[[ "$ERR" != *SECRET* ]]
ok $? "without the query"
fetch $U/r3 $T/dl/r.bin --set fetch_redirects=3
is $RC 0 "fetch_redirects = 3: 3 redirects are fine"
fetch $U/r4 $T/dl/r.bin --set fetch_redirects=3
is $RC 66 "and 4 are not"
fetch $U/r1 $T/dl/r.bin --set fetch_redirects=0
is $RC 66 "fetch_redirects = 0: a redirect is an error"
like "$ERR" "HTTP 302" "the status is named"
: >$NGINX_PREFIX/logs/port2.log
fetch "$U/to-port2?sig=SECRET" $T/dl/p2.bin
is $RC 66 "a redirect to a loopback port that is not allowlisted: refused"
like "$ERR" "refused: 127.0.0.1 port $PORT2 is a loopback address" "the redirect's address is named"
like "$ERR" "redirected to http://127.0.0.1:$PORT2/data/small.bin" "and where it was sent"
[ ! -s $NGINX_PREFIX/logs/port2.log ] && [ ! -e $T/dl/p2.bin ]
ok $? "the second server never saw a request, nothing was written"
fetch $U/to-port2 $T/dl/p2.bin --set "fetch_allow=127.0.0.1:$PORT1 127.0.0.1:$PORT2"
is "$RC:$(j 'r["sha256"]' 2>/dev/null)" "0:$(sha $F/data/small.bin)" "with both ports allowlisted the same redirect works"
fetch $U/to-ftp $T/dl/f.bin
is $RC 66 "a redirect to ftp:// is refused"
like "$ERR" "scheme other than http or https" "says so"
fetch $U/to-file $T/dl/f.bin
is $RC 66 "a redirect to file:// is refused"
[ ! -e $T/dl/f.bin ]
ok $? "nothing written"

# --- proxies are never used ---
: >$NGINX_PREFIX/logs/port2.log
http_proxy=http://127.0.0.1:$PORT2 HTTP_PROXY=http://127.0.0.1:$PORT2 ALL_PROXY=http://127.0.0.1:$PORT2 \
    all_proxy=http://127.0.0.1:$PORT2 no_proxy= NO_PROXY= \
    fetch $U/data/small.bin $T/dl/px.bin --set "fetch_allow=127.0.0.1:$PORT1 127.0.0.1:$PORT2"
is $RC 0 "with proxy variables set: fetched"
[ ! -s $NGINX_PREFIX/logs/port2.log ]
ok $? "directly: the proxy (a second nginx) saw nothing"

# --- size caps hold, early and mid-stream ---
fetch "$U/data/big.bin?sig=SECRET" $T/dl/capped.bin --set fetch_bytes=64K
is $RC 65 "Content-Length over fetch_bytes: refused (exit 65)"
like "$ERR" "larger than fetch_bytes (64.0 KiB)" "naming the limit"
[[ "$ERR" != *SECRET* ]] && [ ! -e $T/dl/capped.bin ] && no_parts $T/dl
ok $? "nothing left, no query in the error"
curl_hdrs=$("$PYTHON3" - "$U/chunked/big.txt" <<'PY'
import sys, urllib.request
h = urllib.request.urlopen(sys.argv[1]).headers
print(h.get("Content-Length"), h.get("Transfer-Encoding"))
PY
)
is "$curl_hdrs" "None chunked" "the chunked endpoint sends no Content-Length"
fetch $U/chunked/big.txt $T/dl/chunked.txt --set fetch_bytes=64K
is $RC 65 "a chunked body past fetch_bytes: stopped mid-stream"
[ ! -e $T/dl/chunked.txt ] && no_parts $T/dl
ok $? "the temporary file is gone and nothing is left"
fetch $U/chunked/big.txt $T/dl/chunked.txt
is "$RC:$(j 'r["bytes"]' 2>/dev/null)" "0:1048576" "within the cap the chunked body is whole"

# --- timeouts ---
fetch "$U/slow/big.bin?sig=SECRET" $T/dl/slow.bin --set fetch_timeout=1s
is $RC 66 "a slow body past fetch_timeout: fails"
like "$ERR" "timed out (fetch_timeout = 1 s)" "naming the limit"
[[ "$ERR" != *SECRET* ]] && [ ! -e $T/dl/slow.bin ] && no_parts $T/dl
ok $? "nothing left, no query in the error"
# While a download runs, only a temporary file exists; when it fails, not even that.
mkdir -p $T/dl2
"$RMS" fetch $U/slow/big.bin $T/dl2/slow.bin --set fetch_timeout=4s >/dev/null 2>&1 &
SLOW=$!
seen=0
for i in $(seq 1 40); do
    if find $T/dl2 -name '.fetch-*.part' | grep -q .; then seen=1; break; fi
    sleep 0.1
done
final_during=$([ -e $T/dl2/slow.bin ] && echo yes || echo no)
wait $SLOW
is "$seen:$final_during" "1:no" "mid-download: a .fetch-*.part file, and nothing under the final name"
[ -z "$(ls -A $T/dl2)" ]
ok $? "after the timeout: nothing at all"
# A listener whose accept queue is full drops new SYNs: the connect hangs.
"$PYTHON3" - $PORT3 >$T/listener.out 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(0)
fill = []
for _ in range(4):
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    fill.append(c)
time.sleep(0.3)
print("ready", flush=True)
time.sleep(60)
PY
LISTENER=$!
for i in $(seq 1 50); do grep -q ready $T/listener.out 2>/dev/null && break; sleep 0.1; done
fetch http://127.0.0.1:$PORT3/x $T/dl/c.bin --set fetch_allow=127.0.0.1:$PORT3 --set fetch_connect_timeout=500ms
is $RC 66 "a connection that never completes: fails"
like "$ERR" "timed out (fetch_connect_timeout = 0.5 s)" "naming fetch_connect_timeout"
kill $LISTENER 2>/dev/null
wait $LISTENER 2>/dev/null

# --- IPv6 loopback ---
if [ $has_ipv6 = 1 ]; then
    fetch "http://[::1]:$PORT4/data/small.bin" $T/dl/v6.bin
    is $RC 66 "::1 is refused by default"
    like "$ERR" "[::1] port $PORT4 is a loopback address" "as loopback"
    fetch "http://[::1]:$PORT4/data/small.bin" $T/dl/v6.bin --set "fetch_allow=[::1]:$PORT4"
    is "$RC:$(j 'r["sha256"]' 2>/dev/null)" "0:$(sha $F/data/small.bin)" "[::1]:port allowlisted: fetched"
else
    skip "no IPv6 loopback on this host"
    skip "no IPv6 loopback on this host"
    skip "no IPv6 loopback on this host"
fi

# --- https: the certificate is verified ---
if [ $has_tls = 1 ]; then
    fetch "https://127.0.0.1:$PORT5/data/small.bin?sig=SECRET" $T/dl/tls.bin --set fetch_allow=127.0.0.1:$PORT5
    is $RC 66 "https with a self-signed certificate: refused"
    like "$ERR" "fetch https://127.0.0.1:$PORT5/data/small.bin: SSL certificate problem" "by certificate verification"
    [[ "$ERR" != *SECRET* ]] && [ ! -e $T/dl/tls.bin ] && [ ! -s $NGINX_PREFIX/logs/tls.log ]
    ok $? "no request was sent, nothing written, no query in the error"
else
    skip "openssl cannot make a test certificate here"
    skip "openssl cannot make a test certificate here"
    skip "openssl cannot make a test certificate here"
fi

# --- sessions: mounts ---
S=$T/session
fetch --session $S $U/data/small.bin data/small.bin
is "$RC:$(j 'r["mounted_as"]'):$(j 'r["reused"]')" "0:mounts/data/small.bin:false" "mounted into mounts/"
is "$(j '[r["bytes"], r["sha256"], r["mime"]]')" "[5000, \"$(sha $F/data/small.bin)\", \"application/octet-stream\"]" \
    "{mounted_as, bytes, sha256, mime}"
cmp -s $F/data/small.bin $S/workspace/mounts/data/small.bin
ok $? "the bytes are in the workspace"
is "$(stat -c %a $S/workspace/mounts/data/small.bin)" 444 "read-only on disk"
[ -f $S/mounts.json ] && [ ! -e $S/workspace/mounts.json ]
ok $? "the record lives next to the workspace, not in it"
before=$(grep -c "GET /data/small.bin" $NGINX_PREFIX/logs/access.log)
fetch --session $S $U/data/small.bin data/small.bin
is "$RC:$(j 'r["reused"]'):$(j 'r["sha256"]')" "0:true:$(sha $F/data/small.bin)" "the same URL to the same path: a no-op"
is "$(grep -c "GET /data/small.bin" $NGINX_PREFIX/logs/access.log)" "$before" "no request was made"
fetch --session $S $U/data/pixel.png data/small.bin
is "$RC:$(j 'r["reused"]'):$(j 'r["mime"]')" "0:false:image/png" "another URL to the same path replaces it"
fetch --session $S "$U/data/pixel.png?v=2" data/small.bin
is "$(j 'r["reused"]')" false "the query is part of the URL"
rm -f $S/workspace/mounts/data/small.bin
fetch --session $S "$U/data/pixel.png?v=2" data/small.bin
is "$RC:$(j 'r["reused"]')" "0:false" "a file that is gone is fetched again"
grep -q "v=2" $S/mounts.json
ok $((! $?)) "the record keeps no query (it may hold a signature)"

for bad in ../escape.bin /etc/evil.bin a/../../escape.bin ./x.bin a//b.bin ""; do
    fetch --session $S $U/data/small.bin "$bad"
    is $RC 64 "mount path '$bad' is refused (64)"
done
[ ! -e $S/workspace/escape.bin ] && [ ! -e $T/escape.bin ] && [ ! -e /etc/evil.bin ]
ok $? "nothing was written outside mounts/"
mkdir -p $T/outside
ln -s $T/outside $S/workspace/mounts/link
fetch --session $S $U/data/small.bin link/x.bin
is $RC 66 "a symlink on the mount path is refused"
like "$ERR" "symlink" "says so"
[ -z "$(ls -A $T/outside)" ]
ok $? "nothing was written through it"
S2=$T/session2
mkdir -p $S2/workspace
ln -s $T/outside $S2/workspace/mounts
fetch --session $S2 $U/data/small.bin x.bin
is $RC 66 "mounts/ itself a symlink: refused"
[ -z "$(ls -A $T/outside)" ]
ok $? "nothing was written through it"

# Concurrent mounts into one session, and two of the same path.
S3=$T/session3
pids=()
for i in 1 2 3 4 5 6 7 8; do
    "$RMS" fetch --session $S3 $U/many/f$i.bin "many/f$i.bin" >$T/c$i.out 2>$T/c$i.err &
    pids+=($!)
done
for i in 1 2; do
    "$RMS" fetch --session $S3 $U/data/big.bin "same/big.bin" >$T/s$i.out 2>$T/s$i.err &
    pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait $p || fails=$((fails + 1)); done
is $fails 0 "ten concurrent mounts into one session all succeed"
bad=0
for i in 1 2 3 4 5 6 7 8; do
    [ "$(sha $S3/workspace/mounts/many/f$i.bin)" = "$(sha $F/many/f$i.bin)" ] || bad=$((bad + 1))
    [ "$(jget $T/c$i.out 'r["sha256"]')" = "$(sha $F/many/f$i.bin)" ] || bad=$((bad + 1))
done
is $bad 0 "each landed intact, none clobbered another"
is "$(sha $S3/workspace/mounts/same/big.bin)" "$(sha $F/data/big.bin)" "the two mounts of one path left it whole"
is "$(jget $S3/mounts.json 'len(r["mounts"])')" 9 "the record has the nine paths"
no_parts $S3
ok $? "no temporary file is left"

# Session limits.
S4=$T/session4
fetch --session $S4 $U/data/small.bin a.bin --set mount_files=2
fetch --session $S4 $U/data/table.csv b.csv --set mount_files=2
is $RC 0 "mount_files = 2: two files"
fetch --session $S4 $U/data/pixel.png c.png --set mount_files=2
is $RC 65 "a third is refused (65)"
like "$ERR" "mount_files" "naming mount_files"
fetch --session $S4 $U/data/pixel.png a.bin --set mount_files=2
is $RC 0 "replacing one of the two is fine"
S5=$T/session5
fetch --session $S5 $U/data/small.bin a.bin --set mount_bytes=8K
is $RC 0 "mount_bytes = 8K: 5000 bytes fit"
fetch --session $S5 $U/chunked/big.txt b.txt --set mount_bytes=8K
is $RC 65 "the next file passes it mid-stream: refused"
like "$ERR" "mount_bytes" "naming mount_bytes"
[ ! -e $S5/workspace/mounts/b.txt ] && no_parts $S5
ok $? "nothing left of it"

# --- a script in the jail cannot write into mounts/ ---
cat >$T/tamper.py <<'PY'
import hashlib, os
p = "mounts/data/small.bin"
print("R sha", hashlib.sha256(open(p, "rb").read()).hexdigest())
def attempt(name, f):
    try:
        f()
        print("R", name, "succeeded")
    except OSError as e:
        print("R", name, "failed", e.errno)
attempt("append", lambda: open(p, "ab").write(b"x"))
attempt("create", lambda: open("mounts/new.txt", "w").write("x"))
attempt("unlink", lambda: os.unlink(p))
attempt("rename", lambda: os.rename(p, "mounts/data/moved.bin"))
attempt("chmod", lambda: os.chmod(p, 0o666))
attempt("mkdir", lambda: os.mkdir("mounts/sub"))
attempt("symlink", lambda: os.symlink("/etc/passwd", "mounts/passwd"))
attempt("move-mounts", lambda: os.rename("mounts", "mounts-gone"))
open("output/ok.txt", "w").write("the rest of the workspace is writable\n")
PY
S6=$T/session6
RC=0
"$RMS" run $T/tamper.py --session $S6 --mount "data/small.bin=$U/data/small.bin?sig=SECRET" --json \
    >$T/tamper.json 2>$T/tamper.err || RC=$?
is $RC 0 "run --session --mount: the script ran"
LOGS=$(jget $T/tamper.json 'r["logs"]')
iso=$(jget $T/tamper.json 'r["isolation"]')
like "$LOGS" "R sha $(sha $F/data/small.bin)" "the script reads the mounted file"
if [ "$iso" = "namespaces+seccomp" ]; then
    for a in append move-mounts; do
        like "$LOGS" "R $a failed" "in the jail, $a fails"
    done
    # EROFS (30), not a permission: the mount itself is read-only, whoever
    # owns the files.
    for a in create unlink rename chmod mkdir symlink; do
        like "$LOGS" "R $a failed 30" "in the jail, $a in mounts/ fails with EROFS"
    done
else
    skip "this host cannot make the jail: the read-only bind of mounts/ is not tested here"
fi
is "$(sha $S6/workspace/mounts/data/small.bin)" "$(sha $F/data/small.bin)" "the mounted file is unchanged"
is "$(cat $S6/workspace/output/ok.txt)" "the rest of the workspace is writable" "output/ is still writable"
[[ "$(cat $T/tamper.json $T/tamper.err)" != *SECRET* ]]
ok $? "the mount's query string is nowhere in the output"

# The rlimits fallback cannot bind mounts/ read-only: it takes the write bits
# off its files before the run (a speed bump: the script has our uid there).
cat >$T/mode.py <<'PY'
import os
print("R mode %o" % (os.stat("mounts/data/small.bin").st_mode & 0o777))
PY
chmod 644 $S6/workspace/mounts/data/small.bin
RC=0
RUNMYSCRIPT_ISOLATION=rlimits RUNMYSCRIPT_REQUIRE_ISOLATION=off \
    "$RMS" run $T/mode.py --session $S6 --json >$T/mode.json 2>$T/mode.err || RC=$?
# The fallback's name says what it had here (landlock+seccomp where the
# kernel has Landlock): check-sandbox predicts it.
FB=$("$RMS" check-sandbox --set isolation=rlimits --set require_isolation=off |
    sed -n 's/^runs get: *isolation \([^ ]*\) (the fallback.*/\1/p')
is "$RC:$(jget $T/mode.json 'r["isolation"]')" "0:$FB" "a run of the session in the rlimits fallback ($FB)"
like "$(jget $T/mode.json 'r["logs"]')" "R mode 444" "the fallback took the write bits off the mounted file first"
if [ "$(id -u)" = 0 ]; then
    # As root the fallback's script has a uid of its own, and mounts/ stays
    # the server's: permissions refuse what the read-only bind refuses in
    # the jail. The workspace itself is the script's, so it can move
    # mounts/ away; a mount into the one it makes instead is refused.
    RC=0
    RUNMYSCRIPT_ISOLATION=rlimits RUNMYSCRIPT_REQUIRE_ISOLATION=off \
        "$RMS" run $T/tamper.py --session $S6 --json >$T/tamper2.json 2>$T/tamper2.err || RC=$?
    LOGS=$(jget $T/tamper2.json 'r["logs"]')
    for a in append create unlink rename mkdir symlink; do
        like "$LOGS" "R $a failed 13" "the fallback as root: $a in mounts/ fails with EACCES"
    done
    like "$LOGS" "R chmod failed 1" "the fallback as root: chmod fails with EPERM (not the owner)"
    is "$(sha $S6/workspace/mounts-gone/data/small.bin)" "$(sha $F/data/small.bin)" "the file is unchanged"
    like "$LOGS" "R move-mounts succeeded" "(the script can rename mounts/ itself: the workspace is its own)"
    # What the script could make in its place (the uids go back to the
    # server after a run, so stand in another one).
    mkdir $S6/workspace/mounts && chown 65534 $S6/workspace/mounts
    fetch --session $S6 $U/data/small.bin data/small.bin
    is $RC 66 "a mounts/ that is not the server's is refused"
    like "$ERR" "does not belong to the server" "says so"
    rmdir $S6/workspace/mounts && mv $S6/workspace/mounts-gone $S6/workspace/mounts
else
    skip "the fallback run unprivileged shares the server's uid: read-only cannot be enforced (doc/isolation.md)"
fi
is "$(sha $S6/workspace/mounts/data/small.bin)" "$(sha $F/data/small.bin)" "the mounted file is unchanged"

# --- uploads ---
mkdir -p $S6/workspace/output/plots
head -c 30000 /dev/urandom >$S6/workspace/output/plots/plot.bin
upload --session $S6 plots/plot.bin $U/put/run1/plot.bin
is "$RC:$OUT" "0:{\"uploaded_bytes\":30000,\"status\":201}" "persist: {uploaded_bytes, status} (201 Created)"
cmp -s $S6/workspace/output/plots/plot.bin $NGINX_PREFIX/dav/put/run1/plot.bin
ok $? "the bytes arrived intact"
upload --session $S6 plots/plot.bin $U/put/run1/plot.bin
is "$RC:$(j 'r["status"]')" "0:204" "again: 204 (replaced)"
upload $F/data/small.bin $U/put/plain.bin
is "$RC:$(j 'r["uploaded_bytes"]')" "0:5000" "upload of a plain file"
is "$(grep ' /put/plain.bin ' $NGINX_PREFIX/logs/put.log | tail -1)" "PUT /put/plain.bin application/octet-stream" \
    "its Content-Type: its MIME type (bytes of no known kind)"
cp $F/data/pixel.png $S6/workspace/output/plots/pixel.png
upload --session $S6 plots/pixel.png $U/put/run1/pixel.png
is "$RC:$(grep ' /put/run1/pixel.png ' $NGINX_PREFIX/logs/put.log | tail -1)" "0:PUT /put/run1/pixel.png image/png" \
    "a PNG is sent as image/png (a presigned URL may be signed with its type)"
upload --session $S6 plots/plot.bin $U/put/run1/capped.bin --set upload_bytes=16K
is $RC 65 "a file over upload_bytes: refused (65)"
like "$ERR" "larger than upload_bytes" "naming the limit"
[ ! -e $NGINX_PREFIX/dav/put/run1/capped.bin ]
ok $? "nothing was sent"
head -c 100000 /dev/urandom >$S6/workspace/output/big.bin
upload --session $S6 big.bin "$U/put/run1/big.bin?X-Signature=SECRET"
is $RC 66 "the server's own cap (client_max_body_size): fails"
like "$ERR" "upload $U/put/run1/big.bin: HTTP 413" "with the URL and the status"
[[ "$ERR" != *SECRET* ]]
ok $? "without the query"
upload --session $S6 plots/plot.bin "$U/data/readonly.bin?sig=SECRET"
like "$RC:$ERR" "66:" "a server that refuses PUT: fails"
like "$ERR" "HTTP 405" "HTTP 405"
ln -s /etc/passwd $S6/workspace/output/passwd
upload --session $S6 passwd $U/put/run1/passwd
is $RC 66 "a symlink in output/ is not uploaded"
ln -s /etc $S6/workspace/output/etc
upload --session $S6 etc/passwd $U/put/run1/passwd2
is $RC 66 "nor a file through a symlinked directory"
upload --session $S6 ../mounts/data/small.bin $U/put/run1/up.bin
is $RC 64 "'..' is refused"
upload --session $S6 /etc/passwd $U/put/run1/abs.bin
is $RC 64 "an absolute path is refused"
[ ! -e $NGINX_PREFIX/dav/put/run1/passwd ] && [ ! -e $NGINX_PREFIX/dav/put/run1/passwd2 ] &&
    [ ! -e $NGINX_PREFIX/dav/put/run1/up.bin ] && [ ! -e $NGINX_PREFIX/dav/put/run1/abs.bin ]
ok $? "none of them reached the server"
RUNMYSCRIPT_FETCH_ALLOW= upload --session $S6 plots/plot.bin $U/put/run1/refused.bin
is $RC 66 "an upload to loopback, not allowlisted: refused"
like "$ERR" "loopback address" "by the guard"

# --- run --input-url ---
cat >$T/input.py <<'PY'
import hashlib, os
data = open(os.environ["SCRIPT_INPUT"], "rb").read()
print("R", len(data), hashlib.sha256(data).hexdigest())
PY
run_json $T/in.json $T/input.py --input-url $U/data/small.bin
is "$RC:$(jget $T/in.json 'r["logs"]' | tr -d '\n')" "0:R 5000 $(sha $F/data/small.bin)" \
    "--input-url: the script gets the exact bytes"
RC=0
"$RMS" run $T/input.py --input-url "$U/data/big.bin?sig=SECRET" --set input_bytes=64K >$T/in2.out 2>$T/in2.err || RC=$?
is $RC 65 "an input past input_bytes: 65, before anything runs"
like "$(cat $T/in2.err)" "larger than input_bytes" "naming input_bytes"
RC=0
RUNMYSCRIPT_FETCH_ALLOW= "$RMS" run $T/input.py --input-url "$U/data/small.bin?sig=SECRET" >$T/in3.out 2>$T/in3.err || RC=$?
is $RC 66 "--input-url to a refused address: 66"
[[ "$(cat $T/in3.err)" == *"refused"* && "$(cat $T/in3.err)" != *SECRET* ]]
ok $? "refused, without the query"
RC=0
"$RMS" run $T/input.py --input-url "$U/data/small.bin" --input-text x >/dev/null 2>&1 || RC=$?
is $RC 64 "--input-url with --input-text: usage error"

# --- the configuration ---
"$RMS" config --set "fetch_allow=127.0.0.1:8080 [::1]:8443" --set fetch_bytes=1M >$T/cfg.txt
grep -q '^fetch_allow = 127.0.0.1:8080 \[::1\]:8443$' $T/cfg.txt && grep -q '^fetch_bytes = 1M$' $T/cfg.txt &&
    grep -q '^upload_bytes = 20M$' $T/cfg.txt && grep -q '^fetch_timeout = 2m$' $T/cfg.txt
ok $? "runmyscript config shows the fetch keys"
RC=0
"$RMS" config --set fetch_allow=localhost >/dev/null 2>$T/cfg.err || RC=$?
is $RC 78 "a host name in fetch_allow is a configuration error"
like "$(cat $T/cfg.err)" "fetch_allow: 'localhost'" "naming the entry"
RC=0
"$RMS" config --set fetch_redirects=51 >/dev/null 2>&1 || RC=$?
is $RC 78 "fetch_redirects past its range is refused"

done_testing
