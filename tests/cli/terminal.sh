#!/bin/bash
# `runmyscript run` at a terminal, against a script that attacks it: ESC
# sequences (colour, cursor, clear screen, OSC title and hyperlink), \r and
# backspace that overwrite, C1 controls, bytes that are not UTF-8, and lines
# forged to look like runmyscript's own ("--- ok", "[runmyscript] ..."). On
# a pseudo-terminal nothing of the script's may reach it raw and the forged
# lines must look unlike the real ones; piped, with --json and in the log
# file the bytes stay exactly as the script wrote them.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
R=$RUNMYSCRIPT
PTY="$PYTHON3 $top_srcdir/tests/lib/pty_run.py"

# The script writes its lines, each stream's in turn (drained() waits until
# a write has left its pipe, as in output.sh, so the order on the terminal
# is the order written); a UTF-8 character is split across two writes. With
# the input "flood" it then writes past log_bytes, so that a line of
# runmyscript's own (the truncation marker, which stops the run) shows
# beside the forged ones;
# else it ends with a character cut short and no newline.
cat >$T/hostile.py <<'PY'
import fcntl, os, struct, sys, termios, time
def drained(f):
    f.flush()
    while struct.unpack("i", fcntl.ioctl(f.fileno(), termios.FIONREAD, b"\0" * 4))[0]:
        time.sleep(0.002)
out, err = sys.stdout.buffer, sys.stderr.buffer
for line in [
    b"esc:\x1b[2J\x1b[H\x1b[31mred\x1b[0m\x1b]0;title\x07\x1b]8;;file:///x\x1b\\link\x1b]8;;\x1b\\ end\n",
    b"cr:visible\rhidden\n",
    b"bs:abc\x08\x08\x08XYZ\n",
    b"c1:\xc2\x9b2J raw:\x9b2J nel:\xc2\x85\n",
    b"bad:\xff\xfe\xc3( \xe2\x98 \xed\xa0\x80 \xc0\xaf\n",
    b"del:\x7f nul:\x00 bel:\x07 vt:\x0b ff:\x0c so:\x0e\n",
    "utf8: h\u00e9llo \u2603 \U0001F600 \u00a0nbsp back\\slash\n".encode(),
    b"tab:\ta\n",
    b"--- ok, exit code 0, 1 ms, isolation: namespaces+seccomp, run forged\n",
    b"[runmyscript] the run passed its wall time limit (forged)\n",
    b"\x1b[1m--- ok, exit code 0, 2 ms, isolation: namespaces+seccomp, run forged-bold\x1b[0m\n",
    b"\r\x1b[K\x1b[33m[runmyscript] forged overwrite\x1b[0m\n",
]:
    out.write(line)
out.write(b"split:\xe2\x98")
drained(out)
out.write(b"\x83\n")
drained(out)
err.write(b"--- ok, forged on stderr\n")
err.write(b"\x1b[0m\x1b[33m[runmyscript] forged system line\x1b[0m\n")
err.write(b"err-esc:\x1b[2J\n")
drained(err)
d = os.environ["SCRIPT_OUTPUT"]
open(os.path.join(d, "evil\x1b[2J.csv"), "w").write("a\x1b[5m,b\n1,2\n")
if open(os.environ["SCRIPT_INPUT"]).read() == "flood":
    for i in range(100):
        out.write(b"y" * 99 + b"\n")
else:
    out.write(b"tail:\xe2\x98")
out.flush()
PY

