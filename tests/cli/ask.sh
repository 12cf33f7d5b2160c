#!/bin/bash
# `runmyscript run` passes its own stdin through to a script that asks:
# past its input, the script's input() reads the CLI's stdin line by line
# (a pipe, a file, a terminal a person types at), and its end is the
# script's EOF; /dev/null, or a stdin that is the script or its input
# (`-`), is never asked.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
R=$RUNMYSCRIPT
jget() { "$PYTHON3" -c 'import json, sys; r = json.load(open(sys.argv[1])); v = eval(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v))' "$1" "$2"; }

cat >$T/ask.py <<'PY'
name = input("Name? ")
try:
    more = input("More? ")
except EOFError:
    more = "(EOF)"
print("hello", name, more)
PY
printf 'Ada\nLovelace\n' | "$R" run $T/ask.py --json >$T/pipe.json
is "$(jget $T/pipe.json 'r["logs"].splitlines()[-1], r["input"]')" \
    '["Name? More? hello Ada Lovelace", {"questions": 2, "answered": 2, "closed": null}]' \
    "a pipe: each line answers one input()"
printf 'Ada\n' | "$R" run $T/ask.py --json >$T/short.json
is "$(jget $T/short.json 'r["logs"].splitlines()[-1], r["input"]["closed"]')" '["hello Ada (EOF)", "declined"]' \
    "the pipe's end: the script's EOF"
printf 'Grace\nHopper\n' >$T/answers.txt
"$R" run $T/ask.py --json <$T/answers.txt >$T/file.json
is "$(jget $T/file.json 'r["logs"].splitlines()[-1]')" "Name? More? hello Grace Hopper" "a file on stdin: the same"
"$R" run $T/ask.py --json </dev/null >$T/null.json
is "$(jget $T/null.json '"EOFError" in r["logs"], r["input"]')" '[true, null]' "/dev/null: never asked, EOF as before"
printf 'given\n' | "$R" run $T/ask.py --input - --json >$T/dash.json
is "$(jget $T/dash.json 'r["logs"].splitlines()[-1], r["input"]')" '["Name? More? hello given (EOF)", null]' \
    "stdin as the input (--input -): the input alone, never asked"

# A person at a terminal: the prompt shows, the typed line answers it.
"$PYTHON3" - "$R" "$T/ask.py" >$T/tty.out 2>&1 <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "run", sys.argv[2]])
seen, typed, end = b"", 0, time.time() + 60
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
    if typed == 0 and b"Name? " in seen:
        os.write(fd, b"Ada\n"); typed = 1
    if typed == 1 and b"More? " in seen:
        os.write(fd, b"\x04"); typed = 2  # Ctrl-D: the end of the terminal's input
_, status = os.waitpid(pid, 0)
print(seen.decode(errors="replace"))
print("exit", os.waitstatus_to_exitcode(status))
PY
like "$(cat $T/tty.out)" "hello Ada (EOF)" "a terminal: the prompt shows, the typed line answers it, Ctrl-D is EOF"
like "$(cat $T/tty.out)" "exit 0" "and the run ends ok"
done_testing
