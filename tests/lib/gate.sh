# gate.sh: the gate index (tests/lib/gate_index.py) for a test. Source it
# after tap.sh; gate_start serves the wheelhouse as a PEP 503 index on a
# free loopback port whose wheel downloads wait until the file GATE exists
# (each request's path goes to $TEST_TMP/gate.log), so that a test holds an
# installer in the middle of a build without guessing at timings. It sets
# GATE, GATE_PID, PORT and INDEX (the --set options that point runmyscript
# at it and at nothing else), and stops it when the test ends.
gate_start() {
    GATE=$TEST_TMP/gate.open
    "$PYTHON3" "$top_srcdir/tests/lib/gate_index.py" "$WHEELHOUSE" "$TEST_TMP/port" "$TEST_TMP/gate.log" "$GATE" &
    GATE_PID=$!
    trap 'kill "$GATE_PID" 2>/dev/null; wait "$GATE_PID" 2>/dev/null; cleanup_tmp' EXIT
    wait_until test -s "$TEST_TMP/port" || { echo "Bail out! the gate index did not start"; exit 1; }
    PORT=$(cat "$TEST_TMP/port")
    INDEX=(--set "index_url=http://127.0.0.1:$PORT/simple/" --set find_links=none)
}
