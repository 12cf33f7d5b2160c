#!/bin/bash
# Shared hosting: the program installed with `make install DESTDIR=...`,
# copied into a cgi-bin as runmyscript.cgi, the page and the shipped
# .htaccess files in a document root, served by Debian's apache2 (mod_cgid,
# mod_rewrite, mod_deflate on, as on a real host) started here as an
# unprivileged user on a free loopback port. The MCP cases, the seed
# example, SSE through Apache, the Authorization header, the places the
# web must not reach, a deployment under a path; once with the namespaces,
# once with the fallback forced.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/install.sh"

APACHE=${APACHE:-/usr/sbin/apache2}
MODS=/usr/lib/apache2/modules
need "$APACHE" curl unzip
for m in mpm_event cgid rewrite mime dir env authz_core deflate filter setenvif; do
    [ -f "$MODS/mod_$m.so" ] || skip_all "apache2's mod_$m is missing"
done

install_tree "$T/inst" || { ok 1 "make install DESTDIR=..."; done_testing; exit 1; }

# The site as a person lays it out from doc/shared-hosting.md.
SITE=$T/site
DOCS=$SITE/htdocs
mkdir -p "$DOCS/cgi-bin" "$SITE/state" "$SITE/apache/run"
cp -R "$INST_DATA/www/." "$DOCS/"
cp "$INST_DATA/apache/htaccess" "$DOCS/.htaccess"
cp "$INST_DATA/apache/cgi-bin.htaccess" "$DOCS/cgi-bin/.htaccess"
cp "$INST_BIN" "$DOCS/cgi-bin/runmyscript.cgi"
# What the web must never see: a state directory someone put in the
# document root, and the configuration next to the program.
mkdir -p "$DOCS/state/runs" && echo secret >"$DOCS/state/runs/x"
cp -R "$WHEELHOUSE" "$SITE/wheels"
conf() { # conf EXTRA-LINES: the configuration next to the program
    printf 'state_dir = %s\nlog_level = info\nindex_url = none\nfind_links = file://%s\n%b\n' \
        "$SITE/state" "$SITE/wheels" "${1:-}" >"$DOCS/cgi-bin/runmyscript.conf"
}
conf

# Apache runs as this user: nobody when we are root (a shared host's web
# server is never root), else ourselves.
if [ "$(id -u)" = 0 ]; then
    WEB_USER=nobody
    chown -R nobody:nogroup "$SITE"
    AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all)
else
    WEB_USER=$(id -un)
    AS=()
fi
PORT=$(free_port)
cat >"$SITE/apache/httpd.conf" <<CONF
ServerRoot $SITE/apache
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile $SITE/apache/run/httpd.pid
DefaultRuntimeDir $SITE/apache/run
Mutex file:$SITE/apache/run default
ScriptSock $SITE/apache/run/cgid.sock
ErrorLog $SITE/apache/error.log
LogLevel warn
$(for m in mpm_event cgid rewrite mime dir env authz_core deflate filter setenvif; do
    echo "LoadModule ${m}_module $MODS/mod_$m.so"; done)
TypesConfig /etc/mime.types
StartServers 1
ServerLimit 2
ThreadsPerChild 16
MaxRequestWorkers 32
# As most hosts do: compress text, server-sent events included (the
# .htaccess's no-gzip keeps it off runmyscript's answers).
AddOutputFilterByType DEFLATE text/html text/plain application/json text/event-stream
DocumentRoot $DOCS
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory $DOCS>
    AllowOverride All
    Require all granted
</Directory>
CONF
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$SITE/apache"

env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "${AS[@]}" "$APACHE" -f "$SITE/apache/httpd.conf" -DFOREGROUND \
    >"$T/apache.out" 2>&1 &
STACK_PIDS="$STACK_PIDS $!"
BASE=http://127.0.0.1:$PORT
wait_for curl -sf "$BASE/healthz" || {
    ok 1 "apache2 starts and routes /healthz to the CGI program"
    cat "$T/apache.out" "$SITE/apache/error.log" 2>/dev/null | sed 's/^/# /'
    done_testing
    exit 1
}
ok 0 "apache2 starts as $WEB_USER and routes /healthz to the CGI program"

