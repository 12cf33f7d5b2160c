#!/bin/bash
# A script that asks its user, through the page's door (/api/run's event
# stream, POST api/run/RUNID/input) with curl through a real nginx in
# front of `runmyscript serve`: a question with input()'s prompt, its
# answer as the script's next line, a decline (EOF), a question unanswered
# within input_wait (EOFError, the result says no_answer), the cap
# input_questions, the answer route's guards (token, run, question, body,
# size), a FIFO the script puts in its mailbox's place, a JSON call, which
# cannot ask (EOF at once, as before); MCP 2026-07-28's multi round-trip
# requests (rounds, a tampered requestState, a decline, an answer past
# input_wait, a client without elicitation) and its tasks surface; MCP's
# legacy elicitation with the official SDK client over HTTP and stdio; and
# the page's question and answer again as a CGI program.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"

TOKEN=ask-token
STACK_CONF="auth_token = $TOKEN\ninput_wait = 8s\ninput_questions = 3"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
AUTH="Authorization: Bearer $TOKEN"
SSE="Accept: text/event-stream"

# start NAME FILE: the script FILE streaming into $T/NAME.sse (curl's pid in
# $CURL), its run id in $RID once the first question came.
start() {
    printf '%s' "${3:-}" >"$T/$1.in"
    curl -sS -N -o "$T/$1.sse" -H "$AUTH" -H "$SSE" -F "code=<$2" -F "input=<$T/$1.in" "$BASE/api/run" &
    CURL=$!
}
# question NAME N: waits for the N-th question event of NAME; its data in $Q.
asked() { local n; n=$(grep -c '^event: question' "$T/$1.sse" 2>/dev/null); [ "${n:-0}" -ge "$2" ]; }
question() {
    wait_until asked "$1" "$2"
    Q=$(grep -A1 '^event: question' "$T/$1.sse" | grep '^data: ' | sed -n "${2}p" | cut -c7-)
    RID=$(sed -n 's/^data: {"run_id":"\([0-9a-f]*\)".*/\1/p' "$T/$1.sse" | head -1)
}
qget() { "$PYTHON3" -c 'import json, sys; r = json.loads(sys.argv[1]); v = eval(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v))' "$Q" "$1"; }
answer() { # answer RID BODY: POST api/run/RID/input; status in $STATUS, body in $T/b
    STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' -d "$2" \
        "$BASE/api/run/$1/input")
}
result() { # result NAME EXPR: EXPR on the result event's data (r)
    "$PYTHON3" - "$T/$1.sse" "$2" <<'PY'
import json, sys
ev, r = None, None
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if line.startswith("event: "):
        ev = line[7:]
    elif line.startswith("data: ") and ev == "result":
        r = json.loads(line[6:])
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))
PY
}

# --- asked and answered: the given input first, then the answers
cat >"$T/two.py" <<'EOF'
first = input()
name = input("Your name? ")
age = input("Age: ")
print("got", first, name, age)
EOF
start two "$T/two.py" "given line
"
question two 1
is "$(qget 'r["question"], r["prompt"], r["input_url"]')" "[1, \"Your name? \", \"api/run/$RID/input\"]" \
    "input() past the given input: a question event with its prompt and the answer URL"
answer "$RID" '{"question": 2, "text": "x"}'
is "$STATUS" 409 "an answer to a question not asked: 409"
answer "$RID" '{"question": 1}'
is "$STATUS" 400 "an answer with neither text nor eof: 400"
answer "$RID" '{"question": 1, "text": "x", "eof": true}'
is "$STATUS" 400 "an answer with both: 400"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"question":1,"text":"x"}' \
    "$BASE/api/run/$RID/input")
is "$STATUS" 401 "an answer without the token: 401"
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" "$BASE/api/run/$RID/input")
is "$STATUS" 405 "GET on the answer URL: 405"
answer "$RID" "{\"question\": 1, \"text\": \"$(head -c 16385 /dev/zero | tr '\0' a)\"}"
is "$STATUS" 413 "an answer past 16 KiB: 413"
answer 0123456789abcdef0123456789abcdef '{"question": 1, "text": "x"}'
is "$STATUS" 404 "an answer to an unknown run: 404"
answer "$RID" '{"question": 1, "text": "Ada"}'
is "$STATUS/$(jb 'r["answered"]')" "202/true" "the answer: 202"
question two 2
is "$(qget 'r["question"], r["prompt"]')" '[2, "Age: "]' "the second question, its own prompt"
answer "$RID" '{"question": 2, "text": "36"}'
wait "$CURL"
is "$(result two 'r["status"], r["logs"].splitlines()[-1], r["input"]')" \
    '["ok", "Your name? Age: got given line Ada 36", {"questions": 2, "answered": 2, "closed": null}]' \
    "the answers were the script's next lines; the result counts them"
