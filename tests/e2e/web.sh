#!/bin/bash
# /api/run, the web page's door, with curl through a real nginx in front of
# `runmyscript serve`: the multipart form (fields, uploaded input bytes,
# input from a URL, requirements, timeout), the answers (SSE events, the
# HTML result page, JSON), every form_* limit and malformed bodies (413 and
# 400 with the reason), the token, Stop from another request, a client that
# goes away, and the stream and Stop again as a CGI program.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"

TOKEN=web-token
STACK_CONF="auth_token = $TOKEN\nrequest_bytes = 256K\nform_fields = 5\nform_header_bytes = 1K\nform_field_bytes = 16K\nform_file_bytes = 40K\ninput_bytes = 50K\ncode_bytes = 8K\nfetch_allow = 127.0.0.0/8"
STACK_MAX_BODY=1m
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
AUTH="Authorization: Bearer $TOKEN"
SSE="Accept: text/event-stream"

# form ARGS...: POSTs a multipart form to /api/run (curl -F ARGS); status in
# $STATUS, body in $T/b, headers in $T/h.
form() {
    STATUS=$(curl -sS -N -o "$T/b" -D "$T/h" -w '%{http_code}' -H "$AUTH" "$@" "$BASE/api/run")
}
# events NAME: the data of every SSE event NAME in $T/b, as a JSON list.
events() {
    "$PYTHON3" - "$T/b" "$1" <<'PY'
import json, sys
ev, out = None, []
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if line.startswith("event: "):
        ev = line[7:]
    elif line.startswith("data: ") and ev == sys.argv[2]:
        out.append(json.loads(line[6:]))
print(json.dumps(out))
PY
}
ev() { # ev NAME EXPR: EXPR on the list of NAME events (e)
    "$PYTHON3" -c 'import json, sys; e = json.loads(sys.argv[1]); v = eval(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v))' \
        "$(events "$1")" "$2"
}

# --- SSE: the page's way
cat >"$T/s1.py" <<'EOF'
import os, sys
print("out line", flush=True)
print("err line", file=sys.stderr, flush=True)
print("caf\u00e9 " * 3, flush=True)
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "a.txt"), "w").write("hi\n")
EOF
form -H "$SSE" -F "code=<$T/s1.py" -F input= -F input_url= -F requirements= -F timeout=
is "$STATUS" 200 "multipart + Accept: text/event-stream: 200"
like "$(header Content-Type)" "text/event-stream" "an event stream"
RID=$(ev run 'e[0]["run_id"]')
[[ "$RID" =~ ^[0-9a-f]{32}$ ]]
ok $? "the first events name the run ($RID)"
is "$(ev run 'e[0]["cancel_url"]')" "api/run/$RID/cancel" "with its cancel URL, relative to the page"
is "$(head -1 "$T/b")" "event: phase" "the very first event is the queued phase (before the run exists)"
is "$(ev phase '[p["phase"] for p in e if p["phase"] in ("queued","running","collecting","done")]')" \
    '["queued", "running", "collecting", "done"]' "phase events: queued, running, collecting, done"
is "$(ev log '"".join(x["text"] for x in e if x["stream"] == "stdout")')" "out line
café café café " "stdout chunks, UTF-8 intact"
# (print() may write the line and its newline as two chunks: joined.)
is "$(ev log '"".join(x["text"] for x in e if x["stream"] == "stderr")')" 'err line' "stderr chunks with their stream"
is "$(ev result 'e[0]["status"], e[0]["run_id"], [a["path"] for a in e[0]["artifacts"]], e[0]["zip_url"]')" \
    "[\"ok\", \"$RID\", [\"a.txt\"], \"/artifacts/$RID.zip\"]" "the result event: the result JSON"

# --- JSON still works
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    -d '{"code":"import sys\nprint(sys.stdin.read())","input":"from json","requirements":[],"timeout":5}' "$BASE/api/run")
is "$STATUS/$(jb 'r["status"], r["logs"]')" '200/["ok", "from json\n"]' "a JSON body: the result JSON"
form -F 'code=print(2)'
is "$STATUS/$(jb 'r["status"]')" "200/ok" "multipart with Accept */* (curl): the result JSON"
like "$(header Content-Type)" "application/json" "as application/json"