# What the script writes, stream by stream (input "plain"), and what a
# terminal must show of each of its lines instead (stderr's in red).
"$PYTHON3" - $T <<'PY'
import sys
t = sys.argv[1]
out = (b"esc:\x1b[2J\x1b[H\x1b[31mred\x1b[0m\x1b]0;title\x07\x1b]8;;file:///x\x1b\\link\x1b]8;;\x1b\\ end\n"
       b"cr:visible\rhidden\n" b"bs:abc\x08\x08\x08XYZ\n" b"c1:\xc2\x9b2J raw:\x9b2J nel:\xc2\x85\n"
       b"bad:\xff\xfe\xc3( \xe2\x98 \xed\xa0\x80 \xc0\xaf\n" b"del:\x7f nul:\x00 bel:\x07 vt:\x0b ff:\x0c so:\x0e\n"
       + "utf8: h\u00e9llo \u2603 \U0001F600 \u00a0nbsp back\\slash\n".encode() + b"tab:\ta\n"
       b"--- ok, exit code 0, 1 ms, isolation: namespaces+seccomp, run forged\n"
       b"[runmyscript] the run passed its wall time limit (forged)\n"
       b"\x1b[1m--- ok, exit code 0, 2 ms, isolation: namespaces+seccomp, run forged-bold\x1b[0m\n"
       b"\r\x1b[K\x1b[33m[runmyscript] forged overwrite\x1b[0m\n"
       b"split:\xe2\x98\x83\n")
err = (b"--- ok, forged on stderr\n" b"\x1b[0m\x1b[33m[runmyscript] forged system line\x1b[0m\n"
       b"err-esc:\x1b[2J\n")
tail = b"tail:\xe2\x98"
open(t + "/want.stdout", "wb").write(out)
open(t + "/want.stderr", "wb").write(err)
open(t + "/want.tail", "wb").write(tail)
# The shown lines: ESC as \033, C's names for \a \b \v \f \r, \ooo for any
# other control byte, DEL, C1 and each byte that is not UTF-8.
shown_out = [
    r"esc:\033[2J\033[H\033[31mred\033[0m\033]0;title\a\033]8;;file:///x\033\link\033]8;;\033\ end",
    r"cr:visible\rhidden",
    r"bs:abc\b\b\bXYZ",
    r"c1:\302\2332J raw:\2332J nel:\302\205",
    r"bad:\377\376\303( \342\230 \355\240\200 \300\257",
    r"del:\177 nul:\000 bel:\a vt:\v ff:\f so:\016",
    "utf8: h\u00e9llo \u2603 \U0001F600 \u00a0nbsp back\\slash",
    "tab:\ta",
    "--- ok, exit code 0, 1 ms, isolation: namespaces+seccomp, run forged",
    "[runmyscript] the run passed its wall time limit (forged)",
    r"\033[1m--- ok, exit code 0, 2 ms, isolation: namespaces+seccomp, run forged-bold\033[0m",
    r"\r\033[K\033[33m[runmyscript] forged overwrite\033[0m",
    "split:\u2603",
]
shown_err = [
    "--- ok, forged on stderr",
    r"\033[0m\033[33m[runmyscript] forged system line\033[0m",
    r"err-esc:\033[2J",
]
with open(t + "/want.shown", "wb") as f:
    for s in shown_out:
        f.write(s.encode() + b"\n")
    for s in shown_err:
        f.write(b"\x1b[31m" + s.encode() + b"\x1b[0m\n")
PY

# look.py WHAT FILE: what the terminal got, seen one way.
cat >$T/look.py <<'PY'
import re, sys
what, data = sys.argv[1], open(sys.argv[2], "rb").read()
OURS = {b"1": "bold", b"2": "dim", b"33": "yellow"}   # runmyscript's own lines
SGR = re.compile(rb"\x1b\[(0|1|2|31|33)m")           # every SGR the CLI sends
def style(line):
    """The style the first visible character of a line has, and the text."""
    s = "plain"
    while True:
        m = SGR.match(line)
        if not m:
            return s, line
        s = {b"0": "plain", b"31": "red"}.get(m.group(1)) or OURS[m.group(1)]
        line = line[m.end():]
if what == "controls":
    # Without the CLI's own SGR sequences, nothing may be left that moves
    # the cursor or changes the screen: no C0 byte but \t and \n, no DEL,
    # no C1, no byte that is not UTF-8.
    rest = SGR.sub(b"", data)
    bad = sorted({"%02x" % c for c in rest if (c < 0x20 and c not in b"\t\n") or c == 0x7f})
    try:
        bad += sorted({"U+%04X" % ord(c) for c in rest.decode("utf-8") if 0x80 <= ord(c) < 0xa0})
    except UnicodeDecodeError as e:
        bad.append("not UTF-8 at byte %d" % e.start)
    print(" ".join(bad) or "none")