answer "$RID" '{"question": 2, "text": "late"}'
is "$STATUS" 409 "an answer to a finished run: 409"

# --- declined: EOF
cat >"$T/one.py" <<'EOF'
try:
    input("Anything? ")
except EOFError:
    print("EOF seen")
EOF
start decline "$T/one.py"
question decline 1
answer "$RID" '{"question": 1, "eof": true}'
is "$STATUS" 202 "a decline: 202"
wait "$CURL"
is "$(result decline 'r["status"], "EOF seen" in r["logs"], r["input"]["closed"]')" '["ok", true, "declined"]' \
    "declined: the script reads EOF, the result says declined"

# --- no answer within input_wait: EOFError, and the result says so
cat >"$T/wait.py" <<'EOF'
input("Never answered? ")
EOF
start wait "$T/wait.py"
question wait 1
wait "$CURL"
is "$(result wait 'r["status"], "EOFError" in r["logs"], "input_wait" in r["logs"], r["input"]')" \
    '["error", true, true, {"questions": 1, "answered": 0, "closed": "no_answer"}]' \
    "unanswered within input_wait: EOFError, a line in the log, input.closed no_answer"

# --- a hostile script: its run directory (its working directory) holds the
# mailbox; a FIFO in place of the answer must not hold the watch
cat >"$T/fifo.py" <<'EOF'
import os
os.mkfifo("answer")
try:
    input("Hold? ")
except EOFError:
    print("still EOF in time")
EOF
start fifo "$T/fifo.py"
question fifo 1
wait "$CURL"
is "$(result fifo 'r["status"], "still EOF in time" in r["logs"], r["input"]["closed"]')" '["ok", true, "no_answer"]' \
    "a FIFO named answer in the run directory: the watch goes on, input_wait closes the input"

# --- input_questions: the question past it is not asked
cat >"$T/many.py" <<'EOF'
n = 0
try:
    while True:
        input("q? ")
        n += 1
except EOFError:
    print("answered", n)
EOF
start many "$T/many.py"
for i in 1 2 3; do
    question many "$i"
    answer "$RID" "{\"question\": $i, \"text\": \"a$i\"}"
done
wait "$CURL"
is "$(result many 'r["status"], r["logs"].splitlines()[-1], r["input"]')" \
    '["ok", "answered 3", {"questions": 3, "answered": 3, "closed": "question_limit"}]' \
    "past input_questions: EOF, input.closed question_limit"
is "$(grep -c '^event: question' "$T/many.sse")" 3 "no more questions than input_questions"

# --- a JSON call cannot ask: EOF at once, as before
STATUS=$(curl -sS -o "$T/b" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    -d '{"code":"try:\n    input()\nexcept EOFError:\n    print(\"eof\")","timeout":10}' "$BASE/api/run")
is "$STATUS/$(jb 'r["status"], r["logs"], r["input"]')" '200/["ok", "eof\n", null]' \
    "a JSON call: EOF at once, no input in the result"

# --- MCP 2026-07-28: multi round-trip requests. A client that declares
# elicitation gets the script's question as an InputRequiredResult; its
# call again with the answer and the requestState goes on with the run.
ELICIT='"elicitation":{}'
# call2026 ARGS_JSON [EXTRA_PARAMS]: tools/call with the token and elicitation.
call2026() {
    CAPS=$ELICIT mpost tools/call "\"name\":\"run_code\",\"arguments\":$1${2:+,$2}" -H "$AUTH" -H "Mcp-Name: run_code"
}
code_json() { "$PYTHON3" -c 'import json, sys; print(json.dumps({"code": open(sys.argv[1]).read()}))' "$1"; }
call2026 "$(code_json "$T/two.py")"
is "$STATUS/$(jb 'r["result"]["resultType"], list(r["result"]["inputRequests"]), r["result"]["inputRequests"]["input-1"]["method"], r["result"]["inputRequests"]["input-1"]["params"]["message"], r["result"]["inputRequests"]["input-1"]["params"]["requestedSchema"]["required"]')" \
    '200/["input_required", ["input-1"], "elicitation/create", "The script asks for its next line of input.", ["answer"]]' \
    "2026-07-28: the script's first input() (no input given) is an InputRequiredResult with an elicitation"