# --- HTML: the no-JavaScript path
form -H 'Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' -F "code=<$T/s1.py" -F input=
is "$STATUS" 200 "Accept: text/html (a browser's form post): 200"
like "$(header Content-Type)" "text/html" "an HTML page"
like "$(cat "$T/b")" 'Status: <strong>ok</strong>' "the page has the status line"
like "$(cat "$T/b")" '<span class="stderr">err line' "the log, stderr set apart"
like "$(grep -o 'href="../artifacts/[0-9a-f]*/a.txt"' "$T/b")" "../artifacts/" "a relative link to each file"
HREF=$(grep -o 'href="../artifacts/[0-9a-f]*.zip"' "$T/b" | sed 's/href="..//; s/"$//')
STATUS=$(curl -sS -o "$T/z.zip" -w '%{http_code}' "$BASE$HREF")
is "$STATUS/$(unzip -Z1 "$T/z.zip" 2>/dev/null)" "200/a.txt" "the page's zip link downloads the files"
form -H 'Accept: text/html' -F 'code='
is "$STATUS" 400 "an empty script, HTML: 400"
like "$(cat "$T/b")" '<p class="error" role="alert">400' "a readable page, not a blank one"

# --- the input: text, an uploaded file (bytes as they are), a URL
cat >"$T/hash.py" <<'EOF'
import hashlib, os, sys
d = open(os.environ["SCRIPT_INPUT"], "rb").read()
print(len(d), hashlib.sha256(d).hexdigest(), hashlib.sha256(sys.stdin.buffer.read()).hexdigest() == hashlib.sha256(d).hexdigest())
EOF
"$PYTHON3" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 40 + b"\r\n--XyZ\r\n\0\r\n")' >"$T/in.bin"
WANT="$(wc -c <"$T/in.bin") $(sha256sum "$T/in.bin" | cut -d' ' -f1) True"
form -F "code=<$T/hash.py" -F input= -F "input_file=@$T/in.bin;type=application/octet-stream" -F input_url=
is "$STATUS/$(jb 'r["logs"].strip()')" "200/$WANT" "an uploaded file: its bytes (CR, LF, NUL) are SCRIPT_INPUT and stdin"
form -F "code=<$T/hash.py" -F 'input_file=@/dev/null;filename=' -F 'input=typed'
is "$(jb 'r["logs"].split()[0]')" 5 "no file chosen (an empty file part): the text box is the input"
URL="$BASE/examples/run_my_script_test_input.json"
form -F "code=<$T/hash.py" -F "input_url=$URL"
is "$STATUS/$(jb 'r["logs"].split()[1]')" "200/$(sha256sum "$top_srcdir/www/examples/run_my_script_test_input.json" | cut -d' ' -f1)" \
    "input_url: fetched (fetch_to_memory) and given as the input"
form -F "code=<$T/hash.py" -F "input_url=http://192.168.77.1/x"
is "$STATUS" 400 "input_url to a private address that is not allowed: 400"
like "$(jb 'r["error"]')" "input_url:" "the fetch guard's reason, named"
form -F "code=<$T/hash.py" -F "input_url=$BASE/no-such-file"
is "$STATUS" 502 "input_url that answers 404: 502"
form -F "code=<$T/hash.py" -F "input=a" -F "input_url=$URL"
is "$STATUS" 400 "two ways of giving the input at once: 400"
like "$(jb 'r["error"]')" "one way" "saying so"