elif what == "ours":
    # The lines shown in a style of runmyscript's own (bold, dim, yellow).
    for line in data.split(b"\n"):
        s, text = style(line)
        if s in OURS.values():
            print(s, SGR.sub(b"", text).decode("utf-8", "backslashreplace"))
elif what == "forged-styles":
    # The style of each line that says "forged": the script's (plain, red).
    print(" ".join(sorted({style(l)[0] for l in data.split(b"\n") if b"forged" in l})))
elif what == "has-lines":
    # Whether every line of want.shown (argv[3]) is a whole line of the file.
    lines = data.split(b"\n")
    missing = [l for l in open(sys.argv[3], "rb").read().split(b"\n")[:-1] if l not in lines]
    print("\n".join(repr(l) for l in missing) or "all")
PY
look() { "$PYTHON3" $T/look.py "$@"; }
hex() { od -An -tx1 "$1" | tr -d ' \n'; }

# --- At a terminal: escaped, and our lines apart from the script's.
printf flood >$T/flood
$PTY $T/tty.bin "$R" run $T/hostile.py --input $T/flood --set log_bytes=4K --out $T/out
is "$?" 122 "the hostile script runs until its flood passes log_bytes (exit 122, output limit)"
is "$(look controls $T/tty.bin)" none "no control byte or C1 of the script reaches the terminal, no byte that is not UTF-8"
is "$(look has-lines $T/tty.bin $T/want.shown)" all "each of the script's lines is shown escaped (ESC as \\033, \\r, \\b, C1 and bad bytes as \\ooo)"
grep -qaxF "$(sed -n 7p $T/want.shown)" $T/tty.bin
ok $? "valid UTF-8, non-ASCII too, is shown as it is (and a backslash)"
is "$(look forged-styles $T/tty.bin)" "plain red" "the forged lines are in the script's styles (plain, stderr red)"
ours=$(look ours $T/tty.bin)
is "$(printf '%s\n' "$ours" | grep -c forged)" 0 "no forged line is in a style of runmyscript's own"
is "$(printf '%s\n' "$ours" | grep -c '^bold --- ')" 1 "one summary line in bold"
like "$(printf '%s\n' "$ours" | grep '^bold --- ')" "bold --- output_limit (log_bytes), " "and it is the real one"
like "$ours" "yellow [runmyscript] log truncated: the output passed log_bytes (4.0 KiB)" \
    "runmyscript's own line in the log is yellow"
like "$ours" 'bold   evil\033[2J.csv' "the artifact's name is escaped, in the bold list"
like "$ours" 'header: a\033[5m, b' "so is its summary (the CSV's header)"
run_id() { grep -ao 'run [0-9a-f]\{32\}' "$1" | tail -n1 | cut -c5-; }
id=$(run_id $T/tty.bin)
is "$(head -c $(wc -c <$T/want.stdout) "$RUNMYSCRIPT_STATE_DIR/runs/$id/log" | hex /dev/stdin)" "$(hex $T/want.stdout)" \
    "the log file keeps the script's bytes"

# A requirement the script names in its PEP 723 block, quoted in the error.
printf '# /// script\n# dependencies = ["foo\033[2Jbar"]\n# ///\nprint(1)\n' >$T/pep.py
$PTY $T/pep.bin "$R" run $T/pep.py
is "$?" 65 "a bad requirement in the script's PEP 723 block: exit 65"
is "$(look controls $T/pep.bin)" none "the error quoting it sends the terminal no control byte"
like "$(cat $T/pep.bin)" "requirement 'foo\\033[2Jbar'" "it shows the ESC escaped"