# A state directory the CGI user cannot write (made by another user, the
# commonest mistake of a shared host's setup) fails every run: /healthz
# says error, and why, instead of ok.
curl -s -o "$T/health" "$BASE/healthz"
is "$(jget $T/health 'r["status"]')" ok "/healthz: ok while the state directory is writable"
if [ "$(id -u)" = 0 ]; then chown root:root "$SITE/state"; else chmod 555 "$SITE/state"; fi
STATUS=$(curl -sS -o "$T/health" -w '%{http_code}' "$BASE/healthz")
is "$STATUS $(jget $T/health 'r["status"]')" "503 error" "/healthz with a state directory $WEB_USER cannot write: 503, status error"
like "$(jget $T/health 'r["error"]')" "$SITE/state is not writable by uid $(id -u $WEB_USER)" "and the error names the directory and the uid"
if [ "$(id -u)" = 0 ]; then chown nobody:nogroup "$SITE/state"; else chmod 755 "$SITE/state"; fi
curl -s -o "$T/health" "$BASE/healthz"
is "$(jget $T/health 'r["status"]')" ok "ok again once it is"

# The page in chromium: the checks tests/browser/web.mjs makes under nginx,
# live log and Stop included.
MODULES=$top_srcdir/tests/node_modules
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=$(command -v node || echo node)
page_checks() { # page_checks LABEL CONF-LINES
    local label=$1 out=${top_builddir:-$T}/tests/e2e/apache.out/${1%% *}
    if [ ! -d "$MODULES/playwright-core" ] || [ ! -x "$CHROMIUM" ]; then
        skip "$label: the page in chromium: playwright-core or chromium is missing (./quickstart test installs both)"
        return
    fi
    conf "$2\nauth_token = browser-token\ncode_bytes = 64K"
    local pillow=0
    ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1 && pillow=1
    rm -rf "$out" && mkdir -p "$out"
    BASE=$BASE TOKEN=browser-token OUT=$out CHROMIUM=$CHROMIUM HAVE_PILLOW=$pillow \
        "$NODE" "$top_srcdir/tests/browser/web.mjs" >"$T/web.tap" 2>&1
    local rc=$?
    tap_merge "$label: page: " "$T/web.tap"
    ok $rc "$label: the page's checks ran to their end"
    conf "$2"
}

pass() { # pass LABEL CONF-LINES [ISOLATION]: the cases of one isolation mode
    local label=$1 H want=${3:-${1%% *}}
    conf "$2"
    mcp_cases cgi "$label"
    conf "$2\ntask_after = 1s"
    MODERN_STATE=$SITE/state MODERN_DIRECT=1 modern_cases "$label"
    conf "$2"

    # The page is files of the document root.
    STATUS=$(curl -sS -o "$T/page" -w '%{http_code}' "$BASE/")
    is "$STATUS" 200 "$label: the page (DirectoryIndex index.html)"
    like "$(cat "$T/page")" "<html" "$label: is the page"

    # run_my_script with the seed example (pillow from the wheelhouse when
    # there is one, else its standard-library twin).
    init 2025-11-25
    H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
    local seed=$top_srcdir/tests/fixtures/seeds/run_my_script_test.py
    [ -e "$WHEELHOUSE/.no-pillow" ] && seed=$top_srcdir/tests/fixtures/scripts/seed-stdlib.py
    "$PYTHON3" - "$seed" "$top_srcdir/tests/fixtures/seeds/run_my_script_test_input.json" >"$T/seed.json" <<'PY'
import json, sys
print(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                  "params": {"name": "run_my_script", "_meta": {"progressToken": 9},
                             "arguments": {"code": open(sys.argv[1]).read(), "user_input": open(sys.argv[2]).read()}}}))