# --- requirements and timeout
form -F 'code=print(1)' -F $'requirements=# a comment\n\n--index-url http://x\n'
is "$STATUS" 400 "an installer option in the requirements: 400 before anything runs"
form -F 'code=print(1)' -F $'requirements=no-such-dist-rms-web==1.0\n'
is "$STATUS/$(jb 'r["status"]')" "200/install_failed" "a requirement that cannot be installed: install_failed"
form --form-string 'code=import time; time.sleep(20)' -F timeout=1
is "$STATUS/$(jb 'r["status"]')" "200/timeout" "timeout=1 stops a long script: status timeout"
form -F 'code=print(1)' -F timeout=abc
is "$STATUS" 400 "a timeout that is not a number: 400"
form -F 'code=print(1)' -F timeout=100000
like "$STATUS $(jb 'r["error"]')" "400 the timeout must be" "a timeout past the server's: 400 with the reason"

# --- limits: 413 naming the key
form -F 'code=print(1)' -F input= -F input_url= -F requirements= -F timeout= -F 'input_file=@/dev/null;filename='
like "$STATUS $(jb 'r["error"]')" "413 the form has more than form_fields" "6 parts past form_fields = 5: 413 naming it"
form -F 'code=print(1)' -F "requirements=$(head -c 17000 /dev/zero | tr '\0' a)"
like "$STATUS $(jb 'r["error"]')" "413 the field \"requirements\" is larger than form_field_bytes" "a field past form_field_bytes: 413"
head -c 45000 /dev/zero >"$T/big.bin"
form -F 'code=print(1)' -F "input_file=@$T/big.bin"
like "$STATUS $(jb 'r["error"]')" "413 the file \"input_file\" is larger than form_file_bytes" "a file past form_file_bytes: 413"
"$PYTHON3" -c 'import json; print(json.dumps({"code": "print(1)", "input": "x" * 60000}))' >"$T/mid.json"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' --data-binary "@$T/mid.json" "$BASE/api/run")
like "$STATUS $(jb 'r["error"]')" "413 \"input\" is larger than input_bytes (50.0 KiB)" "an input past input_bytes: 413, with the limit's value"
head -c 9000 /dev/zero | tr '\0' '#' >"$T/long.py"
form -F "code=<$T/long.py"
like "$STATUS $(jb 'r["error"]')" "413 the field \"code\" is larger than code_bytes (8.0 KiB)" "a script past code_bytes: 413, with the limit's value"
form -F 'code=print(1)' -H "X-Pad: 1" -F "input=x;headers=\"X-Long: $(head -c 1500 /dev/zero | tr '\0' h)\""
like "$STATUS $(jb 'r["error"]')" "413 a part's headers are larger than form_header_bytes" "part headers past form_header_bytes: 413"
head -c 300000 /dev/zero >"$T/huge.bin"
form -F "code=print(1)" -F "input_file=@$T/huge.bin"
like "$STATUS $(jb 'r["error"]')" "413 the request is larger than request_bytes (256.0 KiB)" "a body past request_bytes: 413, with its value"

# --- malformed bodies: 400 with the reason
mp() { # mp BODY: a raw multipart body with boundary XyZ
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: multipart/form-data; boundary=XyZ' \
        --data-binary "$1" "$BASE/api/run")
}
mp $'--XyZ\r\nContent-Disposition: form-data; name="code"\r\n\r\nprint(1)\r\n'
like "$STATUS $(jb 'r["error"]')" "400 the body ends without the closing boundary" "missing final boundary: 400"
mp $'--XyZ\r\nContent-Disposition: form-data; name="code"\r\n\r\nprint(1)\r\n--XyZ--\r\n'
is "$STATUS/$(jb 'r["status"]')" "200/ok" "the same body with its final boundary runs"
mp $'--XyZ\r\nContent-Disposition: form-data; name="nope"\r\n\r\nx\r\n--XyZ--'
like "$STATUS $(jb 'r["error"]')" "400 unknown field \"nope\"" "an unknown field: 400, naming it"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' --data-binary '{"code": "print(1)", "bogus": 1}' "$BASE/api/run")
like "$STATUS $(jb 'r["error"]')" "400 unknown member \"bogus\"" "an unknown member of a JSON body: 400, naming it"
mp $'--XyZ\r\nContent-Disposition: form-data; name="code"\r\n\r\nprint(1)\r\n--XyZ\r\nContent-Disposition: form-data; name="code"\r\n\r\nx\r\n--XyZ--'
like "$STATUS $(jb 'r["error"]')" "400 the field \"code\" is given twice" "a field twice: 400"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: multipart/form-data' --data-binary x "$BASE/api/run")
like "$STATUS $(jb 'r["error"]')" "400 multipart/form-data without a boundary" "no boundary parameter: 400"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: text/plain' --data-binary x "$BASE/api/run")
is "$STATUS" 415 "text/plain: 415"

