#!/bin/bash
# The log: stdout and stderr in order with their streams, the log_bytes cap
# and its marker, binary output, output without newlines.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP

# The order between the two streams is the order in which runmyscript reads
# them: the script waits until each line has left its pipe (FIONREAD says 0)
# before it writes to the other stream, so the test does not depend on how
# fast a loaded machine schedules the reader.
cat >$T/inter.py <<'PY'
import fcntl, struct, sys, termios, time
def drained(f):
    while struct.unpack("i", fcntl.ioctl(f.fileno(), termios.FIONREAD, b"\0" * 4))[0]:
        time.sleep(0.002)
for i in range(1, 6):
    print("out", i, flush=True)
    drained(sys.stdout)
    print("err", i, file=sys.stderr, flush=True)
    drained(sys.stderr)
PY
run_json $T/inter.json $T/inter.py
want=$(printf 'out 1\nerr 1\nout 2\nerr 2\nout 3\nerr 3\nout 4\nerr 4\nout 5\nerr 5\n')
is "$(jget $T/inter.json 'r["logs"]')" "$want" "stdout and stderr interleave in order"
"$RUNMYSCRIPT" run $T/inter.py >$T/inter.txt 2>/dev/null
is "$(cat $T/inter.txt)" "$(printf 'out 1\n[stderr] err 1\nout 2\n[stderr] err 2\nout 3\n[stderr] err 3\nout 4\n[stderr] err 4\nout 5\n[stderr] err 5\n')" \
    "the CLI marks the stderr lines"

cat >$T/flood.py <<'PY'
import os, sys
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "before.txt"), "w").write("written first\n")
line = "y" * 99 + "\n"
for i in range(50000):          # 5 MB
    sys.stdout.write(line)
sys.stdout.flush()
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "after.txt"), "w").write("never reached\n")
PY
run_json $T/flood.json $T/flood.py
is "$(jget $T/flood.json 'r["status"], r["limit"]')" '["output_limit", "log_bytes"]' \
    "a flood of output: the run is stopped at log_bytes (status output_limit, limit log_bytes)"
is "$(jget $T/flood.json 'r["logs_truncated"]')" true "logs_truncated"
like "$(jget $T/flood.json 'r["logs"]')" "[runmyscript] log truncated: the output passed log_bytes (1.0 MiB); the run is stopped" "the marker is in the log and says the run is stopped"
is "$(jget $T/flood.json 'len(r["logs"].encode()) < 1048576 + 300')" true "the log is cut near 1 MiB"
is "$(jget $T/flood.json '[a["path"] for a in r["artifacts"]]')" '["before.txt"]' "what it wrote before the flood is collected; it ran no further"
run_json $T/small.json $T/flood.py --set log_bytes=1K
is "$(jget $T/small.json 'len(r["logs"].split("\n[runmyscript]")[0])')" 1024 "log_bytes=1K keeps exactly 1024 bytes of output"
like "$(jget $T/small.json 'r["logs"]')" "log_bytes (1.0 KiB)" "and names the limit"
# A runaway print loop never ends on its own: it must end at log_bytes, not
# at its timeout (which it would reach, status timeout, were it not stopped).
printf 'while True:\n    print("runaway")\n' >$T/runaway.py
run_json $T/runaway.json $T/runaway.py --timeout 120
is "$(jget $T/runaway.json 'r["status"], r["limit"]')" '["output_limit", "log_bytes"]' \
    "while True: print(...) is stopped once log_bytes is reached, not at its timeout"
"$RUNMYSCRIPT" run $T/runaway.py --set log_bytes=1K >/dev/null 2>$T/runaway.err
is "$?" 122 "the CLI exits 122 (output limit)"
like "$(cat $T/runaway.err)" "--- output_limit (log_bytes)" "and its summary names the limit"

printf 'import sys\nsys.stdout.buffer.write(b"bin:\\xff\\xfe\\x00\\x80 end")\nsys.stdout.flush()\n' >$T/binary.py
run_json $T/binary.json $T/binary.py
ok $? "binary output"
is "$(jget $T/binary.json 'r["logs"]')" "bin:$(printf '\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd') end" \
    "non-UTF-8 bytes become U+FFFD in valid JSON"
id=$(jget $T/binary.json 'r["run_id"]')
is "$(od -An -tx1 "$RUNMYSCRIPT_STATE_DIR/runs/$id/log" | tr -d ' \n')" "62696e3afffe008020656e64" "the log file keeps the raw bytes"

printf 'print("no newline", end="")\n' >$T/nonl.py
run_json $T/nonl.json $T/nonl.py
is "$(jget $T/nonl.json 'r["logs"]')" "no newline" "output without a newline"
"$RUNMYSCRIPT" run $T/nonl.py >$T/nonl.txt 2>/dev/null
is "$(cat $T/nonl.txt)" "no newline" "the CLI ends the last line for the terminal"

done_testing