PY
    post "@$T/seed.json" "${H[@]}"
    is "$(jb 'r["result"]["structuredContent"]["status"], [a["path"] for a in r["result"]["structuredContent"]["artifacts"]]')" \
        '["ok", ["flipped.png"]]' "$label: run_my_script, the seed example: flipped.png ($(basename "$seed"))"
    local url
    url=$(abs "$(jb '[a["url"] for a in r["result"]["structuredContent"]["artifacts"]][0]')")
    curl -sS -o "$T/flipped.png" -D "$T/ph" "$url"
    is "$("$PYTHON3" "$top_srcdir/tests/lib/check_png.py" size "$T/flipped.png" 2>&1)" 256x256 \
        "$label: flipped.png downloads as a 256x256 PNG"
    local run=${url#*/artifacts/}
    cmp -s "$T/flipped.png" "$SITE/state/runs/${run%%/*}/output/flipped.png"
    ok $? "$label: the bytes of the file the script wrote"
    like "$(grep -i '^Content-Type:' "$T/ph")" "image/png" "$label: with its Content-Type"

    # Server-sent events through Apache and mod_deflate: the first line
    # arrives while the script still sleeps.
    post '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import time\nprint(\"early\", flush=True)\ntime.sleep(4)\nprint(\"late\")"},"_meta":{"progressToken":10}}}' "${H[@]}" &
    local curl_pid=$!
    wait_for grep -q '"data":"early"' "$T/b"
    ok $? "$label: a log line streams through Apache while the script runs"
    grep -q '"data":"late"' "$T/b"
    ok $((!$?)) "$label: before the script's end"
    wait "$curl_pid"
    is "$(jb 'r["result"]["structuredContent"]["logs"]')" "early
late" "$label: then the result"
    like "$(jb 'r["result"]["structuredContent"]["isolation"]')" "$want" "$label: the result says which isolation ($want)"
    ! grep -qi '^Content-Encoding' "$T/h"
    ok $? "$label: the stream is not compressed (no-gzip from .htaccess)"

    page_checks "$label" "$2"
}

if "${AS[@]}" env -i PATH=/usr/bin:/bin "$INST_BIN" check-sandbox --set state_dir="$SITE/state" >"$T/cs.out" 2>&1; then
    pass "namespaces (apache)" "isolation = namespaces"
else
    skip "$WEB_USER cannot make the namespaces here: $(head -1 "$T/cs.out")"
fi
# The fallback's name says what it had here (landlock+seccomp where the
# kernel has Landlock): check-sandbox as the web user predicts it.
FB=$("${AS[@]}" env -i PATH=/usr/bin:/bin "$INST_BIN" check-sandbox --set state_dir="$SITE/state" \
    --set isolation=rlimits --set require_isolation=off 2>&1 | sed -n 's/^runs get: *isolation \([^ ]*\) (the fallback.*/\1/p')
pass "rlimits (apache)" "isolation = rlimits\nrequire_isolation = off" "$FB"

# The fallback's attacks through Apache, as a shared host runs it: the CGI
# program runs as the web user, and without Landlock so would the script,
# with the program's configuration, its environment, the state directory,
# Apache's sockets and processes in reach. Each probe is harmless if it
# succeeds (reads, a connect that sends nothing, signal 0).
APACHE_PID=$(cat "$SITE/apache/run/httpd.pid")
TOK=$(new_token)
conf "isolation = rlimits\nrequire_isolation = off"
cat >"$T/ap-attack.py" <<PY
import os, signal, socket, sys
def res(name, reached, detail=""):
    print("R", name, "reached" if reached else "contained", detail)
def read(name, path):
    try:
        with open(path, "rb") as f:
            res(name, True, "%d bytes" % len(f.read()))
    except OSError as e:
        res(name, False, e.strerror)
read("config", "$DOCS/cgi-bin/runmyscript.conf")
read("environ", "/proc/%d/environ" % os.getppid())
try:
    res("state", True, str(len(os.listdir("$SITE/state/runs"))))
except OSError as e:
    res("state", False, e.strerror)
sp = [p for p in sys.path if p.startswith(sys.prefix) and p.endswith("site-packages")]
try:
    os.chmod(sp[0], os.stat(sp[0]).st_mode | 0o700)
    open(os.path.join(sp[0], "rms-evil-$TOK.pth"), "w").write("import sys; sys.stderr.write('PWNED-$TOK\\n')\n")
    res("pth", True)
except (OSError, IndexError) as e:
    res("pth", False, str(e))