# --- the token
STATUS=$(curl -sS -o "$T/b" -D "$T/h" -w '%{http_code}' -F 'code=print(1)' "$BASE/api/run")
is "$STATUS" 401 "no token: 401"
like "$(header WWW-Authenticate)" "Bearer" "with WWW-Authenticate: Bearer"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -X POST "$BASE/api/run/0123456789abcdef0123456789abcdef/cancel")
is "$STATUS" 401 "cancel without the token: 401"

# --- Stop: POST api/run/RUNID/cancel, taken by another worker
# One write a line: print() writes its pieces one by one, and the log
# events may carry them apart.
cat >"$T/slow.py" <<'EOF'
import sys, time
for i in range(60):
    sys.stdout.write("tick %d\n" % i)
    sys.stdout.flush()
    time.sleep(0.5)
EOF
# slow_run NAME: starts the slow script streaming into $T/NAME.sse (curl's
# pid in $CURL) and waits for its second line; the run id in $RID.
slow_run() {
    curl -sS -N -o "$T/$1.sse" -H "$AUTH" -H "$SSE" -F "code=<$T/slow.py" "$BASE/api/run" &
    CURL=$!
    wait_until grep -qs 'tick 1' "$T/$1.sse"
    ok $? "$1: the log streams while the script runs"
    RID=$(sed -n 's/^data: {"run_id":"\([0-9a-f]*\)".*/\1/p' "$T/$1.sse" | head -1)
}
# stop_case NAME: Stop from another request ends the run: 202, then the
# stream's result says cancelled.
stop_case() {
    slow_run "$1"
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -X POST "$BASE/api/run/$RID/cancel")
    is "$STATUS/$(jb 'r["cancelled"]')" "202/true" "$1: POST api/run/RUNID/cancel from another request: 202"
    wait "$CURL"
    cp "$T/$1.sse" "$T/b"
    is "$(ev result 'e[0]["status"]')" cancelled "$1: the stream ends with the result: status cancelled"
}
stop_case serve
SRID=$RID
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -X POST "$BASE/api/run/$SRID/cancel")
is "$STATUS" 409 "cancelling a finished run: 409"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -X POST "$BASE/api/run/0123456789abcdef0123456789abcdef/cancel")
is "$STATUS" 404 "cancelling an unknown run: 404"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" "$BASE/api/run/$SRID/cancel")
is "$STATUS" 405 "GET on the cancel URL: 405"

# --- a client that goes away: its run is cancelled
slow_run gone
GRID=$RID
kill "$CURL"
wait "$CURL" 2>/dev/null
wait_until test -f "$T/state/runs/$GRID/result.json"
is "$(jget "$T/state/runs/$GRID/result.json" 'r["status"]')" cancelled "the client disconnected: the run was cancelled"

# --- the same stream and Stop as a CGI program (nginx + fcgiwrap): every
# event reaches the client as it is written, and the cancel is taken by
# another CGI process.
if [ -x "$FCGIWRAP" ]; then
    stack_stop
    stack_start cgi || { ok 1 "the CGI server starts"; done_testing; exit 1; }
    stop_case cgi
    [ "$(grep -c '^:        ' "$T/cgi.sse")" -gt 0 ] && [ "$(grep -c '^:        ' "$T/serve.sse")" = 0 ]
    ok $? "padding comments (cgi_sse_padding) under CGI only"
else
    skip "the CGI cases: fcgiwrap is not installed (./quickstart test installs it)"
fi

done_testing