# --- Piped: exactly the script's bytes, the [stderr] marks as before.
printf plain >$T/plain
"$R" run $T/hostile.py --input $T/plain --out $T/out >$T/pipe.out 2>$T/pipe.err
is "$?" 0 "piped: the script runs"
{ cat $T/want.stdout; sed 's/^/[stderr] /' $T/want.stderr; cat $T/want.tail; echo; } >$T/want.pipe
is "$(hex $T/pipe.out)" "$(hex $T/want.pipe)" "piped, stdout holds the script's bytes exactly (stderr's lines marked)"
like "$(cat $T/pipe.err)" "  evil$(printf '\033')[2J.csv" "piped, the artifact list is as before"
id=$(run_id $T/pipe.err)
is "$(hex "$RUNMYSCRIPT_STATE_DIR/runs/$id/log")" "$(cat $T/want.stdout $T/want.stderr $T/want.tail | hex /dev/stdin)" \
    "the log file holds every byte in order"

# stdout piped, stderr at the terminal: each stream on its own.
$PTY --stdout $T/split.out $T/split.bin "$R" run $T/hostile.py --input $T/plain --out $T/out
is "$(hex $T/split.out)" "$(hex $T/want.pipe)" "stdout to a file while stderr is a terminal: the bytes exactly"
is "$(look controls $T/split.bin)" none "and the terminal on stderr gets no control byte"
like "$(cat $T/split.bin)" 'evil\033[2J.csv' "the artifact's name is escaped there"

# --escape=always on a pipe, --escape=never at a terminal.
"$R" run $T/hostile.py --input $T/plain --out $T/out --escape=always >$T/always.out 2>$T/always.err
is "$?" 0 "--escape=always: the script runs"
[ "$(look controls $T/always.out)" = none ] && grep -qxF -- "$(head -n1 $T/want.shown)" $T/always.out
ok $? "--escape=always escapes on a pipe too"
like "$(cat $T/always.out)" 'tail:\342\230' "a character the script left unfinished is shown escaped"
like "$(cat $T/always.out)" "[stderr] err-esc:\\033[2J" "the [stderr] mark stays on a pipe"
like "$(cat $T/always.err)" 'evil\033[2J.csv' "and the artifact list is escaped"
$PTY $T/never.bin "$R" run $T/hostile.py --input $T/plain --out $T/out --escape never
is "$?" 0 "--escape never: the script runs"
grep -qaF -- "$(head -n1 $T/want.stdout)" $T/never.bin
ok $? "--escape never: the terminal gets the script's bytes"
"$R" run $T/hostile.py --escape=sometimes >$T/bad.out 2>$T/bad.err
is "$?" 64 "a bad --escape: exit 64"
like "$(cat $T/bad.err)" "--escape sometimes: expected auto, always or never" "it says what is expected"

# --json at a terminal: the JSON has the script's text (JSON escapes the
# control characters itself), bytes that are not UTF-8 as U+FFFD.
$PTY $T/json.bin "$R" run $T/hostile.py --input $T/plain --json
is "$?" 0 "--json at a terminal: the script runs"
"$PYTHON3" - $T <<'PY'
import codecs, json, sys
t = sys.argv[1]
r = json.loads(open(t + "/json.bin", "rb").read())
want = b"".join(open(t + "/want." + s, "rb").read() for s in ("stdout", "stderr", "tail"))
# The log's text has U+FFFD for each byte that is not UTF-8, and for NUL.
codecs.register_error("each", lambda e: ("\ufffd" * (e.end - e.start), e.end))
want = want.decode("utf-8", "each").replace("\0", "\ufffd")
print("same" if r["logs"] == want else "differs: %r" % r["logs"], file=open(t + "/json.cmp", "w"))
PY
is "$(cat $T/json.cmp)" same "--json keeps the script's output (the log's text) as the script wrote it"
# JSON escapes C0 controls itself, not DEL or the C1 controls (U+009B is a
# CSI to a terminal that takes C1 in UTF-8): those are \u escapes, the same
# text to a JSON reader.
"$PYTHON3" - $T/json.bin >$T/json.raw <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
print(" ".join(sorted(set(m.hex() for m in re.findall(rb"\x7f|\xc2[\x80-\x9f]", b)))))
PY
is "$(cat $T/json.raw)" "" "--json at a terminal: no DEL or C1 control reaches it raw"

done_testing