for name, fam, addr in (("cgid-socket", socket.AF_UNIX, "$SITE/apache/run/cgid.sock"),
                        ("apache-tcp", socket.AF_INET, ("127.0.0.1", $PORT))):
    try:
        c = socket.socket(fam)
        c.settimeout(3)
        c.connect(addr)
        c.close()
        res(name, True)
    except OSError as e:
        res(name, False, e.strerror)
try:
    os.kill($APACHE_PID, 0)
    res("signal", True)
except OSError as e:
    res("signal", False, e.strerror)
PY
"$PYTHON3" - "$T/ap-attack.py" >"$T/ap-attack.json" <<'PY'
import json, sys
print(json.dumps({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                  "params": {"name": "run_code", "arguments": {"code": open(sys.argv[1]).read()}}}))
PY
init 2025-11-25
post "@$T/ap-attack.json" -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
LOGS=$(jb 'r["result"]["structuredContent"]["logs"]')
is "$(jb 'r["result"]["structuredContent"]["isolation"]')" "$FB" "fallback attacks (apache): the run's isolation"
for probe in config environ state pth cgid-socket apache-tcp signal; do
    line=$(grep "^R $probe " <<<"$LOGS" | head -1)
    like "$line" "R $probe contained" "fallback attacks (apache): $probe${line:+ (${line#R $probe })}"
done
post '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(\"later\")"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
LATER=$(jb 'r["result"]["structuredContent"]["logs"]')
like "$LATER" "later" "fallback attacks (apache): a later run runs"
! grep -q "PWNED-$TOK" <<<"$LATER"
ok $? "fallback attacks (apache): and runs no .pth the attacker left"
find "$SITE/state/envs" -name "rms-evil-$TOK.pth" -delete 2>/dev/null

# What the web must not reach.
for p in cgi-bin/runmyscript.conf state/runs/x "cgi-bin/runmyscript.conf?x=1"; do
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' "$BASE/$p")
    is "$STATUS" 403 "GET /$p: 403"
done
! grep -rq "state_dir" "$T/b"
ok $? "and not the configuration's text"
[ "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/cgi-bin/")" != 200 ]
ok $? "no index of cgi-bin"

# The Authorization header reaches the program (CGIPassAuth).
conf "isolation = rlimits\nrequire_isolation = off\nauth_token = s3cret-token"
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}'
post "$INIT" -H "$ACCEPT_BOTH"
is "$STATUS" 401 "auth_token set: without a token, 401"
post "$INIT" -H "$ACCEPT_BOTH" -H "Authorization: Bearer s3cret-token"
is "$STATUS" 200 "with the token, through Apache: 200"
post "$INIT" -H "$ACCEPT_BOTH" -H "Authorization: Bearer wrong"
is "$STATUS" 401 "a wrong token: 401"

# Under a path: the same files in a subdirectory, public_url naming it.
mkdir -p "$DOCS/tools/rms"
cp -R "$DOCS/cgi-bin" "$DOCS/.htaccess" "$DOCS/index.html" "$DOCS/tools/rms/"
printf 'state_dir = %s\nisolation = rlimits\nrequire_isolation = off\npublic_url = http://127.0.0.1:%s/tools/rms\n' \
    "$SITE/state" "$PORT" >"$DOCS/tools/rms/cgi-bin/runmyscript.conf"
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$DOCS/tools"
BASE=http://127.0.0.1:$PORT/tools/rms
init 2025-11-25
is "$STATUS" 202 "under /tools/rms: initialize"
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/sub.txt\", \"w\").write(\"under a path\")"}}}' \
    -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID"
url=$(abs "$(jb '[a["url"] for a in r["result"]["structuredContent"]["artifacts"]][0]')")
like "$url" "/tools/rms/artifacts/" "under /tools/rms: links carry the path"
like "$(jb '[c["uri"] for c in r["result"]["content"] if c["type"] == "resource_link"][0]')" \
    "http://127.0.0.1:$PORT/tools/rms/artifacts/" "and so do the resource links"
is "$(curl -sS "$url")" "under a path" "and download"

# A CGI program that exits with request body unread makes mod_cgid see a
# reset, and the client loses the answer (the 401s and 403s above).
! grep -q 'AH00574' "$SITE/apache/error.log"
ok $? "Apache saw no reset from the program (it drains a body it refused)"
done_testing