STATE=$(jb 'r["result"]["requestState"]')
[[ "$STATE" =~ ^rs1\.[0-9a-f]+\.[0-9a-f]{64}$ ]]
ok $? "with a sealed requestState"
TAMPERED=$("$PYTHON3" -c 'import sys; s = sys.argv[1]; i = s.index(".") + 3; print(s[:i] + ("0" if s[i] != "0" else "1") + s[i + 1:])' "$STATE")
call2026 "$(code_json "$T/two.py")" "\"inputResponses\":{\"input-1\":{\"action\":\"accept\",\"content\":{\"answer\":\"x\"}}},\"requestState\":\"$TAMPERED\""
is "$(jb 'r["error"]["code"]')" -32602 "a tampered requestState: -32602, the run not answered"
call2026 "$(code_json "$T/two.py")" "\"inputResponses\":{\"input-1\":{\"action\":\"accept\",\"content\":{\"answer\":\"first\"}}},\"requestState\":\"$STATE\""
is "$(jb 'r["result"]["resultType"], r["result"]["inputRequests"]["input-2"]["params"]["message"]')" \
    '["input_required", "Your name? "]' "the answer goes to the run; its next input() is the next round, with its prompt"
STATE=$(jb 'r["result"]["requestState"]')
call2026 "$(code_json "$T/two.py")" "\"inputResponses\":{\"wrong\":{\"action\":\"accept\",\"content\":{\"answer\":\"x\"}}},\"requestState\":\"$STATE\""
is "$(jb 'r["result"]["resultType"], list(r["result"]["inputRequests"])')" '["input_required", ["input-2"]]' \
    "responses without the one asked for: asked again"
call2026 "$(code_json "$T/two.py")" "\"inputResponses\":{\"input-2\":{\"action\":\"accept\",\"content\":{\"answer\":\"Ada\"}}},\"requestState\":\"$STATE\""
STATE=$(jb 'r["result"]["requestState"]')
call2026 "$(code_json "$T/two.py")" "\"inputResponses\":{\"input-3\":{\"action\":\"accept\",\"content\":{\"answer\":\"36\"}}},\"requestState\":\"$STATE\""
is "$(jb 'r["result"]["resultType"], r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["logs"].splitlines()[-1], r["result"]["structuredContent"]["input"]')" \
    '["complete", "ok", "Your name? Age: got first Ada 36", {"questions": 3, "answered": 3, "closed": null}]' \
    "the last round: the run's result, every answer a line of its input"
call2026 "$(code_json "$T/two.py")" "\"inputResponses\":{\"input-3\":{\"action\":\"accept\",\"content\":{\"answer\":\"36\"}}},\"requestState\":\"$STATE\""
is "$(jb 'r["error"]["code"]')" -32602 "the same state once the result was given: -32602 (the run is gone)"
call2026 "$(code_json "$T/one.py")"
STATE=$(jb 'r["result"]["requestState"]')
call2026 "$(code_json "$T/one.py")" "\"inputResponses\":{\"input-1\":{\"action\":\"decline\"}},\"requestState\":\"$STATE\""
is "$(jb 'r["result"]["structuredContent"]["status"], "EOF seen" in r["result"]["structuredContent"]["logs"], r["result"]["structuredContent"]["input"]["closed"]')" \
    '["ok", true, "declined"]' "2026-07-28: a decline is EOF"
call2026 "$(code_json "$T/wait.py")"
STATE=$(jb 'r["result"]["requestState"]')
sleep 9 # past input_wait (8 s): the run ended without its answer
call2026 "$(code_json "$T/wait.py")" "\"inputResponses\":{\"input-1\":{\"action\":\"accept\",\"content\":{\"answer\":\"late\"}}},\"requestState\":\"$STATE\""
is "$(jb 'r["result"]["structuredContent"]["status"], "EOFError" in r["result"]["structuredContent"]["logs"], r["result"]["structuredContent"]["input"]')" \
    '["error", true, {"questions": 1, "answered": 0, "closed": "no_answer"}]' \
    "2026-07-28: an answer after input_wait finds the run ended: EOFError, no_answer"
CAPS= mpost tools/call "\"name\":\"run_code\",\"arguments\":$(code_json "$T/one.py")" -H "$AUTH" -H "Mcp-Name: run_code"
is "$(jb 'r["result"]["resultType"], "EOF seen" in r["result"]["structuredContent"]["logs"], r["result"]["structuredContent"]["input"]')" \
    '["complete", true, null]' "2026-07-28 without elicitation: EOF at once, never asked"

# The tasks surface: a client with the tasks extension gets a task, which
# waits on input_required with the script's question; tasks/update answers.
CAPS="$ELICIT,$TASKS_CAP" mpost tools/call "\"name\":\"run_code\",\"arguments\":$(code_json "$T/one.py")" -H "$AUTH" -H "Mcp-Name: run_code"
TID=$(jb 'r["result"].get("taskId", "")')
is "$(jb 'r["result"]["resultType"]')" task "2026-07-28 with the tasks extension: a script that asks makes the call a task at once"
CAPS="$ELICIT,$TASKS_CAP" mpost tasks/get "\"taskId\":\"$TID\"" -H "$AUTH" -H "Mcp-Name: $TID"
is "$(jb 'r["result"]["status"], list(r["result"]["inputRequests"]), r["result"]["inputRequests"]["input-1"]["params"]["message"]')" \
    '["input_required", ["input-1"], "Anything? "]' "tasks/get: input_required, the script's question as its input request"
CAPS="$ELICIT,$TASKS_CAP" mpost tasks/update "\"taskId\":\"$TID\",\"inputResponses\":{\"input-1\":{\"action\":\"accept\",\"content\":{\"answer\":\"yes\"}}}" \
    -H "$AUTH" -H "Mcp-Name: $TID"
is "$(jb 'r["result"]["resultType"]')" complete "tasks/update takes the answer"
for i in $(seq 100); do
    CAPS="$ELICIT,$TASKS_CAP" mpost tasks/get "\"taskId\":\"$TID\"" -H "$AUTH" -H "Mcp-Name: $TID"
    [ "$(jb 'r["result"]["status"]')" = completed ] && break
    sleep 0.2
done
is "$(jb 'r["result"]["status"], r["result"]["result"]["structuredContent"]["input"]')" \
    '["completed", {"questions": 1, "answered": 1, "closed": null}]' "the task completes with the answer taken"

# --- MCP: the official SDK client answers through elicitation, over
# Streamable HTTP and over stdio (its own TAP, counted here as one case each)
if [ -d "$top_srcdir/tests/node_modules/@modelcontextprotocol/sdk" ]; then
    NODE=$top_srcdir/tests/node_modules/.bin/node
    [ -x "$NODE" ] || NODE=node
    MCP_URL=$BASE/mcp MCP_TOKEN=$TOKEN "$NODE" "$top_srcdir/tests/e2e/sdk-ask.mjs" >"$T/sdk-http.tap" 2>&1
    ok $? "MCP over HTTP: the SDK client's elicitation answers input()"
    sed 's/^/# /' "$T/sdk-http.tap"
    RUNMYSCRIPT_STATE_DIR=$T/stdio-state RUNMYSCRIPT_INPUT_WAIT=20s "$NODE" "$top_srcdir/tests/e2e/sdk-ask.mjs" \
        >"$T/sdk-stdio.tap" 2>&1
    ok $? "MCP over stdio: the SDK client's elicitation answers input()"
    sed 's/^/# /' "$T/sdk-stdio.tap"
else
    skip "the MCP cases: the npm packages are not installed in tests/ (./quickstart test runs npm ci there)"
fi

# --- the same question and answer as a CGI program (nginx + fcgiwrap): the
# answer is taken by another CGI process, through the run's mailbox
if [ -x "$FCGIWRAP" ]; then
    stack_stop
    stack_start cgi || { ok 1 "the CGI server starts"; done_testing; exit 1; }
    start cgi "$T/one.py"
    question cgi 1
    answer "$RID" '{"question": 1, "text": "from another process"}'
    is "$STATUS" 202 "CGI: the answer, a request of its own process: 202"
    wait "$CURL"
    is "$(result cgi 'r["status"], r["input"]')" '["ok", {"questions": 1, "answered": 1, "closed": null}]' \
        "CGI: the run took it"
else
    skip "the CGI case: fcgiwrap is not installed (./quickstart test installs it)"
fi

done_testing
